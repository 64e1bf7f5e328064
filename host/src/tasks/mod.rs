//! `tools-tasks`: the built-in plugin offering Claude Code's task tools,
//! `TaskCreate`, `TaskGet`, `TaskList` and `TaskUpdate` (Claude Code
//! 2.1.197 offers these instead of `TodoWrite`), with their schemas and
//! descriptions as Claude Code sends them (`schemas/`).
//!
//! Tasks live on disk per main session ([`store`]; a subagent works on its
//! parent's list), so a continued session keeps them. What each tool reads
//! and answers is [`ops`]. Two moments are offered to the `task-events`
//! service when one is mounted (the Claude bridge's TaskCreated and
//! TaskCompleted hooks, `dsh_plugin_api::services::task_events`): a task
//! just created, before `TaskCreate` answers (a refusal removes it again,
//! keeping its id used, and the call fails with the refusal's text), and a
//! task about to become `completed` (a refusal leaves it as it was and the
//! call answers the text, unsuccessful but not an error).
//!
//! Each tool's arguments are checked against its schema before any
//! listener hears of the call (the `input-check/<tool>` services), with
//! Claude Code's refusal texts ([`dsh_plugin_api::sdk::claude_input`], `S220-invalid`).
//!
//! Opt-in like `tools-todo`: a manifest that does not list `tools-tasks`
//! offers none of these, so the tool lists models see stay as they were.

pub mod ops;
pub mod store;

use std::path::PathBuf;
use std::sync::Arc;

use dsh_plugin_api::abi_stable::std_types::RArc;
use dsh_plugin_api::ffi::AbortSignalBox;
use dsh_plugin_api::services::task_events::{
    EventSession, METHOD_COMPLETED, METHOD_CREATED, SERVICE, TaskEvent, TaskVerdict,
};
use dsh_plugin_api::{Host, NoConfig, Plugin, ToolCall, ToolResult, ToolSpec};
use serde_json::Value;

use ops::Answer;
use store::{Store, StoreError, Task};

/// The tools' names.
pub const TOOL_NAMES: [&str; 4] = ["TaskCreate", "TaskGet", "TaskList", "TaskUpdate"];

/// The four tools as Claude Code advertises them.
pub fn specs() -> Vec<ToolSpec> {
    let spec = |name: &str, description: &str, schema: &str| ToolSpec {
        name: name.into(),
        description: description.into(),
        input_schema: schema.trim().into(),
        aliases: Default::default(),
    };
    vec![
        spec(
            "TaskCreate",
            include_str!("schemas/create.md"),
            include_str!("schemas/create.json"),
        ),
        spec(
            "TaskGet",
            include_str!("schemas/get.md"),
            include_str!("schemas/get.json"),
        ),
        spec(
            "TaskList",
            include_str!("schemas/list.md"),
            include_str!("schemas/list.json"),
        ),
        spec(
            "TaskUpdate",
            include_str!("schemas/update.md"),
            include_str!("schemas/update.json"),
        ),
    ]
}

/// The list a call works on: its main session's.
fn list_of(call: &ToolCall) -> String {
    call.session
        .parent_session_id
        .as_ref()
        .into_option()
        .unwrap_or(&call.session.session_id)
        .to_string()
}

/// Runs store work off the async workers.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, String> {
    match tokio::task::spawn_blocking(work).await {
        Ok(r) => r.map_err(|e| e.to_string()),
        Err(e) => Err(format!("task list: the store's thread failed: {e}")),
    }
}

/// Asks the `task-events` service about `task`; its refusal, if any.
async fn ask(
    host: &Host,
    method: &str,
    call: &ToolCall,
    task: &Task,
) -> Result<Option<String>, String> {
    if !host.has_service(SERVICE) {
        return Ok(None);
    }
    let event = TaskEvent {
        session: EventSession::of(&call.session),
        call_id: call.call_id.to_string(),
        task_id: task.id.clone(),
        subject: task.subject.clone(),
        description: task.description.clone(),
    };
    let args = serde_json::to_value(event).map_err(|e| e.to_string())?;
    let answer = host.call_service(SERVICE, method, &args).await?;
    let verdict: TaskVerdict = serde_json::from_value(answer)
        .map_err(|e| format!("service `{SERVICE}` answered `{method}` with {e}"))?;
    Ok(verdict.feedback)
}

