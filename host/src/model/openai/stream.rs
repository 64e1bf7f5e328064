//! Reading a chat-completions answer: the SSE stream (`stream: true`) and
//! the plain JSON body some servers send instead. No I/O: bytes in,
//! [`ModelReply`] out, so every split and every malformation is unit-tested.
//!
//! [`SseDecoder`] turns bytes (split anywhere, CRLF or LF line ends,
//! `:` comments, multi-line `data:`) into event payloads. [`StreamReply`]
//! accumulates `choices[0].delta`: `content` text (each piece handed to the
//! caller as it arrives) and `tool_calls` merged by `index` (id, name and
//! argument fragments concatenated). It is complete once it has seen
//! `data: [DONE]` or a `finish_reason`; a stream that ends before either,
//! or carries a data payload that is not JSON, is a
//! [`OpenAiError::MalformedStream`].

use std::collections::BTreeMap;

use serde_json::Value;

use super::error::{OpenAiError, excerpt};
use crate::model::{ModelReply, ModelToolCall, StopReason};

/// Splits an SSE byte stream into the `data` of each event.
#[derive(Debug, Default)]
pub struct SseDecoder {
    /// Bytes of a line not yet ended.
    pending: Vec<u8>,
    /// `data` lines of the event being read, joined by `\n`.
    data: Option<String>,
}

impl SseDecoder {
    /// Feeds bytes; returns the data of every event they completed.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut events = Vec::new();
        self.pending.extend_from_slice(bytes);
        let mut start = 0;
        while let Some(offset) = self.pending[start..].iter().position(|b| *b == b'\n') {
            let end = start + offset;
            let mut line = &self.pending[start..end];
            if let [rest @ .., b'\r'] = line {
                line = rest;
            }
            // Lossy: only whole lines are decoded, so a character split
            // across chunks is whole by now; invalid bytes then show up as
            // a JSON error rather than a lost event.
            let line = String::from_utf8_lossy(line).into_owned();
            if let Some(data) = self.line(&line) {
                events.push(data);
            }
            start = end + 1;
        }
        self.pending.drain(..start);
        events
    }

    /// Ends the input: an event left without its blank line still counts
    /// (lenient: some servers close right after the last `data:` line).
    pub fn finish(&mut self) -> Option<String> {
        let rest = std::mem::take(&mut self.pending);
        if !rest.is_empty() {
            let line = String::from_utf8_lossy(&rest).into_owned();
            if let Some(data) = self.line(line.trim_end_matches('\r')) {
                return Some(data);
            }
        }
        self.data.take()
    }

    fn line(&mut self, line: &str) -> Option<String> {
        if line.is_empty() {
            return self.data.take();
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        // `event`, `id` and `retry` mean nothing for chat completions.
        if field == "data" {
            match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_string()),
            }
        }
        None
    }
}

/// A tool call being assembled from deltas.
#[derive(Debug, Default, Clone)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// What a stream hands on as it arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Live<'a> {
    /// A piece of the answer's text.
    Text(&'a str),
    /// A piece of reasoning (`delta.reasoning_content`).
    Thought(&'a str),
    /// The token counts of the request (a chunk's `usage`).
    Usage(Usage),
}

/// A request's token counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    /// Tokens of the request (`prompt_tokens`).
    pub prompt_tokens: u64,
    /// Tokens of the answer (`completion_tokens`).
    pub completion_tokens: u64,
}

impl Usage {
    /// The `usage` object of a chunk or body, when it has one.
    pub fn of(body: &Value) -> Option<Usage> {
        let usage = body.get("usage")?;
        Some(Usage {
            prompt_tokens: usage.get("prompt_tokens")?.as_u64()?,
            completion_tokens: usage.get("completion_tokens")?.as_u64()?,
        })
    }
}

