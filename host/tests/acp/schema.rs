//! Every frame dsh sends, checked against the ACP JSON schema of the
//! `agent-client-protocol-schema` version in use (`fixtures/acp-schema.json`,
//! written from that crate's types by `tools/acp-schema`).
//!
//! [`tap`] sits between the server and the test client on an in-memory
//! connection: it forwards every line both ways, learns the method of each
//! client request, and validates each agent frame: a response's `result`
//! against that method's response schema (or its `error` against the error
//! schema), a request's and a notification's `params` against their
//! method's schema. A frame with no schema (an unknown method) or one that
//! does not validate is a violation; [`crate::support::TestHost`] fails the
//! test on any.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

/// The schema file's crate version must be the one in Cargo.lock.
const LOCKED: &str = "agent-client-protocol-schema";

struct Schemas {
    responses: HashMap<String, jsonschema::Validator>,
    requests: HashMap<String, jsonschema::Validator>,
    notifications: HashMap<String, jsonschema::Validator>,
    error: jsonschema::Validator,
}

fn compile(v: &Value) -> jsonschema::Validator {
    jsonschema::validator_for(v).unwrap()
}

fn compile_all(v: &Value) -> HashMap<String, jsonschema::Validator> {
    v.as_object()
        .unwrap()
        .iter()
        .map(|(k, s)| (k.clone(), compile(s)))
        .collect()
}

fn schemas() -> &'static Schemas {
    static SCHEMAS: OnceLock<Schemas> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let doc: Value = serde_json::from_str(include_str!("fixtures/acp-schema.json")).unwrap();
        Schemas {
            responses: compile_all(&doc["responses"]),
            requests: compile_all(&doc["requests"]),
            notifications: compile_all(&doc["notifications"]),
            error: compile(&doc["error"]),
        }
    })
}

fn check(validator: &jsonschema::Validator, what: &str, instance: &Value) -> Result<(), String> {
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!("{what}: {}", errors.join("; ")))
    }
}

/// Checks one frame dsh sent; `asked` maps the client's request ids to
/// their methods.
pub fn check_frame(line: &str, asked: &HashMap<String, String>) -> Result<(), String> {
    let s = schemas();
    let frame: Value = serde_json::from_str(line).map_err(|e| format!("not JSON ({e}): {line}"))?;
    if frame["jsonrpc"] != "2.0" {
        return Err(format!("not JSON-RPC 2.0: {line}"));
    }
    let shown = |what: &str| format!("{what} in {line}");
    match (frame.get("method").and_then(Value::as_str), frame.get("id")) {
        (Some(method), Some(_)) => {
            let v = s
                .requests
                .get(method)
                .ok_or_else(|| shown(&format!("agent request `{method}` has no schema")))?;
            check(
                v,
                &shown(&format!("request `{method}` params")),
                &frame["params"],
            )
        }
        (Some(method), None) => {
            let v = s
                .notifications
                .get(method)
                .ok_or_else(|| shown(&format!("agent notification `{method}` has no schema")))?;
            check(
                v,
                &shown(&format!("notification `{method}` params")),
                &frame["params"],
            )
        }
        (None, Some(id)) => {
            let method = asked
                .get(&id.to_string())
                .ok_or_else(|| shown("a response to no client request"))?;
            if let Some(error) = frame.get("error") {
                return check(&s.error, &shown("error"), error);
            }
            let v = s
                .responses
                .get(method)
                .ok_or_else(|| shown(&format!("response to `{method}` has no schema")))?;
            check(v, &shown(&format!("`{method}` result")), &frame["result"])
        }
        (None, None) => Err(shown("neither a request, a notification nor a response")),
    }
}

/// What a tap saw: the number of agent frames checked and the violations.
#[derive(Default)]
pub struct Checked {
    pub frames: usize,
    pub violations: Vec<String>,
    /// The method of every request and notification dsh sent, in order.
    pub methods: Vec<String>,
}

/// Connects `server_side` (the server's end) to a new client end through a
/// validating tap; returns the client's end.
pub fn tap(
    server_side: tokio::io::DuplexStream,
    checked: Arc<Mutex<Checked>>,
) -> tokio::io::DuplexStream {
    let (client_end, tap_end) = tokio::io::duplex(64 * 1024);
    let (server_read, mut server_write) = tokio::io::split(server_side);
    let (client_read, mut client_write) = tokio::io::split(tap_end);
    let asked: Arc<Mutex<HashMap<String, String>>> = Arc::default();
    let learn = asked.clone();
    // Client → server: remember each request's method.
    tokio::spawn(async move {
        let mut lines = BufReader::new(client_read).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if let Ok(frame) = serde_json::from_str::<Value>(&line)
                && let (Some(id), Some(method)) = (frame.get("id"), frame["method"].as_str())
            {
                learn
                    .lock()
                    .unwrap()
                    .insert(id.to_string(), method.to_string());
            }
            if server_write
                .write_all(format!("{line}\n").as_bytes())
                .await
                .is_err()
            {
                break;
            }
        }
        let _ = server_write.shutdown().await;
    });
    // Server → client: check every frame.
    tokio::spawn(async move {
        let mut lines = BufReader::new(server_read).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let verdict = check_frame(&line, &asked.lock().unwrap());
            {
                let mut c = checked.lock().unwrap();
                c.frames += 1;
                if let Some(method) = serde_json::from_str::<Value>(&line)
                    .ok()
                    .and_then(|f| f["method"].as_str().map(str::to_string))
                {
                    c.methods.push(method);
                }
                if let Err(e) = verdict {
                    c.violations.push(e);
                }
            }
            if client_write
                .write_all(format!("{line}\n").as_bytes())
                .await
                .is_err()
            {
                break;
            }
        }
        let _ = client_write.shutdown().await;
    });
    client_end
}

#[test]
fn the_bundled_schema_is_the_locked_crate_version() {
    let doc: Value = serde_json::from_str(include_str!("fixtures/acp-schema.json")).unwrap();
    let lock =
        std::fs::read_to_string(dsh_test_support::workspace_root().join("Cargo.lock")).unwrap();
    let locked = lock
        .split("[[package]]")
        .find(|p| p.contains(&format!("name = \"{LOCKED}\"\n")))
        .and_then(|p| p.lines().find_map(|l| l.strip_prefix("version = \"")))
        .map(|v| v.trim_end_matches('"').to_string())
        .unwrap();
    assert_eq!(doc["version"], locked.as_str());
}

#[test]
fn a_frame_off_the_schema_is_a_violation() {
    let mut asked = HashMap::new();
    asked.insert("1".to_string(), "session/prompt".to_string());
    let good = r#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}"#;
    assert_eq!(check_frame(good, &asked), Ok(()));
    let bad = r#"{"jsonrpc":"2.0","id":1,"result":{"stopReason":"gave_up"}}"#;
    assert!(check_frame(bad, &asked).is_err());
    let update = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}"#;
    assert_eq!(check_frame(update, &asked), Ok(()));
    let bad_update = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","status":"waiting"}}}"#;
    assert!(check_frame(bad_update, &asked).is_err());
    let unknown = r#"{"jsonrpc":"2.0","method":"session/shout","params":{}}"#;
    assert!(check_frame(unknown, &asked).is_err());
}
