//! Which MCP servers a session connects to, and how: from the manifest's
//! `mcp_servers` (Claude Code's `.mcp.json` shape) and from ACP
//! `session/new`/`session/load`.
//!
//! A manifest entry is `{command, args, env}` (stdio, `type: stdio`
//! optional) or `{type: http, url, headers}` (streamable HTTP). Anything
//! else is refused naming the server and the key. Server names become part
//! of tool names (`mcp__<server>__<tool>`), so every character outside
//! `[A-Za-z0-9_-]` becomes `_`, as Claude Code does.

use serde_json::{Map, Value};

/// How to reach one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpTransport {
    /// A local process speaking MCP on its stdin/stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables set for it (on top of dsh's environment minus credentials).
        env: Vec<(String, String)>,
    },
    /// A streamable HTTP endpoint.
    Http {
        /// The endpoint (`http://` or `https://`).
        url: String,
        /// Headers sent with every request.
        headers: Vec<(String, String)>,
    },
}

/// One named server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerSpec {
    /// The name its tools are prefixed with (normalized).
    pub name: String,
    /// How to reach it.
    pub transport: McpTransport,
}

/// A manifest `mcp_servers` entry that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("mcp_servers.{server}: key `{key}`: {message}")]
pub struct McpConfigError {
    /// The server's name as written.
    pub server: String,
    /// The offending key.
    pub key: String,
    /// What is wrong.
    pub message: String,
}

/// A server name as it appears in tool names: every character outside
/// `[A-Za-z0-9_-]` becomes `_`.
pub fn normalize_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn string_map(
    server: &str,
    key: &str,
    value: Option<&Value>,
) -> Result<Vec<(String, String)>, McpConfigError> {
    let err = |message: String| McpConfigError {
        server: server.to_string(),
        key: key.to_string(),
        message,
    };
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                other => Err(err(format!("`{k}` must be a string, not {other}"))),
            })
            .collect(),
        Some(other) => Err(err(format!("must be a mapping of strings, not {other}"))),
    }
}

impl McpServerSpec {
    /// One manifest entry `name: value`.
    pub fn from_manifest(name: &str, value: &Value) -> Result<McpServerSpec, McpConfigError> {
        let err = |key: &str, message: &str| McpConfigError {
            server: name.to_string(),
            key: key.to_string(),
            message: message.to_string(),
        };
        if name.is_empty() {
            return Err(err("", "a server needs a non-empty name"));
        }
        let Some(entry) = value.as_object() else {
            return Err(err("", "must be a mapping"));
        };
        let kind = match entry.get("type") {
            None => "stdio",
            Some(Value::String(t)) => t.as_str(),
            Some(_) => return Err(err("type", "must be `stdio` or `http`")),
        };
        let allowed: &[&str] = match kind {
            "stdio" => &["type", "command", "args", "env"],
            "http" => &["type", "url", "headers"],
            "sse" => {
                return Err(err(
                    "type",
                    "SSE servers are not supported; use a streamable HTTP endpoint (`type: http`)",
                ));
            }
            other => {
                return Err(err(
                    "type",
                    &format!("unknown server type `{other}` (known: stdio, http)"),
                ));
            }
        };
        if let Some(unknown) = entry.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(err(
                unknown,
                &format!(
                    "unknown key for a {kind} server (known: {})",
                    allowed.join(", ")
                ),
            ));
        }
        let transport = if kind == "stdio" {
            let command = match entry.get("command") {
                Some(Value::String(c)) if !c.trim().is_empty() => c.clone(),
                Some(Value::String(_)) => return Err(err("command", "empty")),
                Some(_) => return Err(err("command", "must be a string")),
                None => return Err(err("command", "missing: a stdio server needs a command")),
            };
            let args = match entry.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|v| {
                        v.as_str()
                            .map(str::to_string)
                            .ok_or_else(|| err("args", "must be a list of strings"))
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err(err("args", "must be a list of strings")),
            };
            McpTransport::Stdio {
                command,
                args,
                env: string_map(name, "env", entry.get("env"))?,
            }
        } else {
            let url = match entry.get("url") {
                Some(Value::String(u)) if u.starts_with("http://") || u.starts_with("https://") => {
                    u.clone()
                }
                Some(_) => return Err(err("url", "must be an http:// or https:// URL")),
                None => return Err(err("url", "missing: an http server needs a url")),
            };
            McpTransport::Http {
                url,
                headers: string_map(name, "headers", entry.get("headers"))?,
            }
        };
        Ok(McpServerSpec {
            name: normalize_name(name),
            transport,
        })
    }

    /// Every entry of a manifest's `mcp_servers` mapping, in its order.
    pub fn from_manifest_map(
        map: &Map<String, Value>,
    ) -> Result<Vec<McpServerSpec>, McpConfigError> {
        map.iter()
            .map(|(name, value)| McpServerSpec::from_manifest(name, value))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn the_claude_code_shapes_parse() {
        let stdio = McpServerSpec::from_manifest(
            "git hub",
            &json!({"command": "npx", "args": ["-y", "srv"], "env": {"TOKEN": "t"}}),
        )
        .unwrap();
        assert_eq!(stdio.name, "git_hub");
        assert_eq!(
            stdio.transport,
            McpTransport::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "srv".into()],
                env: vec![("TOKEN".into(), "t".into())],
            }
        );
        let http = McpServerSpec::from_manifest(
            "web",
            &json!({"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer x"}}),
        )
        .unwrap();
        assert_eq!(
            http.transport,
            McpTransport::Http {
                url: "http://127.0.0.1:9/mcp".into(),
                headers: vec![("Authorization".into(), "Bearer x".into())],
            }
        );
    }

    #[test]
    fn bad_entries_name_the_server_and_key() {
        let cases = [
            (
                json!({"args": []}),
                "mcp_servers.s: key `command`: missing: a stdio server needs a command",
            ),
            (
                json!({"command": "x", "url": "u"}),
                "mcp_servers.s: key `url`: unknown key for a stdio server (known: type, command, args, env)",
            ),
            (
                json!({"type": "sse", "url": "http://h"}),
                "mcp_servers.s: key `type`: SSE servers are not supported; use a streamable HTTP endpoint (`type: http`)",
            ),
            (
                json!({"type": "http", "url": "ftp://h"}),
                "mcp_servers.s: key `url`: must be an http:// or https:// URL",
            ),
            (
                json!({"command": "x", "env": {"A": 1}}),
                "mcp_servers.s: key `env`: `A` must be a string, not 1",
            ),
            (json!("npx srv"), "mcp_servers.s: key ``: must be a mapping"),
        ];
        for (value, expected) in cases {
            let e = McpServerSpec::from_manifest("s", &value).unwrap_err();
            assert_eq!(e.to_string(), expected);
        }
    }
}