/// The record type of a list's plan.
pub const PLAN_RECORD: &str = "tasks/plan";

/// A `tasks/plan` record: a task list after a change, which ACP shows as
/// the session's plan (`acp::tool_view::task_plan`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PlanRecord {
    /// Always [`PLAN_RECORD`].
    #[serde(rename = "type")]
    pub kind: String,
    /// Every task, by id.
    pub entries: Vec<PlanItem>,
}

/// One task of a [`PlanRecord`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PlanItem {
    /// Its subject.
    pub content: String,
    /// `pending`, `in_progress` or `completed`.
    pub status: String,
}

impl PlanRecord {
    /// The record of `tasks`.
    pub fn of(tasks: &[Task]) -> Self {
        PlanRecord {
            kind: PLAN_RECORD.into(),
            entries: tasks
                .iter()
                .map(|t| PlanItem {
                    content: t.subject.clone(),
                    status: t.status.clone(),
                })
                .collect(),
        }
    }

    /// `record` read as a plan record, if it is one.
    pub fn read(record: &Value) -> Option<Self> {
        if record.get("type").and_then(Value::as_str) != Some(PLAN_RECORD) {
            return None;
        }
        serde_json::from_value(record.clone()).ok()
    }
}

/// After a change: the list as a [`PlanRecord`] in the call's session.
async fn show_plan(tasks: &Arc<Tasks>, call: &ToolCall, list: String) {
    let me = tasks.clone();
    let all = match blocking(move || me.store.all(&list)).await {
        Ok(all) => all,
        Err(e) => return tracing::warn!("task list: no plan shown: {e}"),
    };
    let record = match serde_json::to_value(PlanRecord::of(&all)) {
        Ok(r) => r,
        Err(e) => return tracing::warn!("task list: no plan shown: {e}"),
    };
    if let Err(e) = tasks.host.append_record(&call.session.session_id, &record) {
        tracing::debug!("task list: no plan shown: {e}");
    }
}

fn answered(answer: Answer) -> ToolResult {
    ToolResult::text(answer.text).with_structured(answer.response.to_string())
}

struct Tasks {
    host: Host,
    store: Store,
}

impl Tasks {
    async fn create(self: Arc<Self>, call: &ToolCall, args: Value) -> Result<ToolResult, String> {
        let task = ops::parse_create(&args).map_err(|e| e.to_string())?;
        let list = list_of(call);
        let (me, l, t) = (self.clone(), list.clone(), task.clone());
        let id = blocking(move || me.store.create(&l, t)).await?;
        let task = Task { id, ..task };
        let refused = match ask(&self.host, METHOD_CREATED, call, &task).await {
            Ok(r) => r,
            Err(e) => Some(format!("TaskCreate: the `{SERVICE}` service failed: {e}")),
        };
        if let Some(text) = refused {
            let (me, id) = (self.clone(), task.id.clone());
            blocking(move || me.store.delete(&list, &id)).await?;
            // Claude Code's error result is the text trimmed (S221-two-hooks).
            return Ok(ToolResult::error(text.trim()));
        }
        show_plan(&self, call, list).await;
        Ok(answered(ops::created(&task.id, &task.subject)))
    }

    async fn get(self: Arc<Self>, call: &ToolCall, args: Value) -> Result<ToolResult, String> {
        let id = ops::parse_get(&args).map_err(|e| e.to_string())?;
        let list = list_of(call);
        let task = blocking(move || self.store.get(&list, &id)).await?;
        Ok(answered(ops::got(task.as_ref())))
    }

