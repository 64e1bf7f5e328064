//! Integration tests of `dsh-tools-fs` over real files, one binary.
//!
//! - `read`, `write`, `edit`: each tool's happy and error paths, text and
//!   structured response;
//! - `plugin`: the plugin applied on a fake host, called across the ABI.

mod suite;
