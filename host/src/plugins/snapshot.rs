//! [`Registry`]: one immutable, consistent set of plugin instances with the
//! bus, tool and service tables built from them.
//!
//! The host core publishes one registry at a time and replaces it with a
//! single atomic swap: a reload builds the whole next registry off to the
//! side first. A turn takes one `Arc<Registry>` when it starts and
//! dispatches through it to its end, so it sees every plugin as it was at
//! that moment, never a registry half applied.

use std::sync::Arc;

use dsh_plugin_api::Seam;

use super::instance::Instance;
use super::services::{ServicesView, ToolsView};
use crate::seams::SeamBus;

/// What one turn dispatches through.
pub type HostView = Arc<Registry>;

/// Plugin instances and what they registered, as one value.
#[derive(Default)]
pub struct Registry {
    instances: Vec<Arc<Instance>>,
    /// The seam bus.
    pub bus: SeamBus,
    /// Registered tools.
    pub tools: ToolsView,
    /// Mounted services.
    pub services: ServicesView,
}

impl Registry {
    /// The registry of `instances`, ordered by position (instances at one
    /// position keep the order given).
    pub fn build(mut instances: Vec<Arc<Instance>>) -> Registry {
        instances.sort_by_key(|i| i.owner.position);
        Registry {
            bus: SeamBus::build(instances.iter().map(|i| (&i.owner, &i.bus))),
            tools: ToolsView::build(&instances),
            services: ServicesView::build(&instances),
            instances,
        }
    }

    /// Its instances, by position.
    pub fn instances(&self) -> &[Arc<Instance>] {
        &self.instances
    }

    /// The instance of plugin `id`.
    pub fn instance(&self, id: &str) -> Option<&Arc<Instance>> {
        self.instances.iter().find(|i| i.id() == id)
    }

    /// Whether `instance` is one of its instances (the very same one).
    pub fn holds(&self, instance: &Arc<Instance>) -> bool {
        self.instances.iter().any(|i| Arc::ptr_eq(i, instance))
    }

    /// The seams plugin `id` listens on, in seam order.
    pub fn seams_of(&self, id: &str) -> Vec<Seam> {
        self.bus.seams_of(id)
    }
}
