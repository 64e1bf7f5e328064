//! [`PluginHost`]: applies the manifest's plugins and remembers what each
//! one became. Every plugin applies into an [`Instance`] of its own, off to
//! the side; the host then publishes all of them as one registry.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RArc, RResult, RString};
use dsh_plugin_api::ffi::HostContext_TO;
use dsh_plugin_api::{PluginDescriptor, PluginModuleRef, Seam};
use serde::Serialize;

use super::context::{Draft, HostCore, PluginContext};
use super::instance::Instance;
use super::snapshot::Registry;
use super::{builtin, loader};
use crate::config::{Manifest, PluginEntry, PluginRef};
use crate::seams::{CallPolicy, Owner};

/// Where a plugin came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "at", rename_all = "lowercase")]
pub enum PluginSource {
    /// Compiled into the binary.
    Builtin(String),
    /// A `.so` file.
    Library(PathBuf),
}

impl std::fmt::Display for PluginSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PluginSource::Builtin(_) => f.write_str("builtin"),
            PluginSource::Library(p) => write!(f, "{}", p.display()),
        }
    }
}

/// What became of a plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", content = "reason", rename_all = "lowercase")]
pub enum PluginStatus {
    /// Applied and live.
    Applied,
    /// `disabled: true` in the manifest.
    Disabled,
    /// Not applied: a required service is missing.
    Skipped(String),
    /// Refused or failed to apply.
    Failed(String),
    /// A reload's new entry failed to apply (or was skipped); the instance
    /// applied before keeps running with its previous config.
    Kept(String),
}

impl PluginStatus {
    /// Whether an instance of the plugin is running.
    pub fn is_running(&self) -> bool {
        matches!(self, PluginStatus::Applied | PluginStatus::Kept(_))
    }
}

/// One plugin as the host sees it.
#[derive(Debug, Clone, Serialize)]
pub struct PluginRecord {
    /// Manifest id.
    pub id: String,
    /// Built-in or file.
    pub source: PluginSource,
    /// The plugin's own name (empty when it could not be loaded).
    pub name: String,
    /// The plugin's version.
    pub version: String,
    /// What the plugin says it does (plugins built against API 1.1 on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Outcome.
    #[serde(flatten)]
    pub status: PluginStatus,
    /// Seams it listens on.
    pub seams: Vec<String>,
    /// Tools it registered.
    pub tools: Vec<String>,
    /// Services it provides.
    pub services: Vec<String>,
    /// Position in load order.
    #[serde(skip)]
    pub position: u32,
    /// Its config as applied.
    #[serde(skip)]
    pub config: serde_json::Value,
    /// What the entry asked for (to tell on reload whether it changed).
    #[serde(skip)]
    pub(crate) entry: Option<PluginEntry>,
    /// Modification time and size of a library when it was loaded.
    #[serde(skip)]
    pub(crate) stamp: Option<(std::time::SystemTime, u64)>,
    /// What it registered, while it runs.
    #[serde(skip)]
    pub(crate) instance: Option<Arc<Instance>>,
}

impl PluginRecord {
    /// The record of an entry not applied yet.
    fn pending(entry: &PluginEntry) -> PluginRecord {
        let source = match &entry.plugin {
            PluginRef::Builtin(n) => PluginSource::Builtin(n.clone()),
            PluginRef::Library(p) => PluginSource::Library(p.clone()),
        };
        PluginRecord {
            id: entry.id.clone(),
            source,
            name: String::new(),
            version: String::new(),
            description: None,
            status: PluginStatus::Disabled,
            seams: Vec::new(),
            tools: Vec::new(),
            services: Vec::new(),
            position: entry.index as u32,
            config: entry.config.clone(),
            entry: None,
            stamp: None,
            instance: None,
        }
    }

    /// Records what `instance` registered.
    fn applied(&mut self, instance: Arc<Instance>) {
        self.status = PluginStatus::Applied;
        self.seams = instance
            .seams()
            .iter()
            .map(|s| s.name().to_string())
            .collect();
        self.tools = instance.tool_names();
        self.services = instance.service_names();
        self.instance = Some(instance);
    }
}

/// The next registry while it is built: the instances placed so far, and
/// the registry they make (what the next plugin to apply sees).
pub(crate) struct Staging {
    instances: Vec<Arc<Instance>>,
    pub(crate) before: Arc<Registry>,
}

impl Staging {
    pub(crate) fn new(instances: Vec<Arc<Instance>>) -> Staging {
        let before = Arc::new(Registry::build(instances.clone()));
        Staging { instances, before }
    }

