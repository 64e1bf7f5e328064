//! The plugin root module: what a `.so` exports and what a built-in hands
//! the host. The loader checks its layout and [`API_VERSION`] (see
//! [`crate::compat`]) before calling anything in it.
//!
//! The module is an abi_stable prefix type: fields up to the one marked
//! `#[sabi(last_prefix_field)]` exist in every plugin of the major; a minor
//! appends fields after it, and their accessors on [`PluginModuleRef`]
//! return `None` for a plugin built before the field existed
//! (`missing_field(option)`). [`PluginDescriptor`] is a plain struct and
//! never changes within a major: what a plugin declares about itself in a
//! later minor goes into a new root-module field.
//!
//! [`API_VERSION`]: crate::API_VERSION

use abi_stable::{
    StableAbi, declare_root_module_statics,
    library::RootModule,
    package_version_strings,
    sabi_types::VersionStrings,
    std_types::{RResult, RStr, RString, RVec},
};

use crate::ffi::HostContextBox;

/// What a plugin says about itself before it is applied.
#[repr(C)]
#[derive(StableAbi, Clone, Debug)]
pub struct PluginDescriptor {
    /// The plugin's name (what a manifest `name:` refers to for built-ins).
    pub name: RString,
    /// The plugin's own version.
    pub version: RString,
    /// Services the plugin cannot work without.
    pub required_services: RVec<RString>,
    /// Services the plugin uses when present (looked up at call time).
    pub optional_services: RVec<RString>,
    /// JSON Schema of the plugin's config, canonical JSON text.
    pub config_schema: RString,
    /// The config with every default filled in, canonical JSON text.
    pub default_config: RString,
    /// Test-only layout change: lets the loader tests prove a plugin built
    /// against a different type layout is refused.
    #[cfg(feature = "__fixture-abi-changed")]
    pub fixture_extra: u64,
}

/// The root module every plugin exports.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = PluginModuleRef)))]
#[sabi(missing_field(option))]
pub struct PluginModule {
    /// The [`API_VERSION`](crate::API_VERSION) the plugin was built against.
    pub api_version: RStr<'static>,
    /// Describes the plugin.
    pub describe: extern "C" fn() -> PluginDescriptor,
    /// Applies the plugin with its config (JSON text): registers listeners,
    /// guards, tools and services on the context. Errors are data.
    #[sabi(last_prefix_field)]
    pub apply: extern "C" fn(ctx: HostContextBox, config: RString) -> RResult<(), RString>,
    /// One line on what the plugin does; empty for none (since 1.1).
    pub description: RStr<'static>,
    /// Test-only: a field from a minor this crate has not reached.
    #[cfg(feature = "__fixture-future-minor")]
    #[doc(hidden)]
    pub fixture_future: u64,
}

impl RootModule for PluginModuleRef {
    declare_root_module_statics! {PluginModuleRef}
    const BASE_NAME: &'static str = "dsh_plugin";
    const NAME: &'static str = "dsh_plugin";
    const VERSION_STRINGS: VersionStrings = package_version_strings!();
}
