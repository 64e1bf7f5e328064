//! How a dsh tool call looks to a Codex hook.
//!
//! Codex shows its shell tool as `tool_name: "Bash"` with `tool_input:
//! {"command": "<script>"}`, whatever the model's own argument names were
//! (`exec_command` with `cmd`, `workdir`, `yield_time_ms`, ...: vector
//! `C1-exec-extra-args`), and reports the tool's `workdir` as the payload
//! `cwd`. A hook's `updatedInput.command` rewrites only the command, under
//! the argument name the call used. Other tools pass through unchanged.

use dsh_plugin_api::ToolCall;
use serde_json::{Map, Value, json};

/// Tool names dsh and Codex use for running a shell command.
pub const SHELL_TOOLS: [&str; 5] = ["Bash", "bash", "shell", "exec_command", "local_shell"];

/// A call as a Codex hook sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct CodexTool {
    /// `tool_name`.
    pub name: String,
    /// `tool_input`.
    pub input: Value,
    /// For a shell call: the script, and the argument that holds it.
    pub command: Option<(String, String)>,
    /// For a shell call with a working directory of its own.
    pub workdir: Option<String>,
}

fn script(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Array(argv) => {
            let argv: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
            // `["bash", "-lc", "<script>"]` carries the script itself.
            match argv.as_slice() {
                [_, flag, script] if matches!(*flag, "-c" | "-lc") => Some((*script).to_string()),
                _ => Some(argv.join(" ")),
            }
        }
        _ => None,
    }
}

/// Codex's sub-agent tools whose hook `tool_name` carries their namespace.
const GLUED: [&str; 4] = ["wait_agent", "send_input", "close_agent", "resume_agent"];

/// Maps a dsh call to what a Codex hook sees.
pub fn codex_tool(call: &ToolCall) -> CodexTool {
    let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
    let passthrough = || CodexTool {
        // Codex names its `multi_agent_v1` calls with the namespace glued
        // on (vectors `C180-spawn-wait`, `C185-*`); `spawn_agent` keeps its
        // own name.
        name: if GLUED.contains(&call.name.as_str()) {
            format!("multi_agent_v1{}", call.name)
        } else {
            call.name.to_string()
        },
        input: if args.is_null() {
            Value::String(call.arguments.to_string())
        } else {
            args.clone()
        },
        command: None,
        workdir: None,
    };
    if !SHELL_TOOLS.contains(&call.name.as_str()) {
        return passthrough();
    }
    let Some(obj) = args.as_object() else {
        return passthrough();
    };
    let found = ["command", "cmd"]
        .iter()
        .find_map(|k| obj.get(*k).and_then(script).map(|s| (k.to_string(), s)));
    let Some((key, command)) = found else {
        return passthrough();
    };
    let workdir = ["workdir", "cwd"]
        .iter()
        .find_map(|k| obj.get(*k).and_then(Value::as_str))
        .map(String::from);
    CodexTool {
        name: "Bash".into(),
        input: json!({ "command": command }),
        command: Some((key, command)),
        workdir,
    }
}

/// The call's arguments with the command replaced (Codex's
/// `updatedInput.command`), as canonical JSON.
pub fn rewrite_command(call: &ToolCall, key: &str, command: &str) -> String {
    let mut args: Map<String, Value> = serde_json::from_str(&call.arguments).unwrap_or_default();
    args.insert(key.to_string(), Value::String(command.to_string()));
    Value::Object(args).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_plugin_api::SessionRef;
    use dsh_plugin_api::abi_stable::std_types::{ROption, RString};

    fn call(name: &str, args: &str) -> ToolCall {
        ToolCall {
            session: SessionRef {
                session_id: RString::from("s"),
                cwd: RString::from("/p"),
                log_path: RString::new(),
                permission_mode: RString::new(),
                turn_id: RString::new(),
                prompt_id: RString::new(),
                parent_session_id: ROption::RNone,
                agent_type: ROption::RNone,
            },
            call_id: "c".into(),
            name: name.into(),
            arguments: args.into(),
            parent: ROption::RNone,
        }
    }

    #[test]
    fn exec_command_becomes_bash_with_only_the_command() {
        let t = codex_tool(&call(
            "exec_command",
            r#"{"cmd":"pwd","workdir":"/tmp","yield_time_ms":2000}"#,
        ));
        assert_eq!(t.name, "Bash");
        assert_eq!(t.input, json!({"command": "pwd"}));
        assert_eq!(t.workdir.as_deref(), Some("/tmp"));
        assert_eq!(t.command, Some(("cmd".into(), "pwd".into())));
    }

    #[test]
    fn argv_commands_yield_their_script() {
        let t = codex_tool(&call("shell", r#"{"command":["bash","-lc","echo hi"]}"#));
        assert_eq!(t.input, json!({"command": "echo hi"}));
    }

    #[test]
    fn other_tools_pass_through() {
        let t = codex_tool(&call("Write", r#"{"file_path":"/x","content":"y"}"#));
        assert_eq!(t.name, "Write");
        assert_eq!(t.input, json!({"file_path": "/x", "content": "y"}));
        assert_eq!(t.command, None);
    }

    #[test]
    fn rewrite_keeps_the_other_arguments() {
        let c = call("exec_command", r#"{"cmd":"echo hi","workdir":"/tmp"}"#);
        let v: Value = serde_json::from_str(&rewrite_command(&c, "cmd", "echo rewritten")).unwrap();
        assert_eq!(v, json!({"cmd": "echo rewritten", "workdir": "/tmp"}));
    }
}
