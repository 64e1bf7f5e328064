//! What one socket hook request carries, and its request line.
//!
//! The bridge sends the `hook-transport` service the whole [`RunRequest`]
//! as JSON text, its hook's stdin (the payload JSON) escaped as a JSON
//! string. A socket request carries that stdin as a JSON string too, so the
//! service keeps it as the text it came in ([`SocketCall::from_call_text`]) and
//! writes it into the request line as it is: the payload is escaped once,
//! by the bridge, and never unescaped and escaped again on the way to the
//! server. Its `env` is kept as the text it came in too, when that text is
//! exactly what serde writes for the map (as the bridges send it): the
//! variables are checked to be strings (no copy is made of them) and read
//! into a map only to start a dsh-run server. The line is byte for byte
//! what serde writes for a [`dsh_hook_protocol::transport::SocketRequest`]
//! (a test holds it to that), so the wire format is unchanged.

use std::borrow::Cow;
use std::collections::BTreeMap;

use dsh_hook_protocol::RunRequest;
use dsh_hook_protocol::transport::{SOCKET_METHOD, SocketHandler};
use serde::Deserialize;
use serde_json::value::RawValue;

/// One socket hook request's `params`, and what starting a dsh-run server
/// for it needs.
pub struct SocketCall<'a> {
    /// `params.stdin`, as the JSON string it is written as (quotes and
    /// escapes included).
    stdin_json: Cow<'a, str>,
    /// The session's working directory.
    pub cwd: Cow<'a, str>,
    /// The variables the bridge adds to a command hook's environment.
    env: Env<'a>,
    /// Inherited variables a started server does not get.
    pub env_remove_prefixes: Cow<'a, [String]>,
    /// The hook's timeout.
    pub timeout_ms: Option<u64>,
}

/// A call's `env`: a map, or the JSON text of one written exactly as
/// serde writes it ([`Canonical`]), which goes into the line as it is.
enum Env<'a> {
    Map(Cow<'a, BTreeMap<String, String>>),
    Text(&'a str),
}

/// The fields of a [`RunRequest`]'s JSON a socket hook reads, its stdin
/// and env left as text (a socket hook runs no process: the rest is not
/// read).
#[derive(Deserialize)]
struct WireRun<'a> {
    #[serde(borrow, default)]
    stdin: Option<&'a RawValue>,
    #[serde(borrow)]
    cwd: Cow<'a, str>,
    /// `null` is kept as text (and refused), not read as no `env`.
    #[serde(borrow, default, deserialize_with = "some_raw")]
    env: Option<&'a RawValue>,
    #[serde(default)]
    env_remove_prefixes: Vec<String>,
    #[serde(default)]
    timeout_ms: Option<u64>,
}

fn some_raw<'a, 'de: 'a, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<&'a RawValue>, D::Error> {
    <&'a RawValue>::deserialize(d).map(Some)
}

/// A `hook-transport` call whose handler is a socket's.
#[derive(Deserialize)]
struct SocketWire<'a> {
    #[serde(borrow)]
    handler: WireHandler<'a>,
    #[serde(borrow)]
    run: WireRun<'a>,
}

/// [`dsh_hook_protocol::transport::Handler`], read as a socket's: its
/// `type` (any other than `socket` is not one) and a socket's two keys;
/// read as a struct, not as serde's tagged enum, which copies the whole
/// object into a buffer first.
#[derive(Deserialize)]
struct WireHandler<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    command: Option<String>,
}