    pub(crate) fn push(&mut self, instance: &Arc<Instance>) {
        self.instances.push(instance.clone());
        self.before = Arc::new(Registry::build(self.instances.clone()));
    }
}

/// How serious a [`Problem`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Shown, but `dsh check` still passes.
    Warning,
    /// Something the manifest asks for is not in effect: `dsh check` fails.
    Error,
}

/// A problem to show the operator: one line each.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The plugin id, when the problem is about one.
    pub plugin: Option<String>,
    /// One line.
    pub message: String,
    /// Error or warning.
    pub severity: Severity,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(id) = &self.plugin {
            write!(f, "plugin `{id}`: ")?;
        }
        if self.severity == Severity::Warning {
            f.write_str("warning: ")?;
        }
        f.write_str(&self.message)
    }
}

/// The loaded plugins of one host.
pub struct PluginHost {
    pub(crate) core: Arc<HostCore>,
    pub(crate) manifest_path: PathBuf,
    pub(crate) records: Vec<PluginRecord>,
    pub(crate) problems: Vec<Problem>,
    /// Library files already mapped into this process.
    pub(crate) mapped: std::collections::HashSet<PathBuf>,
}

impl PluginHost {
    /// A host with nothing loaded.
    pub fn new(core: Arc<HostCore>, manifest_path: PathBuf) -> Self {
        // Every host runs `http` and `socket` hooks; a manifest's `hooks:`
        // settings replace the defaults when it loads.
        crate::hooks::install(&core, &crate::config::HookSettings::default());
        PluginHost {
            core,
            manifest_path,
            records: Vec::new(),
            problems: Vec::new(),
            mapped: Default::default(),
        }
    }

    /// The shared core plugins registered into.
    pub fn core(&self) -> &Arc<HostCore> {
        &self.core
    }

    /// Every plugin, in load order.
    pub fn records(&self) -> &[PluginRecord] {
        &self.records
    }

    /// Every problem so far, in order.
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// Whether every enabled plugin applied (a plugin that kept its
    /// previous instance did not) and no error (warnings aside) was
    /// reported.
    pub fn all_applied(&self) -> bool {
        self.problems
            .iter()
            .all(|p| p.severity == Severity::Warning)
            && self
                .records
                .iter()
                .all(|r| matches!(r.status, PluginStatus::Applied | PluginStatus::Disabled))
    }

    /// Applies every entry of `manifest`, then every drop-in library, and
    /// publishes them together.
    pub fn load_manifest(&mut self, manifest: &Manifest) {
        crate::hooks::install(&self.core, &manifest.hooks);
        let previous = self.instances();
        let mut staging = Staging::new(self.core.view().instances().to_vec());
        for entry in self.desired_entries(manifest) {
            let record = self.build_entry(&entry, &staging.before);
            if let Some(instance) = &record.instance {
                staging.push(instance);
            }
            self.records.push(record);
        }
        self.publish(&previous);
    }

    /// The instances of this host's running plugins.
    pub(crate) fn instances(&self) -> Vec<Arc<Instance>> {
        self.records
            .iter()
            .filter_map(|r| r.instance.clone())
            .collect()
    }

    /// Publishes a registry of this host's running plugins plus whatever
    /// others mounted, in place of `previous` (this host's instances as of
    /// the last publish), in one swap.
    pub(crate) fn publish(&self, previous: &[Arc<Instance>]) {
        let ours = self.instances();
        self.core.publish(|current| {
            let mut next: Vec<Arc<Instance>> = current
                .instances()
                .iter()
                .filter(|i| !previous.iter().any(|p| Arc::ptr_eq(p, i)))
                .cloned()
                .collect();
            next.extend(ours);
            (Some(Registry::build(next)), ())
        });
    }

    /// The manifest's entries followed by one entry per drop-in library.
    pub(crate) fn desired_entries(&mut self, manifest: &Manifest) -> Vec<PluginEntry> {
        let mut entries: Vec<PluginEntry> = manifest.plugins.clone();
        let mut position = manifest.plugins.len();
        let taken: Vec<PathBuf> = manifest
            .plugins
            .iter()
            .filter_map(|e| match &e.plugin {
                PluginRef::Library(p) => Some(p.clone()),
                PluginRef::Builtin(_) => None,
            })
            .collect();
        for dir in &manifest.plugin_dirs {
            let libraries = match loader::libraries_in(dir) {
                Ok(libs) => libs,
                Err(e) => {
                    self.problem(
                        None,
                        format!("{}: plugin_dirs: {e}", self.manifest_path.display()),
                    );
                    continue;
                }
            };
            for path in libraries.into_iter().filter(|p| !taken.contains(p)) {
                let id = crate::config::manifest_library_id(&path);
                if entries.iter().any(|e| e.id == id) {
                    self.problem(
                        Some(&id),
                        format!("{}: duplicate id from plugin_dirs; skipped", path.display()),
                    );
                    continue;
                }
                let entry = PluginEntry {
                    id,
                    plugin: PluginRef::Library(path),
                    config: serde_json::json!({}),
                    disabled: false,
                    index: position,
                    listener_timeout: Some(crate::config::DEFAULT_LISTENER_TIMEOUT),
                };
                position += 1;
                entries.push(entry);
            }
        }
        entries
    }