/// Accumulates a streamed reply.
#[derive(Debug, Default)]
pub struct StreamReply {
    decoder: SseDecoder,
    text: String,
    calls: BTreeMap<u64, PartialCall>,
    finish_reason: Option<String>,
    done: bool,
    /// The answering model's name (a chunk's `model`).
    model: Option<String>,
    /// The last `usage` object a chunk carried, whole.
    usage: Option<Value>,
}

impl StreamReply {
    /// Feeds a chunk of the body, calling `on_delta` with each text piece.
    pub fn push(
        &mut self,
        bytes: &[u8],
        on_delta: &mut impl FnMut(Live<'_>),
    ) -> Result<(), OpenAiError> {
        for data in self.decoder.push(bytes) {
            self.event(&data, on_delta)?;
        }
        Ok(())
    }

    /// Whether `[DONE]` arrived: nothing after it matters.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Ends the body and builds the reply.
    pub fn finish(
        mut self,
        on_delta: &mut impl FnMut(Live<'_>),
    ) -> Result<ModelReply, OpenAiError> {
        if !self.done
            && let Some(data) = self.decoder.finish()
        {
            self.event(&data, on_delta)?;
        }
        if !self.done && self.finish_reason.is_none() {
            return Err(OpenAiError::MalformedStream(
                "the stream ended before `data: [DONE]` or a finish_reason \
                 (connection closed mid-answer?)"
                    .into(),
            ));
        }
        let calls = self.calls.into_values().collect();
        let mut reply = build_reply(self.text, calls, self.finish_reason.as_deref())?;
        reply.model = self.model;
        reply.usage = self.usage;
        Ok(reply)
    }

    fn event(
        &mut self,
        data: &str,
        on_delta: &mut impl FnMut(Live<'_>),
    ) -> Result<(), OpenAiError> {
        if self.done {
            return Ok(());
        }
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            OpenAiError::MalformedStream(format!(
                "a data line is not JSON ({e}): {}",
                excerpt(data, 120)
            ))
        })?;
        if let Some(error) = chunk.get("error") {
            return Err(OpenAiError::ServerReported(server_error(error)));
        }
        if let Some(usage) = Usage::of(&chunk) {
            on_delta(Live::Usage(usage));
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(usage.clone());
        }
        if let Some(model) = chunk.get("model").and_then(Value::as_str) {
            self.model = Some(model.to_string());
        }
        // Usage-only chunks have no choices; only the first choice is ours
        // (we never ask for `n > 1`).
        let Some(choice) = chunk.pointer("/choices/0") else {
            return Ok(());
        };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_string());
        }
        let Some(delta) = choice.get("delta") else {
            return Ok(());
        };
        if let Some(text) = delta.get("content").and_then(Value::as_str)
            && !text.is_empty()
        {
            self.text.push_str(text);
            on_delta(Live::Text(text));
        }
        // DeepSeek's reasoning models think aloud in `reasoning_content`:
        // shown live, never part of the reply.
        if let Some(thought) = delta.get("reasoning_content").and_then(Value::as_str)
            && !thought.is_empty()
        {
            on_delta(Live::Thought(thought));
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for call in calls {
                self.merge_call(call);
            }
        }
        Ok(())
    }

    fn merge_call(&mut self, delta: &Value) {
        let id = delta.get("id").and_then(Value::as_str).unwrap_or_default();
        let index = match delta.get("index").and_then(Value::as_u64) {
            Some(index) => index,
            // No index (some OpenAI-compatible servers): a delta with a new
            // id starts a call, one without continues the last.
            None => match self.calls.last_key_value() {
                Some((last, call)) if id.is_empty() || call.id == id => *last,
                Some((last, _)) => last + 1,
                None => 0,
            },
        };
        let call = self.calls.entry(index).or_default();
        if !id.is_empty() {
            call.id = id.to_string();
        }
        let function = delta.get("function");
        let field = |key: &str| {
            function
                .and_then(|f| f.get(key))
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        // OpenAI sends the name once; a server repeating it whole on every
        // delta must not turn `Bash` into `BashBash`.
        let name = field("name");
        if call.name != name {
            call.name.push_str(name);
        }
        call.arguments.push_str(field("arguments"));
    }
}

