//! Whether this host may use a plugin library's root module: the layout
//! check in the direction the compatibility policy needs, then the API
//! version. The host's loader calls [`accept`]; the policy itself is in the
//! crate documentation.
//!
//! abi_stable's own `LibHeader::check_layout` accepts a library whose types
//! are a *superset* of the loader's (a newer library in an older
//! application) and refuses one whose types are a subset, which is exactly
//! the old plugin in a newer host this crate promises to load. So the check
//! runs with the roles swapped: the plugin's layout is the "interface" that
//! the host's layout must extend (appended prefix fields, appended
//! non-exhaustive variants), and a plugin whose layout extends the host's
//! is recognized as built against a newer minor and refused by version.
//!
//! Each plugin is checked against the host alone, with checking state of
//! its own, never against the plugins loaded before it. abi_stable's
//! process-wide state merges every library's view of a vtable into one, and
//! with two plugins of different minors that merge compares their
//! non-exhaustive enums with each other in whichever order it finds them
//! (a 1.0 and a 1.1 plugin refuse each other). Checking against the host is
//! enough: every accepted layout is a prefix of the host's, so any two of
//! them agree on what they share, and what one lacks is caught per value
//! (missing vtable entries fall back to defaults, unknown variants do not
//! decode).

use abi_stable::StableAbi;
use abi_stable::abi_stability::abi_checking::{
    AbiInstabilityErrors, CheckingGlobals, check_layout_compatibility_with_globals,
};
use abi_stable::library::LibHeader;

use crate::API_VERSION;
use crate::root::PluginModuleRef;

/// Why a plugin library's root module is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Its types differ from this host's in a way no version of the policy
    /// allows; abi_stable's full report, host layout expected, plugin
    /// layout found.
    #[error("ABI layout mismatch: {0}")]
    Layout(String),
    /// Built against a plugin API this host does not accept: another
    /// major, or a newer minor of this one.
    #[error("built against plugin API {found}, this host speaks {API_VERSION}")]
    Api {
        /// The version the plugin was built against.
        found: String,
    },
    /// Anything else abi_stable reports (e.g. the root module failed to
    /// initialize).
    #[error("{0}")]
    Other(String),
}

/// `major.minor` of a version string, if it has them.
fn major_minor(version: &str) -> Option<(u64, u64)> {
    let mut parts = version.split('.');
    let major = parts.next()?.trim().parse().ok()?;
    let minor = parts.next()?.trim().parse().ok()?;
    Some((major, minor))
}

/// Whether a plugin built against API `plugin` may run in a host speaking
/// `host`: same major, and a minor no newer than the host's.
pub fn api_accepts(host: &str, plugin: &str) -> bool {
    match (major_minor(host), major_minor(plugin)) {
        (Some((h_major, h_minor)), Some((p_major, p_minor))) => {
            h_major == p_major && p_minor <= h_minor
        }
        _ => false,
    }
}

/// abi_stable's report, as `LibraryError::AbiInstability` would print it.
fn layout_report(errors: AbiInstabilityErrors) -> String {
    errors.to_string()
}

/// Checks a library's root module against this host and returns it.
///
/// Accepted: a plugin built against this API or an older minor of its
/// major (its layout is a prefix of this host's). Refused: another major,
/// a newer minor, or any other layout difference.
pub fn accept(header: &'static LibHeader) -> Result<PluginModuleRef, Refusal> {
    let Some(plugin) = header.layout() else {
        return Err(Refusal::Other(
            "the library carries no type layout to check (built with `unsafe_no_layout_constant`)"
                .into(),
        ));
    };
    let host = <PluginModuleRef as StableAbi>::LAYOUT;
    let older = check_layout_compatibility_with_globals(plugin, host, &CheckingGlobals::new());
    if let Err(older) = older {
        // Not the same or an older minor. A newer one?
        let newer = check_layout_compatibility_with_globals(host, plugin, &CheckingGlobals::new());
        if let Err(other) = newer {
            return Err(Refusal::Layout(layout_report(other)));
        }
        // SAFETY: the host's layout is a prefix of the plugin's (checked
        // just above), so every field the host reads exists with the type
        // it expects.
        let module = unsafe { header.init_root_module_with_unchecked_layout::<PluginModuleRef>() }
            .map_err(|e| Refusal::Other(e.to_string()))?;
        let found = module.api_version().as_str().to_string();
        return match api_accepts(API_VERSION, &found) {
            // Claims a version this host accepts with a layout this host
            // does not have: a build of some other copy of the API.
            true => Err(Refusal::Layout(layout_report(older))),
            false => Err(Refusal::Api { found }),
        };
    }
    // SAFETY: the plugin's layout is a prefix of the host's (checked
    // above): fields and variants the plugin lacks are read through
    // `missing_field(option)` accessors, vtable default methods and
    // non-exhaustive decoding, never as memory that is not there.
    let module = unsafe { header.init_root_module_with_unchecked_layout::<PluginModuleRef>() }
        .map_err(|e| Refusal::Other(e.to_string()))?;
    let found = module.api_version().as_str().to_string();
    if !api_accepts(API_VERSION, &found) {
        return Err(Refusal::Api { found });
    }
    Ok(module)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_accepts_its_own_and_older_minors_of_its_major_only() {
        assert!(api_accepts("1.1.0", "1.1.0"));
        assert!(api_accepts("1.1.0", "1.0.0"));
        assert!(api_accepts("1.1.0", "1.1.7"));
        assert!(!api_accepts("1.1.0", "1.2.0"));
        assert!(!api_accepts("1.1.0", "2.0.0"));
        assert!(!api_accepts("2.0.0", "1.9.0"));
        assert!(!api_accepts("1.1.0", "one"));
        assert!(!api_accepts("1.1.0", "1"));
        assert!(!api_accepts("1.1.0", ""));
    }

    #[test]
    fn this_build_accepts_itself() {
        assert!(api_accepts(API_VERSION, API_VERSION));
    }
}