    pub(crate) fn problem(&mut self, plugin: Option<&str>, message: String) {
        self.push_problem(plugin, message, Severity::Error);
    }

    fn push_problem(&mut self, plugin: Option<&str>, message: String, severity: Severity) {
        let problem = Problem {
            plugin: plugin.map(str::to_string),
            message,
            severity,
        };
        let line = match (&problem.plugin, severity) {
            // The plugin is a field of the log line; the rest is the message.
            (Some(_), Severity::Warning) => format!("warning: {}", problem.message),
            (Some(_), Severity::Error) => problem.message.clone(),
            (None, _) => problem.to_string(),
        };
        match plugin {
            Some(id) => tracing::warn!(plugin = %id, "{line}"),
            None => tracing::warn!("{line}"),
        }
        self.problems.push(problem);
    }

    /// Lists the config problems a plugin reported while it applied.
    fn take_reported(&mut self, plugin: &str, inbox: &super::context::ProblemInbox) {
        let reported = inbox
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .unwrap_or_default();
        for p in reported {
            // A severity added after this host was built counts as an
            // error: the check should not pass on what it cannot read.
            let severity = match p.severity {
                dsh_plugin_api::ProblemSeverity::Warning => Severity::Warning,
                _ => Severity::Error,
            };
            self.push_problem(Some(plugin), p.to_string(), severity);
        }
    }

    fn resolve(&self, entry: &PluginEntry) -> Result<(PluginSource, PluginModuleRef), String> {
        match &entry.plugin {
            PluginRef::Builtin(name) => match builtin::lookup(name) {
                Some(module) => Ok((PluginSource::Builtin(name.clone()), module)),
                None => Err(format!(
                    "{}: key `name`: no built-in plugin `{name}` (built-ins: {})",
                    self.manifest_path.display(),
                    builtin::names().join(", ")
                )),
            },
            PluginRef::Library(path) => {
                // A file mapped before may have been rebuilt: map a fresh
                // copy so its new code runs (the old mapping stays).
                let load_from = if self.mapped.contains(path) {
                    super::reload::fresh_copy(self.core.state_dir(), path)?
                } else {
                    path.clone()
                };
                loader::load_library(&load_from)
                    .map(|m| (PluginSource::Library(path.clone()), m))
                    .map_err(|e| e.to_string())
            }
        }
    }

    /// Loads and applies one entry and publishes it.
    pub fn load_entry(&mut self, entry: &PluginEntry) {
        let previous = self.instances();
        let record = self.build_entry(entry, &self.core.view());
        self.records.push(record);
        self.publish(&previous);
    }

    /// Loads and applies one entry off to the side, checked against the
    /// plugins `before` it; the record holds the instance it became.
    pub(crate) fn build_entry(
        &mut self,
        entry: &PluginEntry,
        before: &Arc<Registry>,
    ) -> PluginRecord {
        let mut record = PluginRecord::pending(entry);
        record.entry = Some(entry.clone());
        record.stamp = super::reload::stamp_of(&entry.plugin);
        if entry.disabled {
            return record;
        }
        let outcome = self.resolve(entry).and_then(|(source, module)| {
            if let PluginSource::Library(path) = &source {
                self.mapped.insert(path.clone());
            }
            record.source = source;
            self.apply_module(entry, module, &mut record, before)
        });
        if let Err(message) = outcome {
            record.status = PluginStatus::Failed(message.clone());
            self.problem(Some(&entry.id), message);
        }
        record
    }

