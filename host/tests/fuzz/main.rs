//! Property tests for every parser that reads untrusted bytes.
//!
//! Each target gets arbitrary input and structured near-valid input, and must
//! never panic, never hang and, where a value goes out and comes back, round-
//! trip:
//! - [`bridges`]: what a hook prints (stdout, stderr, exit, signal, timeout),
//!   through both bridges' decision codecs and merge, on every gate event;
//! - [`hook_config`]: hook files as both bridges load them;
//! - [`manifest`]: `cordis.yml` text;
//! - [`session_log`]: session log files, damaged any way;
//! - the ACP frame reader is tested where it lives (`acp::frames`).
//!
//! A normal `cargo test` runs proptest's default number of cases. The long
//! run (README, "Fuzzing") sets `PROPTEST_CASES`, which every test here
//! honours:
//! `PROPTEST_CASES=1000000 cargo test --release -p dsh-host --test fuzz`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly by design

mod answers;
mod bridges;
mod hook_config;
mod manifest;
mod session_log;