/// The reply in a non-streaming (`application/json`) body.
pub fn reply_from_json(body: &Value) -> Result<ModelReply, OpenAiError> {
    if let Some(error) = body.get("error") {
        return Err(OpenAiError::ServerReported(server_error(error)));
    }
    let choice = body.pointer("/choices/0").ok_or_else(|| {
        OpenAiError::MalformedResponse(format!(
            "no `choices[0]` in {}",
            excerpt(&body.to_string(), 120)
        ))
    })?;
    let message = choice.get("message").cloned().unwrap_or(Value::Null);
    let text = message
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .map(|c| {
                    let field = |key: &str| {
                        c.pointer(key)
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string()
                    };
                    PartialCall {
                        id: field("/id"),
                        name: field("/function/name"),
                        arguments: field("/function/arguments"),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let reason = choice.get("finish_reason").and_then(Value::as_str);
    let mut reply = build_reply(text, calls, reason)?;
    reply.model = body
        .get("model")
        .and_then(Value::as_str)
        .map(str::to_string);
    reply.usage = body.get("usage").filter(|u| u.is_object()).cloned();
    Ok(reply)
}

fn server_error(error: &Value) -> String {
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| error.to_string());
    excerpt(&message, 300)
}

fn build_reply(
    text: String,
    calls: Vec<PartialCall>,
    finish_reason: Option<&str>,
) -> Result<ModelReply, OpenAiError> {
    let mut tool_calls = Vec::with_capacity(calls.len());
    for (i, call) in calls.into_iter().enumerate() {
        // An empty string is how some models call a tool without arguments.
        // Checked here, handed on as the model wrote it (JSON text in a
        // string: `crate::model::arguments_value`).
        let arguments = if call.arguments.trim().is_empty() {
            Value::Object(Default::default())
        } else {
            serde_json::from_str::<serde::de::IgnoredAny>(&call.arguments).map_err(|e| {
                OpenAiError::MalformedToolCall {
                    position: i + 1,
                    name: call.name.clone(),
                    id: call.id.clone(),
                    reason: format!("{e} in {}", excerpt(&call.arguments, 120)),
                }
            })?;
            Value::String(call.arguments)
        };
        tool_calls.push(ModelToolCall {
            id: call.id,
            name: call.name,
            arguments,
        });
    }
    let stop_reason = match finish_reason {
        Some("length") => StopReason::MaxTokens,
        Some("tool_calls" | "function_call") => StopReason::ToolUse,
        // Some servers say `stop` after tool calls: the calls are what count.
        _ if !tool_calls.is_empty() => StopReason::ToolUse,
        _ => StopReason::EndTurn,
    };
    Ok(ModelReply {
        text,
        tool_calls,
        stop_reason,
        ..ModelReply::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn chunk(delta: Value, finish: Option<&str>) -> String {
        let c = json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {c}\n\n")
    }

    /// Feeds `body` in pieces of `size` bytes; returns the deltas and the reply.
    fn feed(body: &str, size: usize) -> (Vec<String>, Result<ModelReply, OpenAiError>) {
        let mut deltas = Vec::new();
        let mut on_delta = |d: Live<'_>| {
            if let Live::Text(t) = d {
                deltas.push(t.to_string());
            }
        };
        let mut reply = StreamReply::default();
        for piece in body.as_bytes().chunks(size) {
            if let Err(e) = reply.push(piece, &mut on_delta) {
                return (deltas, Err(e));
            }
        }
        let result = reply.finish(&mut on_delta);
        (deltas, result)
    }

    #[test]
    fn reasoning_and_usage_are_handed_on_and_the_reply_keeps_model_and_usage() {
        let body = [
            format!(
                "data: {}\n\n",
                json!({"model": "gpt-x-1", "choices": [{"index": 0,
                    "delta": {"role": "assistant", "reasoning_content": "Hmm, "}}]})
            ),
            chunk(json!({"reasoning_content": "ls."}), None),
            chunk(json!({"content": "Done."}), Some("stop")),
            format!(
                "data: {}\n\n",
                json!({"choices": [], "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}})
            ),
            "data: [DONE]\n\n".to_string(),
        ]
        .concat();
        let mut seen: Vec<String> = Vec::new();
        let mut on_live = |d: Live<'_>| {
            seen.push(match d {
                Live::Text(t) => format!("text:{t}"),
                Live::Thought(t) => format!("thought:{t}"),
                Live::Usage(u) => format!("usage:{}+{}", u.prompt_tokens, u.completion_tokens),
            })
        };
        let mut reply = StreamReply::default();
        reply.push(body.as_bytes(), &mut on_live).unwrap();
        let reply = reply.finish(&mut on_live).unwrap();
        assert_eq!(reply.text, "Done.");
        assert_eq!(
            seen,
            ["thought:Hmm, ", "thought:ls.", "text:Done.", "usage:120+30"]
        );
        // What the provider said of its answer, for an `Agent` call's report.
        assert_eq!(reply.model.as_deref(), Some("gpt-x-1"));
        assert_eq!(
            reply.usage,
            Some(json!({"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}))
        );
    }

    fn tool_stream() -> String {
        [
            chunk(json!({"role": "assistant", "content": "Let me"}), None),
            ": keep-alive comment\r\n\r\n".to_string(),
            chunk(json!({"content": " look."}), None),
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "a", "type": "function",
                        "function": {"name": "Bash", "arguments": "{\"comm"}}]}),
                None,
            ),
            chunk(
                json!({"tool_calls": [{"index": 1, "id": "b", "function": {"name": "Read", "arguments": ""}}]}),
                None,
            ),
            chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "and\": \"ls\"}"}}]}),
                None,
            ),
            chunk(
                json!({"tool_calls": [{"index": 1, "function": {"arguments": "{\"path\": \"é\"}"}}]}),
                None,
            ),
            chunk(json!({}), Some("tool_calls")),
            "data: [DONE]\r\n\r\n".to_string(),
        ]
        .concat()
    }

    #[test]
    fn any_split_of_the_stream_gives_the_same_reply() {
        let body = tool_stream();
        for size in [1, 2, 3, 7, 64, body.len()] {
            let (deltas, reply) = feed(&body, size);
            let reply = reply.unwrap();
            assert_eq!(deltas, ["Let me", " look."], "size {size}");
            assert_eq!(reply.text, "Let me look.");
            assert_eq!(reply.stop_reason, StopReason::ToolUse);
            assert_eq!(
                reply.tool_calls,
                vec![
                    // As the model wrote them (the text the deltas joined).
                    ModelToolCall {
                        id: "a".into(),
                        name: "Bash".into(),
                        arguments: json!("{\"command\": \"ls\"}")
                    },
                    ModelToolCall {
                        id: "b".into(),
                        name: "Read".into(),
                        arguments: json!("{\"path\": \"é\"}")
                    },
                ]
            );
        }
    }

    #[test]
    fn multi_line_data_and_other_fields() {
        let mut d = SseDecoder::default();
        let events = d.push(b"event: x\nid: 1\ndata: {\"a\":\ndata: 1}\n\ndata:[DONE]\n\n");
        assert_eq!(events, ["{\"a\":\n1}", "[DONE]"]);
        assert_eq!(d.push(b"data: tail"), Vec::<String>::new());
        assert_eq!(d.finish().as_deref(), Some("tail"));
    }

    #[test]
    fn finish_reasons_map_to_stop_reasons() {
        for (reason, stop) in [
            ("stop", StopReason::EndTurn),
            ("length", StopReason::MaxTokens),
            ("content_filter", StopReason::EndTurn),
        ] {
            let body = chunk(json!({"content": "x"}), Some(reason));
            // No [DONE]: a finish_reason is enough to call the answer whole.
            let (_, reply) = feed(&body, 5);
            assert_eq!(reply.unwrap().stop_reason, stop, "{reason}");
        }
    }

    #[test]
    fn a_stream_cut_short_is_malformed() {
        let body = chunk(json!({"content": "half an ans"}), None);
        let (deltas, reply) = feed(&body, 4);
        assert_eq!(deltas, ["half an ans"]);
        let err = reply.unwrap_err().to_string();
        assert!(
            err.starts_with("malformed stream: the stream ended before"),
            "{err}"
        );
    }

    #[test]
    fn a_data_line_that_is_not_json_is_malformed() {
        let body = format!(
            "{}data: <html>oops</html>\n\n",
            chunk(json!({"content": "a"}), None)
        );
        let err = feed(&body, 10).1.unwrap_err().to_string();
        assert!(
            err.starts_with("malformed stream: a data line is not JSON"),
            "{err}"
        );
        assert!(err.contains("<html>oops</html>"), "{err}");
    }

    #[test]
    fn bad_arguments_name_the_call() {
        let body = [
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "c9", "function": {"name": "Bash", "arguments": "{\"command\": "}}]}),
                Some("tool_calls"),
            ),
            "data: [DONE]\n\n".into(),
        ]
        .concat();
        let err = feed(&body, 100).1.unwrap_err().to_string();
        assert!(
            err.starts_with(
                "malformed tool call #1 (`Bash`, id `c9`): its arguments are not valid JSON"
            ),
            "{err}"
        );
    }

    #[test]
    fn an_error_object_in_the_stream_is_reported() {
        let body = "data: {\"error\": {\"message\": \"overloaded\"}}\n\n";
        let err = feed(body, 100).1.unwrap_err().to_string();
        assert_eq!(err, "the model server reported an error: overloaded");
    }

    #[test]
    fn calls_without_index_split_on_new_ids() {
        let body = [
            chunk(json!({"tool_calls": [{"id": "x", "function": {"name": "A", "arguments": "{}"}}]}), None),
            chunk(json!({"tool_calls": [{"id": "y", "function": {"name": "B", "arguments": "{\"k\""}}]}), None),
            chunk(json!({"tool_calls": [{"function": {"name": "B", "arguments": ": 1}"}}]}), Some("tool_calls")),
        ]
        .concat();
        let reply = feed(&body, 100).1.unwrap();
        let names: Vec<_> = reply.tool_calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["A", "B"]);
        assert_eq!(reply.tool_calls[1].arguments, json!("{\"k\": 1}"));
    }

    #[test]
    fn non_streaming_bodies_are_read_too() {
        let body = json!({"model": "m", "usage": {"prompt_tokens": 1, "completion_tokens": 2},
            "choices": [{"message": {"role": "assistant", "content": null,
            "tool_calls": [{"id": "t1", "type": "function",
                "function": {"name": "Bash", "arguments": "{\"command\":\"pwd\"}"}}]},
            "finish_reason": "tool_calls"}]});
        let reply = reply_from_json(&body).unwrap();
        assert_eq!(reply.text, "");
        assert_eq!(reply.stop_reason, StopReason::ToolUse);
        assert_eq!(
            reply.tool_calls[0].arguments,
            json!("{\"command\":\"pwd\"}")
        );
        assert_eq!(reply.model.as_deref(), Some("m"));
        assert_eq!(
            reply.usage,
            Some(json!({"prompt_tokens": 1, "completion_tokens": 2}))
        );
        let err = reply_from_json(&json!({"object": "x"}))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("malformed response: no `choices[0]`"),
            "{err}"
        );
    }
}
