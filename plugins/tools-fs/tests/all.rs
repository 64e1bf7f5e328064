//! Integration tests of `dsh-tools-fs` over real files, one binary.
//!
//! - `read`, `write`, `edit`: each tool's happy and error paths, text and
//!   structured response;
//! - `plugin`: the plugin applied on a fake host, called across the ABI.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod suite;