    async fn list(self: Arc<Self>, call: &ToolCall, args: Value) -> Result<ToolResult, String> {
        ops::parse_list(&args).map_err(|e| e.to_string())?;
        let list = list_of(call);
        let tasks = blocking(move || self.store.all(&list)).await?;
        Ok(answered(ops::listing(&tasks)))
    }

    async fn update(self: Arc<Self>, call: &ToolCall, args: Value) -> Result<ToolResult, String> {
        let update = ops::parse_update(&args).map_err(|e| e.to_string())?;
        let list = list_of(call);
        let (me, l, id) = (self.clone(), list.clone(), update.task_id.clone());
        let Some(before) = blocking(move || me.store.get(&l, &id)).await? else {
            return Ok(answered(ops::unsuccessful(
                &update.task_id,
                "Task not found",
            )));
        };
        if update.status.as_deref() == Some("deleted") {
            let (me, id) = (self.clone(), update.task_id.clone());
            let l = list.clone();
            let removed = blocking(move || me.store.delete(&l, &id)).await?;
            show_plan(&self, call, list).await;
            return Ok(answered(ops::deleted(
                &update.task_id,
                &before.status,
                removed,
            )));
        }
        let completing =
            update.status.as_deref() == Some("completed") && before.status != "completed";
        if completing {
            let refused = match ask(&self.host, METHOD_COMPLETED, call, &before).await {
                Ok(r) => r,
                Err(e) => Some(format!("TaskUpdate: the `{SERVICE}` service failed: {e}")),
            };
            if let Some(text) = refused {
                return Ok(answered(ops::unsuccessful(&update.task_id, &text)));
            }
        }
        let (me, l) = (self.clone(), list.clone());
        let answer = blocking(move || ops::apply(&me.store, &l, &before, &update)).await?;
        show_plan(&self, call, list).await;
        Ok(answered(answer))
    }
}

/// The plugin.
pub struct TaskTools;

impl Plugin for TaskTools {
    type Config = NoConfig;
    const NAME: &'static str = "tools-tasks";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn apply(host: &Host, _config: NoConfig) -> Result<Self, String> {
        let tasks = Arc::new(Tasks {
            host: host.clone(),
            store: Store::new(PathBuf::from(host.state_dir()).join("tasks")),
        });
        for spec in specs() {
            // Claude Code's validation, before any hook hears of the call.
            let mut schema: Value = serde_json::from_str(spec.input_schema.as_str())
                .map_err(|e| format!("tools-tasks: {}'s schema: {e}", spec.name))?;
            if spec.name.as_str() == "TaskCreate" {
                // Advertised as required, but Claude Code takes a call
                // without it (the subject is the description, S220-invalid).
                if let Some(required) = schema["required"].as_array_mut() {
                    required.retain(|k| k != "description");
                }
            }
            dsh_plugin_api::sdk::claude_input::provide_check(
                host,
                spec.name.as_str(),
                schema,
                &[],
            )?;
            let tasks = tasks.clone();
            let name = spec.name.to_string();
            host.register_tool(
                spec,
                move |call: RArc<ToolCall>, _signal: AbortSignalBox| {
                    let tasks = tasks.clone();
                    let name = name.clone();
                    async move {
                        let args: Value = match serde_json::from_str(&call.arguments) {
                            Ok(v) => v,
                            Err(e) => {
                                return ToolResult::error(format!(
                                    "{name}: arguments are not JSON: {e}"
                                ));
                            }
                        };
                        let result = match name.as_str() {
                            "TaskCreate" => tasks.create(&call, args).await,
                            "TaskGet" => tasks.get(&call, args).await,
                            "TaskList" => tasks.list(&call, args).await,
                            _ => tasks.update(&call, args).await,
                        };
                        result.unwrap_or_else(ToolResult::error)
                    }
                },
            )?;
        }
        Ok(TaskTools)
    }
}
