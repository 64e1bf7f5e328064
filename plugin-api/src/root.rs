//! The plugin root module: what a `.so` exports and what a built-in hands
//! the host. The loader checks its layout (abi_stable) and [`API_VERSION`]
//! before calling anything in it.
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
#[sabi(missing_field(panic))]
pub struct PluginModule {
    /// The [`API_VERSION`](crate::API_VERSION) the plugin was built against.
    pub api_version: RStr<'static>,
    /// Describes the plugin.
    pub describe: extern "C" fn() -> PluginDescriptor,
    /// Applies the plugin with its config (JSON text): registers listeners,
    /// guards, tools and services on the context. Errors are data.
    #[sabi(last_prefix_field)]
    pub apply: extern "C" fn(ctx: HostContextBox, config: RString) -> RResult<(), RString>,
}

impl RootModule for PluginModuleRef {
    declare_root_module_statics! {PluginModuleRef}
    const BASE_NAME: &'static str = "dsh_plugin";
    const NAME: &'static str = "dsh_plugin";
    const VERSION_STRINGS: VersionStrings = package_version_strings!();
}
