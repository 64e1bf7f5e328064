//! dsh's end-to-end suite (`tests/all.rs`) and benchmarks; their support is
//! the workspace's one test-support crate, re-exported here so the suite
//! reads `dsh_tests::…`.

pub use dsh_test_support::*;
