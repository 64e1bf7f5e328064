//! A Jupyter notebook (`.ipynb`) as Claude Code 2.1.197's `Read` shows it
//! (read from its bundled source, confirmed by the recorded `S293-edits`):
//! one text block per cell, `<cell id="c1"><cell_type>markdown</cell_type>
//! source</cell id="c1">` (the type only for a cell that is not code, a
//! `<language>` only for code that is not Python), each output after its
//! cell as `\n<text>` or an image block, adjacent texts joined by `\n`.
//! The `tool_response` is `{"type": "notebook", "file": {"filePath",
//! "cells"}}`, each cell `{cellType, source, execution_count?, cell_id,
//! language?, outputs?}`.
//!
//! An output's text over 30,000 characters is cut with Claude Code's
//! `... [N lines truncated] ...`; a cell whose outputs hold more than
//! 10,000 characters (text and image data) shows a pointer to them
//! instead.

use std::path::Path;

use dsh_plugin_api::types::{ContentBlock, ContentBlock_NE};
use dsh_plugin_api::{RVec, ToolResult};
use serde_json::{Map, Value, json};

/// An output text longer than this is cut (Claude Code's
/// `BASH_MAX_OUTPUT_LENGTH` default).
const MAX_OUTPUT_TEXT: usize = 30_000;
/// A cell whose outputs are larger than this shows a pointer to them.
const MAX_CELL_OUTPUTS: usize = 10_000;

/// Whether `path` names a notebook (by its extension, as Claude Code).
pub fn is_notebook(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "ipynb")
}

/// Why a notebook cannot be read, in Claude Code's words.
pub fn parse(text: &str) -> Result<Value, String> {
    let nb: Value = serde_json::from_str(text).map_err(|e| {
        format!(
            "Notebook file is not valid JSON (it may be truncated, corrupted, or still being written): {e}"
        )
    })?;
    let cells_ok = nb["cells"]
        .as_array()
        .is_some_and(|cells| cells.iter().all(Value::is_object));
    if !cells_ok {
        return Err("Notebook file is not a valid Jupyter notebook (top-level \"cells\" must be an array of cell objects).".into());
    }
    Ok(nb)
}

/// A cell's or an output's text: strings joined.
fn joined(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => Some(parts.iter().filter_map(Value::as_str).collect()),
        _ => None,
    }
}

/// An output text as the model reads it: cut past [`MAX_OUTPUT_TEXT`]
/// UTF-16 units unless it is an image's data URL.
fn output_text(v: &Value) -> String {
    let Some(text) = joined(v).filter(|t| !t.is_empty()) else {
        return String::new();
    };
    let is_data_url = text.len() > 11
        && text[..11].eq_ignore_ascii_case("data:image/")
        && text.contains(";base64,");
    if is_data_url || text.encode_utf16().count() <= MAX_OUTPUT_TEXT {
        return text;
    }
    let mut units = 0;
    let cut = text
        .char_indices()
        .find(|(_, c)| {
            units += c.len_utf16();
            units > MAX_OUTPUT_TEXT
        })
        .map_or(text.len(), |(i, _)| i);
    let dropped = text[cut..].matches('\n').count() + 1;
    format!("{}\n\n... [{dropped} lines truncated] ...", &text[..cut])
}

/// A PNG or JPEG in an output's data, when its bytes are one.
fn output_image(data: &Value) -> Option<Value> {
    use base64::Engine as _;
    for media in ["image/png", "image/jpeg"] {
        let Some(b64) = data[media].as_str() else {
            continue;
        };
        let clean: String = b64.chars().filter(|c| !c.is_whitespace()).collect();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&clean)
            .ok()?;
        let known = bytes.starts_with(b"\x89PNG\r\n\x1a\n") || bytes.starts_with(b"\xff\xd8\xff");
        return known.then(|| json!({"image_data": clean, "media_type": media}));
    }
    None
}

