//! Test support: result helpers; the fake plugin host, seam inputs and
//! temp dirs come from the shared test-support crate.

use dsh_plugin_api::ToolResult;
pub use dsh_test_support::fake_host::{FakeHost, canonical_temp_dir as temp_dir};
use serde_json::Value;

/// The structured response as JSON.
pub fn structured(result: &ToolResult) -> Value {
    serde_json::from_str(result.structured.as_ref().expect("structured").as_str()).expect("json")
}

/// Asserts an error result whose text contains `needle`.
pub fn assert_error(result: &ToolResult, needle: &str) {
    assert!(
        result.is_error,
        "expected an error, got {:?}",
        result.text_content()
    );
    assert!(
        result.text_content().contains(needle),
        "{:?} does not contain {needle:?}",
        result.text_content()
    );
}
