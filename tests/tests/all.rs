//! dsh's end-to-end suite: one test binary, one module per area under
//! `suite/`, over real `.so` plugins and the real `dsh` binary. The support
//! library (`dsh_tests`) builds what it needs on first use.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod suite;