impl<'a> SocketCall<'a> {
    /// The call for `run`: its stdin written as a JSON string here.
    pub fn from_run(run: &'a RunRequest) -> Result<SocketCall<'a>, serde_json::Error> {
        Ok(SocketCall {
            stdin_json: Cow::Owned(serde_json::to_string(&run.stdin)?),
            cwd: run.cwd.to_string_lossy(),
            env: Env::Map(Cow::Borrowed(&run.env)),
            env_remove_prefixes: Cow::Borrowed(&run.env_remove_prefixes),
            timeout_ms: run.timeout_ms,
        })
    }

    /// The handler and the call of a whole `hook-transport` call's JSON
    /// text, read in one pass, when its handler is a socket's; `None` when
    /// it is not (or the text does not read so: the caller reads it again
    /// to say what is wrong).
    pub fn from_call_text(
        args: &'a str,
    ) -> Option<Result<(SocketHandler, SocketCall<'a>), String>> {
        let wire: SocketWire<'a> = serde_json::from_str(args).ok()?;
        if wire.handler.kind != "socket" {
            return None;
        }
        let handler = SocketHandler {
            path: wire.handler.path,
            command: wire.handler.command,
        };
        Some(SocketCall::from_wire_run(wire.run).map(|call| (handler, call)))
    }

    fn from_wire_run(wire: WireRun<'a>) -> Result<SocketCall<'a>, String> {
        let stdin_json = match wire.stdin {
            None => Cow::Borrowed("\"\""),
            // A JSON value that opens with a quote is one whole string
            // (serde_json checked it; a raw string holds no newline).
            Some(raw) if raw.get().starts_with('"') => Cow::Borrowed(raw.get()),
            Some(raw) => {
                let shown: String = raw.get().chars().take(40).collect();
                return Err(format!("`run.stdin` is not a string: {shown}"));
            }
        };
        let env = match wire.env.map(RawValue::get) {
            None => Env::Map(Cow::Owned(BTreeMap::new())),
            Some(text) => match Canonical::check(text) {
                Ok(true) => Env::Text(text),
                Ok(false) => Env::Map(Cow::Owned(
                    serde_json::from_str(text).map_err(|e| format!("`run.env`: {e}"))?,
                )),
                Err(e) => return Err(format!("`run.env`: {e}")),
            },
        };
        Ok(SocketCall {
            stdin_json,
            cwd: wire.cwd,
            env,
            env_remove_prefixes: Cow::Owned(wire.env_remove_prefixes),
            timeout_ms: wire.timeout_ms,
        })
    }

    /// The variables the bridge adds to a command hook's environment, as
    /// a map (read from their text here when they came as text).
    pub fn env(&self) -> Cow<'_, BTreeMap<String, String>> {
        match &self.env {
            Env::Map(map) => Cow::Borrowed(map.as_ref()),
            // Checked to be an object of strings when it was read.
            Env::Text(text) => Cow::Owned(serde_json::from_str(text).unwrap_or_default()),
        }
    }

    /// The length of the stdin as written (for sizing a line).
    pub fn stdin_len(&self) -> usize {
        self.stdin_json.len()
    }

    /// Appends the request line for `id` (with its newline) to `line`.
    pub fn write_line(&self, id: u64, line: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        line.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        serde_json::to_writer(&mut *line, &id)?;
        line.extend_from_slice(br#","method":"#);
        serde_json::to_writer(&mut *line, SOCKET_METHOD)?;
        line.extend_from_slice(br#","params":{"stdin":"#);
        line.extend_from_slice(self.stdin_json.as_bytes());
        line.extend_from_slice(br#","cwd":"#);
        serde_json::to_writer(&mut *line, &self.cwd)?;
        line.extend_from_slice(br#","env":"#);
        match &self.env {
            Env::Map(map) => serde_json::to_writer(&mut *line, map)?,
            Env::Text(text) => line.extend_from_slice(text.as_bytes()),
        }
        line.extend_from_slice(br#","timeout_ms":"#);
        serde_json::to_writer(&mut *line, &self.timeout_ms)?;
        line.extend_from_slice(b"}}\n");
        Ok(())
    }
}

/// Reads an object of strings without keeping any of it: whether it is
/// written exactly as serde writes the `BTreeMap` it stands for (names in
/// strictly ascending order, no escape in any name or value, no
/// whitespace), and so can go into a line as it is.
struct Canonical;

impl Canonical {
    /// Whether `text`, an object of strings, is so written.
    fn check(text: &str) -> Result<bool, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_str(text);
        let shape = serde::Deserializer::deserialize_map(&mut de, Shape)?;
        de.end()?;
        Ok(shape.plain && shape.len == text.len())
    }
}

/// What [`Canonical::check`] learns of an object of strings: whether its
/// names ascend and nothing is escaped, and its length when written
/// compactly.
struct ObjectShape {
    plain: bool,
    len: usize,
}

struct Shape;

impl<'de> serde::de::Visitor<'de> for Shape {
    type Value = ObjectShape;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object of strings")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<ObjectShape, A::Error> {
        let mut plain = true;
        // `{}`, and per entry `"name":"value",` less the last comma.
        let mut len = 1;
        let mut last: Option<Cow<'de, str>> = None;
        while let Some(Text(name)) = map.next_key::<Text<'de>>()? {
            let Text(value) = map.next_value::<Text<'de>>()?;
            plain &= matches!((&name, &value), (Cow::Borrowed(_), Cow::Borrowed(_)))
                && last.as_deref().is_none_or(|l| l < name.as_ref());
            len += name.len() + value.len() + 6;
            last = Some(name);
        }
        Ok(ObjectShape {
            plain,
            len: if last.is_some() { len } else { 2 },
        })
    }
}

/// A JSON string, borrowed when it holds no escape.
struct Text<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(s.to_string())))
            }
        }
        d.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dsh_hook_protocol::transport::SocketRequest;

    fn run() -> RunRequest {
        let mut run = RunRequest::new(vec!["/bin/sh".into()], "/tmp/a \"dir\"");
        run.stdin = "{\"tool_input\":{\"command\":\"echo \\\"hi\\\"\\n\\u0001é\"}}\n".into();
        run.env.insert("CLAUDE_PROJECT_DIR".into(), "/p\\q".into());
        run.env.insert("CLAUDECODE".into(), "1".into());
        run.timeout_ms = Some(600_000);
        run
    }

    fn serde_line(id: u64, run: &RunRequest) -> Vec<u8> {
        let mut want = serde_json::to_vec(&SocketRequest::new(id, run)).unwrap();
        want.push(b'\n');
        want
    }

    #[test]
    fn the_line_is_what_serde_writes_for_a_socket_request() {
        for timeout in [Some(600_000), None] {
            let mut run = run();
            run.timeout_ms = timeout;
            let want = serde_line(7, &run);
            let mut typed = Vec::new();
            SocketCall::from_run(&run)
                .unwrap()
                .write_line(7, &mut typed)
                .unwrap();
            assert_eq!(
                String::from_utf8_lossy(&typed),
                String::from_utf8_lossy(&want)
            );
            // Through the service: read in one pass, the stdin kept as
            // the bridge wrote it.
            let handler = SocketHandler {
                path: Some("/s.sock".into()),
                command: None,
            };
            let text = serde_json::to_string(&dsh_hook_protocol::transport::TransportRequest {
                handler: dsh_hook_protocol::transport::Handler::Socket(handler.clone()),
                run: run.clone(),
            })
            .unwrap();
            let (got, call) = SocketCall::from_call_text(&text).unwrap().unwrap();
            assert_eq!(got, handler);
            let mut whole = Vec::new();
            call.write_line(7, &mut whole).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&whole),
                String::from_utf8_lossy(&want)
            );
        }
    }

    fn call_text(run: &str) -> String {
        format!("{{\"handler\":{{\"type\":\"socket\",\"path\":\"/s\"}},\"run\":{run}}}")
    }

    #[test]
    fn a_run_whose_stdin_is_not_a_string_is_refused_naming_it() {
        for stdin in ["{\"a\":1}", "12", "[\"x\"]"] {
            let text = call_text(&format!(
                "{{\"program\":[],\"cwd\":\"/\",\"stdin\":{stdin}}}"
            ));
            let e = SocketCall::from_call_text(&text).unwrap().err().unwrap();
            assert!(e.starts_with("`run.stdin` is not a string"), "{e}");
        }
    }

    fn line_of(text: &str) -> String {
        let (_, call) = SocketCall::from_call_text(text).unwrap().unwrap();
        let mut line = Vec::new();
        call.write_line(1, &mut line).unwrap();
        String::from_utf8(line).unwrap()
    }

    #[test]
    fn an_env_in_any_form_is_written_as_serde_writes_its_map() {
        let want = r#","env":{"A":"1","B":"x\"y"},"timeout_ms":null}}"#;
        for env in [
            r#"{"A":"1","B":"x\"y"}"#,
            r#"{"B":"x\"y","A":"1"}"#,
            r#"{"A":"0","B":"x\"y","A":"1"}"#,
            "{\n\"A\": \"1\",\r\n\"B\":\"x\\\"y\"}",
            r#"{"\u0041":"1","B":"x\"y"}"#,
        ] {
            let line = line_of(&call_text(&format!(
                "{{\"cwd\":\"/\",\"stdin\":\"x\",\"env\":{env}}}"
            )));
            assert!(line.ends_with(&format!("{want}\n")), "{env}: {line}");
            assert_eq!(line.matches('\n').count(), 1, "{line}");
        }
        // The bridge's own text is not read into a map on the way.
        let text = call_text(r#"{"cwd":"/","env":{"A":"1","B":"x\"y"}}"#);
        let (_, call) = SocketCall::from_call_text(&text).unwrap().unwrap();
        assert!(matches!(call.env, Env::Map(_)), "an escape is read");
        let text = call_text(r#"{"cwd":"/","env":{"A":"1","B":"2"}}"#);
        let (_, call) = SocketCall::from_call_text(&text).unwrap().unwrap();
        assert!(matches!(call.env, Env::Text(r#"{"A":"1","B":"2"}"#)));
        // The server a call starts gets the variables as a map.
        let text = call_text(r#"{"cwd":"/","env":{"A":"1","B":"2"}}"#);
        let (_, call) = SocketCall::from_call_text(&text).unwrap().unwrap();
        assert_eq!(call.env().get("B").map(String::as_str), Some("2"));
    }

    #[test]
    fn an_env_that_is_not_an_object_of_strings_is_refused_naming_it() {
        for env in [r#"{"A":1}"#, r#"["A"]"#, "null", r#"{"A":{"B":"c"}}"#] {
            let text = call_text(&format!("{{\"cwd\":\"/\",\"env\":{env}}}"));
            let e = SocketCall::from_call_text(&text).unwrap().err().unwrap();
            assert!(e.starts_with("`run.env`: "), "{env}: {e}");
        }
    }

    #[test]
    fn what_does_not_read_as_a_socket_call_is_left_to_the_whole_reading() {
        let no_cwd = call_text("{\"stdin\":\"x\"}");
        let cut = call_text("{\"cwd\":\"/\",\"stdin\":\"x}");
        let http = "{\"handler\":{\"type\":\"http\",\"url\":\"http://127.0.0.1:1/\"},\"run\":{\"program\":[],\"cwd\":\"/\"}}";
        // An http call is never read as a socket's, whatever its run holds.
        let http_odd = "{\"run\":{\"cwd\":\"/\",\"stdin\":{},\"env\":{\"B\":\"1\",\"A\":\"2\"}},\"handler\":{\"url\":\"http://127.0.0.1:1/\",\"type\":\"http\",\"headers\":[[\"A\",\"b\"]]}}";
        let untyped = "{\"handler\":{\"path\":\"/s\"},\"run\":{\"cwd\":\"/\"}}";
        for text in [no_cwd.as_str(), cut.as_str(), http, http_odd, untyped] {
            assert!(SocketCall::from_call_text(text).is_none(), "{text}");
        }
    }
}
