//! [`Instance`]: everything one applied plugin registered (listeners,
//! guards, tools, services), as one value with its own cancel token.
//!
//! An instance is filled while its plugin applies and never changes after.
//! A registry holds instances behind `Arc`s; a reload that leaves a plugin
//! alone carries the same instance into the next registry. Disposing an
//! instance cancels its token (its calls in flight end) and leaves it out of
//! the next registry; an instance a reload replaced is dropped with the last
//! registry that holds it, once no turn runs on that registry.

use std::sync::Arc;

use dsh_plugin_api::ffi::{GuardBox, ListenerBox, ServiceBox, ToolBodyBox};
use dsh_plugin_api::{Seam, ToolSpec};

use super::services::{ServicesView, ToolEntry, ToolsView};
use crate::seams::{BusRegistrations, Owner};

/// One applied plugin's registrations.
pub struct Instance {
    /// Who it is, its position, its cancel token and call policy.
    pub(crate) owner: Owner,
    pub(crate) bus: BusRegistrations,
    pub(crate) tools: Vec<ToolEntry>,
    pub(crate) services: Vec<(String, ServiceBox)>,
}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instance")
            .field("id", &self.owner.id)
            .field("position", &self.owner.position)
            .field("seams", &self.bus.seams())
            .field("tools", &self.tool_names())
            .field("services", &self.service_names())
            .finish()
    }
}

impl Instance {
    /// An instance of `owner` that registered nothing yet.
    pub fn new(owner: Owner) -> Instance {
        Instance {
            owner,
            bus: BusRegistrations::default(),
            tools: Vec::new(),
            services: Vec::new(),
        }
    }

    /// The plugin's manifest id.
    pub fn id(&self) -> &str {
        &self.owner.id
    }

    /// The plugin's owner (id, position, cancel token, call policy).
    pub fn owner(&self) -> &Owner {
        &self.owner
    }

    /// Adds a listener.
    pub fn listen(&mut self, seam: Seam, listener: ListenerBox) -> Result<(), String> {
        if seam == Seam::Guard {
            return Err("guards are registered with `guard`, not `listen`".into());
        }
        self.bus.listen(seam, listener);
        Ok(())
    }

    /// Adds a guard.
    pub fn guard(&mut self, guard: GuardBox) {
        self.bus.guard(guard);
    }

    /// Adds a tool; a name or alias taken here or in `others` is an error
    /// naming the holder.
    pub fn register_tool(
        &mut self,
        others: &ToolsView,
        spec: ToolSpec,
        body: ToolBodyBox,
    ) -> Result<(), String> {
        self.register_tool_shared(others, spec, Arc::new(body))
    }

    pub(crate) fn register_tool_shared(
        &mut self,
        others: &ToolsView,
        spec: ToolSpec,
        body: Arc<ToolBodyBox>,
    ) -> Result<(), String> {
        let tool = ToolEntry {
            owner: self.owner.id.clone(),
            spec,
            body,
        };
        for name in tool.names() {
            let holder = others
                .holder(name)
                .or_else(|| self.tools.iter().find(|t| t.answers_to(name)));
            if let Some(holder) = holder {
                return Err(format!(
                    "tool `{name}` is already registered by plugin `{}`",
                    holder.owner
                ));
            }
        }
        self.tools.push(tool);
        Ok(())
    }

    /// Adds a service; a name taken here or in `others` is an error naming
    /// the holder.
    pub fn provide_service(
        &mut self,
        others: &ServicesView,
        name: &str,
        service: ServiceBox,
    ) -> Result<(), String> {
        let holder = others
            .holder(name)
            .or_else(|| self.service(name).map(|_| &*self.owner.id));
        if let Some(holder) = holder {
            return Err(format!(
                "service `{name}` is already provided by plugin `{holder}`"
            ));
        }
        self.services.push((name.to_string(), service));
        Ok(())
    }

    /// The service this instance provides under `name`.
    pub fn service(&self, name: &str) -> Option<&ServiceBox> {
        self.services
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, service)| service)
    }

    /// The seams it listens on (guards as [`Seam::Guard`]), in seam order.
    pub fn seams(&self) -> Vec<Seam> {
        self.bus.seams()
    }

    /// Its tools' names, in registration order.
    pub fn tool_names(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.spec.name.to_string()).collect()
    }

    /// Its services' names, sorted.
    pub fn service_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.services.iter().map(|(n, _)| n.clone()).collect();
        names.sort();
        names
    }

    /// Ends its calls in flight (see [`Owner`]). Called when it is
    /// disposed, never when a reload replaces it.
    pub(crate) fn cancel(&self) {
        self.owner.disposed.cancel();
    }
}
