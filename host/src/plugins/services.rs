//! The tools and services of one registry, each with the plugin that
//! registered it: immutable tables built from the registry's plugin
//! instances (see [`super::Registry`]).

use std::collections::HashMap;
use std::sync::Arc;

use dsh_plugin_api::ToolSpec;
use dsh_plugin_api::ffi::{ServiceBox, ToolBodyBox};

use super::instance::Instance;

/// A mounted service.
#[derive(Clone)]
struct ServiceEntry {
    owner: Arc<str>,
    service: ServiceBox,
}

/// Services by name.
#[derive(Clone, Default)]
pub struct ServicesView(Arc<HashMap<String, ServiceEntry>>);

impl ServicesView {
    /// The table of `instances`; of two providing one name, the first
    /// listed keeps it (applying the second already failed on it, so this
    /// only happens to services mounted by embedders).
    pub(crate) fn build(instances: &[Arc<Instance>]) -> ServicesView {
        let mut map: HashMap<String, ServiceEntry> = HashMap::new();
        for instance in instances {
            for (name, service) in &instance.services {
                if let Some(holder) = map.get(name) {
                    tracing::warn!(
                        plugin = %instance.owner.id,
                        "service `{name}` is already provided by `{}`; not mounted",
                        holder.owner
                    );
                    continue;
                }
                map.insert(
                    name.clone(),
                    ServiceEntry {
                        owner: instance.owner.id.clone(),
                        service: service.clone(),
                    },
                );
            }
        }
        ServicesView(Arc::new(map))
    }

    /// The service mounted under `name`.
    pub fn get(&self, name: &str) -> Option<ServiceBox> {
        self.0.get(name).map(|e| e.service.clone())
    }

    /// The plugin providing `name`.
    pub fn holder(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(|e| &*e.owner)
    }
}

/// A registered tool.
#[derive(Clone)]
pub struct ToolEntry {
    /// The plugin that registered it.
    pub owner: Arc<str>,
    /// What the model is told.
    pub spec: ToolSpec,
    /// The body.
    pub body: Arc<ToolBodyBox>,
}

impl ToolEntry {
    /// Whether the tool is called `name` or aliased so.
    pub fn answers_to(&self, name: &str) -> bool {
        self.spec.name.as_str() == name || self.spec.aliases.iter().any(|a| a.as_str() == name)
    }

    /// The tool's name and aliases.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.spec.name.as_str()).chain(self.spec.aliases.iter().map(|a| a.as_str()))
    }
}

/// Tools by name (aliases resolve to their tool), in registry order.
#[derive(Clone, Default)]
pub struct ToolsView(Arc<Vec<ToolEntry>>);

impl ToolsView {
    /// The table of `instances`, in their order; a name taken twice keeps
    /// the first (see [`ServicesView::build`]).
    pub(crate) fn build(instances: &[Arc<Instance>]) -> ToolsView {
        let mut tools: Vec<ToolEntry> = Vec::new();
        for instance in instances {
            for tool in &instance.tools {
                if let Some(taken) = tool
                    .names()
                    .find(|name| tools.iter().any(|t| t.answers_to(name)))
                {
                    tracing::warn!(
                        plugin = %instance.owner.id,
                        "tool `{taken}` is already registered; not added"
                    );
                    continue;
                }
                tools.push(tool.clone());
            }
        }
        ToolsView(Arc::new(tools))
    }

    /// The tool called `name` (or aliased so).
    pub fn get(&self, name: &str) -> Option<ToolEntry> {
        self.0.iter().find(|t| t.answers_to(name)).cloned()
    }

    /// Every tool's spec, in registry order.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.0.iter().map(|t| t.spec.clone()).collect()
    }

    /// Every tool's spec, in registry order, without copying them.
    pub fn iter_specs(&self) -> impl Iterator<Item = &ToolSpec> {
        self.0.iter().map(|t| &t.spec)
    }

    /// This table followed by `extra` (a session's MCP tools); a name this
    /// table already answers to keeps its tool.
    pub fn with_extra(&self, extra: Vec<ToolEntry>) -> ToolsView {
        if extra.is_empty() {
            return self.clone();
        }
        let mut tools: Vec<ToolEntry> = self.0.as_ref().clone();
        for tool in extra {
            if tools.iter().any(|t| t.answers_to(tool.spec.name.as_str())) {
                tracing::warn!(
                    "tool `{}` is already registered; the MCP tool is not added",
                    tool.spec.name
                );
                continue;
            }
            tools.push(tool);
        }
        ToolsView(Arc::new(tools))
    }

    /// The tool answering to `name`, if one does.
    pub(crate) fn holder(&self, name: &str) -> Option<&ToolEntry> {
        self.0.iter().find(|t| t.answers_to(name))
    }
}
