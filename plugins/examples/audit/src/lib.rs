//! `audit`: a `tools/result` observer that appends one JSON line per tool
//! call to a file: session id, call id, tool name, arguments (as JSON),
//! whether it was denied or failed, and the result text the model got.
//!
//! `tools/result` sees the final, immutable result after every other seam,
//! so the file records exactly what the caller got. Appends are plain
//! `std::fs` writes of one whole line each, serialized by a lock, so
//! concurrent calls never interleave. A failed write is this listener's
//! failure only: the host contains and reports it.
//!
//! ```yaml
//! - path: target/debug/libdsh_example_audit.so
//!   config: { path: audit.jsonl }   # relative to the host's state_dir
//! ```

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use dsh_plugin_api::{Host, Plugin, PostExecuteInput, RArc, export_plugin};

/// Where to write.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// The JSONL file; a relative path resolves against the state directory.
    pub path: String,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            path: "audit.jsonl".into(),
        }
    }
}

/// The observer: the resolved file and the lock that keeps lines whole.
pub struct Audit {
    path: PathBuf,
    lock: Mutex<()>,
}

impl Plugin for Audit {
    type Config = Config;
    const NAME: &'static str = "audit";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const DESCRIPTION: &'static str = "Appends one JSON line per tool result to a file";

    fn apply(host: &Host, config: Config) -> Result<Self, String> {
        let path = Path::new(&host.state_dir()).join(config.path);
        Ok(Audit {
            path,
            lock: Mutex::new(()),
        })
    }

    async fn tool_result(self: Arc<Self>, input: RArc<PostExecuteInput>) -> Result<(), String> {
        let call = &input.call;
        let arguments: serde_json::Value = serde_json::from_str(&call.arguments)
            .unwrap_or_else(|_| call.arguments.to_string().into());
        let mut line = serde_json::json!({
            "session_id": call.session.session_id.as_str(),
            "call_id": call.call_id.as_str(),
            "tool": call.name.as_str(),
            "arguments": arguments,
            "denied": input.denied,
            "is_error": input.result.is_error,
            "result": input.result.text_content(),
        })
        .to_string();
        line.push('\n');
        let _whole_lines = self
            .lock
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let appended = self
            .path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| {
                let mut file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&self.path)?;
                file.write_all(line.as_bytes())
            });
        appended.map_err(|e| format!("{}: cannot append audit line: {e}", self.path.display()))
    }
}

export_plugin!(Audit);