    /// Applies `module` into an instance of its own. Skipped (a required
    /// service is missing) is not an error; the record says so.
    fn apply_module(
        &mut self,
        entry: &PluginEntry,
        module: PluginModuleRef,
        record: &mut PluginRecord,
        before: &Arc<Registry>,
    ) -> Result<(), String> {
        let descriptor: PluginDescriptor = (module.describe())();
        record.name = descriptor.name.to_string();
        record.version = descriptor.version.to_string();
        // A root-module field since API 1.1: `None` from older plugins.
        record.description = module
            .description()
            .map(|d| d.to_string())
            .filter(|d| !d.is_empty());
        if let Some(missing) = descriptor
            .required_services
            .iter()
            .find(|s| before.services.get(s).is_none())
        {
            let reason = format!(
                "not applied: required service `{missing}` is not provided by any plugin loaded before it"
            );
            record.status = PluginStatus::Skipped(reason.clone());
            self.problem(Some(&entry.id), reason);
            return Ok(());
        }
        validate_config(&self.manifest_path, &descriptor, &entry.config)?;
        // A `.so` plugin's calls run on plugin threads: it may block one.
        let threads = match entry.plugin {
            PluginRef::Library(_) => Some(self.core.plugin_threads().clone()),
            PluginRef::Builtin(_) => None,
        };
        let owner = Owner::new(&entry.id, entry.index as u32)
            .with_calls(CallPolicy {
                timeout: entry.listener_timeout,
                threads,
            })
            .built_against(module.api_version().as_str());
        let inbox: super::context::ProblemInbox = Arc::new(Mutex::new(Some(Vec::new())));
        let draft = Arc::new(Mutex::new(Some(Draft {
            before: before.clone(),
            instance: Instance::new(owner.clone()),
        })));
        let ctx = PluginContext {
            core: self.core.clone(),
            owner,
            config_dir: self
                .manifest_path
                .parent()
                .map(PathBuf::from)
                .unwrap_or_default(),
            problems: inbox.clone(),
            draft: draft.clone(),
        };
        let ctx = HostContext_TO::from_ptr(RArc::new(ctx), TD_Opaque);
        let applied = (module.apply())(ctx, RString::from(entry.config.to_string()));
        self.take_reported(&entry.id, &inbox);
        // From here on the context accepts no registrations.
        let taken = draft.lock().unwrap_or_else(|p| p.into_inner()).take();
        let instance = match (applied, taken) {
            (RResult::ROk(()), Some(draft)) => draft.instance,
            (RResult::RErr(e), draft) => {
                // Whatever it registered before failing goes with it.
                if let Some(draft) = draft {
                    draft.instance.cancel();
                }
                return Err(format!("apply failed: {e}"));
            }
            (RResult::ROk(()), None) => return Err("apply lost its registrations".into()),
        };
        record.applied(Arc::new(instance));
        Ok(())
    }

    /// Applies a root module that is not named in a manifest (embedders and
    /// tests) through exactly the path a manifest entry takes, and
    /// publishes it.
    pub fn load_module(&mut self, id: &str, module: PluginModuleRef, config: serde_json::Value) {
        let previous = self.instances();
        let entry = PluginEntry {
            id: id.to_string(),
            plugin: PluginRef::Builtin(id.to_string()),
            config,
            disabled: false,
            index: self.records.len(),
            listener_timeout: None,
        };
        let mut record = PluginRecord::pending(&entry);
        let before = self.core.view();
        if let Err(message) = self.apply_module(&entry, module, &mut record, &before) {
            record.status = PluginStatus::Failed(message.clone());
            self.problem(Some(id), message);
        }
        self.records.push(record);
        self.publish(&previous);
    }

    /// Disposes the plugin `id`: removes every listener, guard, tool and
    /// service it registered. Returns false if no such plugin is applied.
    pub fn dispose(&mut self, id: &str) -> bool {
        let Some(record) = self
            .records
            .iter_mut()
            .find(|r| r.id == id && r.status.is_running())
        else {
            return false;
        };
        if let Some(instance) = record.instance.take() {
            self.core.dispose_instance(&instance);
        }
        record.status = PluginStatus::Disabled;
        record.seams.clear();
        record.tools.clear();
        record.services.clear();
        true
    }

    /// The seams of an applied plugin, as the published registry has them.
    pub fn seams_of(&self, id: &str) -> Vec<Seam> {
        self.core.view().seams_of(id)
    }
}

fn validate_config(
    manifest: &std::path::Path,
    descriptor: &PluginDescriptor,
    config: &serde_json::Value,
) -> Result<(), String> {
    let schema: serde_json::Value = serde_json::from_str(&descriptor.config_schema)
        .map_err(|e| format!("plugin exported an invalid config schema: {e}"))?;
    let validator = jsonschema::validator_for(&schema)
        .map_err(|e| format!("plugin exported an unusable config schema: {e}"))?;
    let errors: Vec<String> = validator
        .iter_errors(config)
        .map(|e| {
            let at = e.instance_path().to_string();
            let key = if at.is_empty() {
                "config".to_string()
            } else {
                format!("config{}", at.replace('/', "."))
            };
            format!("{}: key `{key}`: {e}", manifest.display())
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}