/// One output as Claude Code keeps it (`null` for a kind it does not know).
fn output(o: &Value) -> Value {
    let kind = o["output_type"].clone();
    match o["output_type"].as_str() {
        Some("stream") => json!({"output_type": kind, "text": output_text(&o["text"])}),
        Some("execute_result" | "display_data") => {
            let mut out =
                json!({"output_type": kind, "text": output_text(&o["data"]["text/plain"])});
            if let Some(image) = output_image(&o["data"]) {
                out["image"] = image;
            }
            out
        }
        Some("error") => {
            let traceback: Vec<&str> = o["traceback"]
                .as_array()
                .map(|t| t.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let text = format!(
                "{}: {}\n{}",
                o["ename"].as_str().unwrap_or("undefined"),
                o["evalue"].as_str().unwrap_or("undefined"),
                traceback.join("\n")
            );
            json!({"output_type": kind, "text": output_text(&Value::String(text))})
        }
        _ => Value::Null,
    }
}

/// Cell `index` of a notebook whose language is `language`.
fn cell(c: &Value, index: usize, language: &str) -> Value {
    let id = c["id"]
        .as_str()
        .map_or_else(|| format!("cell-{index}"), String::from);
    let code = c["cell_type"] == "code";
    let mut out = Map::new();
    out.insert("cellType".into(), c["cell_type"].clone());
    out.insert(
        "source".into(),
        joined(&c["source"]).map_or(Value::Null, Value::String),
    );
    if code
        && let Some(n) = c["execution_count"]
            .as_f64()
            .filter(|n| *n != 0.0)
            .and(c.get("execution_count"))
    {
        out.insert("execution_count".into(), n.clone());
    }
    out.insert("cell_id".into(), json!(id));
    if code {
        out.insert("language".into(), json!(language));
    }
    let outputs = c["outputs"].as_array().filter(|o| code && !o.is_empty());
    if let Some(outputs) = outputs {
        let kept: Vec<Value> = outputs.iter().map(output).collect();
        let size: usize = kept
            .iter()
            .map(|o| {
                o["text"].as_str().map_or(0, |t| t.encode_utf16().count())
                    + o["image"]["image_data"].as_str().map_or(0, str::len)
            })
            .sum();
        let kept = if size > MAX_CELL_OUTPUTS {
            vec![json!({"output_type": "stream", "text": format!(
                "Outputs are too large to include. Use Bash with: cat <notebook_path> | jq '.cells[{index}].outputs'"
            )})]
        } else {
            kept
        };
        out.insert("outputs".into(), Value::Array(kept));
    }
    Value::Object(out)
}

/// The blocks the model reads for `cells` (Claude Code's shaped cells).
fn blocks(cells: &[Value]) -> Vec<ContentBlock_NE> {
    enum Piece {
        Text(String),
        Image(String, String),
    }
    let mut pieces: Vec<Piece> = Vec::new();
    for c in cells {
        let id = c["cell_id"].as_str().unwrap_or_default();
        let mut tags = String::new();
        if c["cellType"] != "code" {
            tags.push_str(&format!(
                "<cell_type>{}</cell_type>",
                c["cellType"].as_str().unwrap_or("undefined")
            ));
        }
        if c["cellType"] == "code" && c["language"] != "python" {
            tags.push_str(&format!(
                "<language>{}</language>",
                c["language"].as_str().unwrap_or_default()
            ));
        }
        let source = c["source"].as_str().unwrap_or("undefined");
        pieces.push(Piece::Text(format!(
            "<cell id=\"{id}\">{tags}{source}</cell id=\"{id}\">"
        )));
        for o in c["outputs"].as_array().into_iter().flatten() {
            if let Some(text) = o["text"].as_str().filter(|t| !t.is_empty()) {
                pieces.push(Piece::Text(format!("\n{text}")));
            }
            if let (Some(data), Some(media)) = (
                o["image"]["image_data"].as_str(),
                o["image"]["media_type"].as_str(),
            ) {
                pieces.push(Piece::Image(media.into(), data.into()));
            }
        }
    }
    let mut out: Vec<ContentBlock_NE> = Vec::new();
    let mut text: Option<String> = None;
    for piece in pieces {
        match piece {
            Piece::Text(t) => match &mut text {
                Some(open) => {
                    open.push('\n');
                    open.push_str(&t);
                }
                None => text = Some(t),
            },
            Piece::Image(media, data) => {
                if let Some(t) = text.take() {
                    out.push(ContentBlock::text(t));
                }
                out.push(ContentBlock::image(media, data));
            }
        }
    }
    if let Some(t) = text {
        out.push(ContentBlock::text(t));
    }
    out
}

/// The `Read` of the notebook at `path` (holding `text`).
pub fn read(path: &Path, text: &str) -> ToolResult {
    let nb = match parse(text) {
        Ok(nb) => nb,
        Err(e) => return ToolResult::error(e),
    };
    let language = nb["metadata"]["language_info"]["name"]
        .as_str()
        .unwrap_or("python")
        .to_string();
    let cells: Vec<Value> = nb["cells"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| cell(c, i, &language))
        .collect();
    let structured = json!({"type": "notebook", "file": {
        "filePath": path.to_string_lossy(),
        "cells": cells,
    }});
    ToolResult {
        content: RVec::from(blocks(&cells)),
        is_error: false,
        structured: dsh_plugin_api::ROption::RSome(structured.to_string().into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_and_outputs_read_as_claude_code_shows_them() {
        let nb = json!({"cells": [
            {"cell_type": "markdown", "id": "c1", "source": ["# T\n", "x"]},
            {"cell_type": "code", "id": "c2", "execution_count": 1, "source": "print(1)",
             "outputs": [{"output_type": "stream", "text": ["1\n"]}]},
            {"cell_type": "code", "execution_count": null, "source": "y", "outputs": []},
        ], "metadata": {}});
        let result = read(Path::new("/p/nb.ipynb"), &nb.to_string());
        assert_eq!(
            result.text_content(),
            "<cell id=\"c1\"><cell_type>markdown</cell_type># T\nx</cell id=\"c1\">\n<cell id=\"c2\">print(1)</cell id=\"c2\">\n\n1\n\n<cell id=\"cell-2\">y</cell id=\"cell-2\">"
        );
        let data: Value = serde_json::from_str(
            result
                .structured
                .as_ref()
                .into_option()
                .expect("structured"),
        )
        .expect("json");
        assert_eq!(
            data["file"]["cells"][1],
            json!({"cellType": "code", "source": "print(1)", "execution_count": 1, "cell_id": "c2",
                "language": "python", "outputs": [{"output_type": "stream", "text": "1\n"}]})
        );
        assert_eq!(data["file"]["cells"][2].get("execution_count"), None);
    }

    #[test]
    fn not_a_notebook_is_refused_in_claude_codes_words() {
        assert!(read(Path::new("/p/x.ipynb"), "{").is_error);
        let e = parse(r#"{"cells": [1]}"#).expect_err("cells of numbers");
        assert!(
            e.starts_with("Notebook file is not a valid Jupyter notebook"),
            "{e}"
        );
    }

    #[test]
    fn long_outputs_are_cut_or_pointed_to() {
        let long = "l\n".repeat(20_000);
        let cut = output_text(&json!(long));
        assert!(
            cut.ends_with("\n\n... [5001 lines truncated] ..."),
            "{}",
            &cut[cut.len() - 40..]
        );
        let big = json!({"cell_type": "code", "id": "c", "source": "",
            "outputs": [{"output_type": "stream", "text": "z".repeat(10_001)}]});
        let shaped = cell(&big, 3, "python");
        assert_eq!(
            shaped["outputs"][0]["text"],
            "Outputs are too large to include. Use Bash with: cat <notebook_path> | jq '.cells[3].outputs'"
        );
    }
}
