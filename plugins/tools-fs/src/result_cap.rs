//! Claude Code's cap on a search tool's result (recorded `S292-big`):
//! when the text the model would read is longer than the tool's cap
//! (`Grep` 20,000 characters, `Glob` 100,000, counted in UTF-16 units as
//! JavaScript counts them), the text is saved whole beside the session's
//! log, under `<session id>/tool-results/<call id>.txt`, and the model
//! reads Claude Code's `<persisted-output>` block instead
//! ([`dsh_plugin_api::sdk::persisted`]). Hooks still get the whole
//! `tool_response`. A session with no log folder, or a file that cannot
//! be written, keeps the whole text.

use std::path::Path;

use dsh_plugin_api::ToolResult;
use dsh_plugin_api::sdk::persisted::{file_for, save, wrapper};

/// `Grep`'s cap.
pub const GREP_MAX_UNITS: usize = 20_000;
/// `Glob`'s cap.
pub const GLOB_MAX_UNITS: usize = 100_000;

/// `result` as the model reads it under a cap of `max` units.
pub fn capped(
    result: ToolResult,
    max: usize,
    log_path: &str,
    session_id: &str,
    call_id: &str,
) -> ToolResult {
    if result.is_error {
        return result;
    }
    let text = result.text_content();
    let units = text.encode_utf16().count();
    if units <= max {
        return result;
    }
    let Some(dir) = Path::new(log_path)
        .parent()
        .filter(|d| !log_path.is_empty() && d.is_absolute())
    else {
        return result;
    };
    let saved = file_for(dir, session_id, call_id).and_then(|path| {
        save(&path, &text)?;
        Ok(path)
    });
    match saved {
        Ok(path) => {
            let shown = ToolResult::text(wrapper(&text, units, &path));
            match result.structured {
                dsh_plugin_api::abi_stable::std_types::ROption::RSome(s) => {
                    shown.with_structured(s)
                }
                dsh_plugin_api::abi_stable::std_types::ROption::RNone => shown,
            }
        }
        Err(e) => {
            tracing::warn!(session = %session_id, call = %call_id, "a long result was not saved: {e}; the model reads it whole");
            result
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_result_is_saved_and_the_model_reads_a_preview() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("ses_1.jsonl");
        let text = "x".repeat(20_001);
        let result = ToolResult::text(text.clone()).with_structured("{}");
        let shown = capped(
            result,
            GREP_MAX_UNITS,
            &log.to_string_lossy(),
            "ses_1",
            "call_9",
        );
        let path = dir.path().join("ses_1/tool-results/call_9.txt");
        assert_eq!(std::fs::read_to_string(&path).expect("saved"), text);
        let seen = shown.text_content();
        assert!(seen.starts_with(&format!(
            "<persisted-output>\nOutput too large (19.5KB). Full output saved to: {}\n\nPreview (first 2KB):\n",
            path.display()
        )), "{seen:.300}");
        assert!(shown.structured.is_some());
        let short = ToolResult::text("short");
        assert_eq!(
            capped(
                short.clone(),
                GREP_MAX_UNITS,
                &log.to_string_lossy(),
                "ses_1",
                "c"
            ),
            short
        );
    }
}
