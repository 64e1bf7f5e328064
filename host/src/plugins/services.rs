//! Named services and tools that plugins registered, with their owners.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use dsh_plugin_api::ToolSpec;
use dsh_plugin_api::ffi::{ServiceBox, ToolBodyBox};

/// A mounted service.
#[derive(Clone)]
struct ServiceEntry {
    owner: Arc<str>,
    service: ServiceBox,
}

/// Services by name.
#[derive(Default)]
pub struct ServiceRegistry {
    inner: RwLock<HashMap<String, ServiceEntry>>,
}

impl ServiceRegistry {
    /// Mounts a service; a taken name is an error naming the holder.
    pub fn provide(&self, owner: &Arc<str>, name: &str, service: ServiceBox) -> Result<(), String> {
        let mut map = self.inner.write().unwrap_or_else(|p| p.into_inner());
        if let Some(existing) = map.get(name) {
            return Err(format!(
                "service `{name}` is already provided by plugin `{}`",
                existing.owner
            ));
        }
        map.insert(
            name.to_string(),
            ServiceEntry {
                owner: owner.clone(),
                service,
            },
        );
        Ok(())
    }

    /// The service mounted under `name`, if any.
    pub fn get(&self, name: &str) -> Option<ServiceBox> {
        let map = self.inner.read().unwrap_or_else(|p| p.into_inner());
        map.get(name).map(|e| e.service.clone())
    }

    /// Unmounts everything `owner` provided.
    pub fn remove_owner(&self, owner: &str) -> usize {
        let mut map = self.inner.write().unwrap_or_else(|p| p.into_inner());
        let before = map.len();
        map.retain(|_, e| &*e.owner != owner);
        before - map.len()
    }

    /// Names of the services `owner` provides.
    pub fn names_of(&self, owner: &str) -> Vec<String> {
        let map = self.inner.read().unwrap_or_else(|p| p.into_inner());
        let mut names: Vec<String> = map
            .iter()
            .filter(|(_, e)| &*e.owner == owner)
            .map(|(n, _)| n.clone())
            .collect();
        names.sort();
        names
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

/// Tools by name (aliases resolve to their tool).
#[derive(Default)]
pub struct ToolRegistry {
    inner: RwLock<Vec<ToolEntry>>,
}

impl ToolRegistry {
    /// Registers a tool; a taken name or alias is an error.
    pub fn register(
        &self,
        owner: &Arc<str>,
        spec: ToolSpec,
        body: ToolBodyBox,
    ) -> Result<(), String> {
        let mut tools = self.inner.write().unwrap_or_else(|p| p.into_inner());
        let names: Vec<&str> = std::iter::once(spec.name.as_str())
            .chain(spec.aliases.iter().map(|a| a.as_str()))
            .collect();
        for name in &names {
            if let Some(existing) = tools.iter().find(|t| Self::answers_to(t, name)) {
                return Err(format!(
                    "tool `{name}` is already registered by plugin `{}`",
                    existing.owner
                ));
            }
        }
        tools.push(ToolEntry {
            owner: owner.clone(),
            spec,
            body: Arc::new(body),
        });
        Ok(())
    }

    fn answers_to(tool: &ToolEntry, name: &str) -> bool {
        tool.spec.name.as_str() == name || tool.spec.aliases.iter().any(|a| a.as_str() == name)
    }

    /// The tool called `name` (or aliased so).
    pub fn get(&self, name: &str) -> Option<ToolEntry> {
        let tools = self.inner.read().unwrap_or_else(|p| p.into_inner());
        tools.iter().find(|t| Self::answers_to(t, name)).cloned()
    }

    /// Every tool's spec, in registration order.
    pub fn specs(&self) -> Vec<ToolSpec> {
        let tools = self.inner.read().unwrap_or_else(|p| p.into_inner());
        tools.iter().map(|t| t.spec.clone()).collect()
    }

    /// Removes everything `owner` registered.
    pub fn remove_owner(&self, owner: &str) -> usize {
        let mut tools = self.inner.write().unwrap_or_else(|p| p.into_inner());
        let before = tools.len();
        tools.retain(|t| &*t.owner != owner);
        before - tools.len()
    }

    /// Names of the tools `owner` registered.
    pub fn names_of(&self, owner: &str) -> Vec<String> {
        let tools = self.inner.read().unwrap_or_else(|p| p.into_inner());
        tools
            .iter()
            .filter(|t| &*t.owner == owner)
            .map(|t| t.spec.name.to_string())
            .collect()
    }
}
