//! Parsing the handlers that are not commands: Claude Code's `http`
//! (Claude hook files only: Codex 0.171 has no such type) and dsh's own
//! `socket` (both dialects). [`crate::config`] hands a handler object here
//! once its `type` says so; what comes back is a [`Handler`] and the label
//! records call its `command`, or an error naming the key.

use serde_json::{Map, Value};

use crate::transport::{Handler, HttpHandler, SocketHandler};

/// Keys an `http` handler may have.
pub const HTTP_KEYS: &[&str] = &[
    "type",
    "url",
    "headers",
    "allowedEnvVars",
    "timeout",
    "statusMessage",
    "once",
    "async",
    "if",
];
/// Keys a `socket` handler may have.
pub const SOCKET_KEYS: &[&str] = &["type", "path", "command", "timeout", "statusMessage"];

/// Keys a handler of type `kind` may have, when this module parses it.
pub fn keys_of(kind: &str) -> Option<&'static [&'static str]> {
    match kind {
        "http" => Some(HTTP_KEYS),
        "socket" => Some(SOCKET_KEYS),
        _ => None,
    }
}

/// A problem with one handler: the key (relative to the handler) and
/// what is wrong; the hook never runs.
#[derive(Debug, PartialEq, Eq)]
pub struct HandlerError {
    /// The offending key, empty for the handler itself.
    pub key: &'static str,
    /// What is wrong.
    pub message: String,
}

fn error(key: &'static str, message: impl Into<String>) -> HandlerError {
    HandlerError {
        key,
        message: message.into(),
    }
}

/// Parses an `http` or `socket` handler.
pub fn parse(kind: &str, object: &Map<String, Value>) -> Result<Handler, HandlerError> {
    match kind {
        "http" => parse_http(object).map(Handler::Http),
        "socket" => parse_socket(object).map(Handler::Socket),
        other => Err(error(
            "type",
            format!("`{other}` is not an http or socket hook"),
        )),
    }
}

fn parse_http(object: &Map<String, Value>) -> Result<HttpHandler, HandlerError> {
    let url = match object.get("url") {
        Some(Value::String(u)) if !u.trim().is_empty() => u.trim().to_string(),
        Some(Value::String(_)) => return Err(error("url", "http hook with an empty `url`")),
        Some(_) => return Err(error("url", "http hook whose `url` is not a string")),
        None => return Err(error("", "http hook with no `url`")),
    };
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(error(
            "url",
            format!("`{url}` is not an http:// or https:// URL"),
        ));
    }
    let headers = match object.get("headers") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(map)) => {
            let mut headers = Vec::new();
            for (name, value) in map {
                let Some(value) = value.as_str() else {
                    return Err(error("headers", format!("header `{name}` is not a string")));
                };
                headers.push((name.clone(), value.to_string()));
            }
            headers
        }
        Some(_) => return Err(error("headers", "`headers` is not an object")),
    };
    let allowed_env_vars = match object.get("allowedEnvVars") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(names)) => {
            let mut out = Vec::new();
            for name in names {
                let Some(name) = name.as_str() else {
                    return Err(error(
                        "allowedEnvVars",
                        format!("{name} is not a variable name"),
                    ));
                };
                out.push(name.to_string());
            }
            out
        }
        Some(_) => return Err(error("allowedEnvVars", "`allowedEnvVars` is not a list")),
    };
    Ok(HttpHandler {
        url,
        headers,
        allowed_env_vars,
    })
}

fn parse_socket(object: &Map<String, Value>) -> Result<SocketHandler, HandlerError> {
    let text = |key: &'static str| -> Result<Option<String>, HandlerError> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
            Some(Value::String(_)) => Err(error(key, format!("socket hook with an empty `{key}`"))),
            Some(_) => Err(error(
                key,
                format!("socket hook whose `{key}` is not a string"),
            )),
        }
    };
    let path = text("path")?;
    let command = text("command")?;
    if path.is_none() && command.is_none() {
        return Err(error(
            "",
            "socket hook with neither `path` (a server you run) nor `command` (a server dsh starts)",
        ));
    }
    if let Some(p) = &path
        && !p.starts_with('/')
    {
        return Err(error("path", format!("socket path `{p}` is not absolute")));
    }
    Ok(SocketHandler { path, command })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn http_handlers_keep_header_order() {
        let h = parse(
            "http",
            &obj(json!({"type": "http", "url": "http://localhost:9/x",
                "headers": {"B": "$T", "A": "1"}, "allowedEnvVars": ["T"]})),
        )
        .unwrap();
        let Handler::Http(h) = h else { panic!() };
        assert_eq!(
            h.headers,
            [("B".into(), "$T".into()), ("A".into(), "1".into())]
        );
        assert_eq!(h.allowed_env_vars, ["T"]);
    }

    #[test]
    fn bad_handlers_name_their_key() {
        let cases = [
            (json!({"type": "http"}), "", "http hook with no `url`"),
            (
                json!({"type": "http", "url": "ftp://x"}),
                "url",
                "`ftp://x` is not an http:// or https:// URL",
            ),
            (
                json!({"type": "http", "url": "http://x", "headers": {"A": 1}}),
                "headers",
                "header `A` is not a string",
            ),
            (
                json!({"type": "socket"}),
                "",
                "socket hook with neither `path` (a server you run) nor `command` (a server dsh starts)",
            ),
            (
                json!({"type": "socket", "path": "rel.sock"}),
                "path",
                "socket path `rel.sock` is not absolute",
            ),
            (
                json!({"type": "socket", "command": 3}),
                "command",
                "socket hook whose `command` is not a string",
            ),
        ];
        for (v, key, message) in cases {
            let kind = v["type"].as_str().unwrap().to_string();
            let e = parse(&kind, &obj(v)).unwrap_err();
            assert_eq!((e.key, e.message.as_str()), (key, message));
        }
    }

    #[test]
    fn socket_handlers_take_a_path_a_command_or_both() {
        let s = parse(
            "socket",
            &obj(json!({"path": "/run/x.sock", "command": "node s.js"})),
        )
        .unwrap();
        assert_eq!(
            s,
            Handler::Socket(SocketHandler {
                path: Some("/run/x.sock".into()),
                command: Some("node s.js".into())
            })
        );
        assert_eq!(s.label(), "/run/x.sock");
    }
}
