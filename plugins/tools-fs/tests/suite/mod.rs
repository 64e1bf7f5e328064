//! The test suite's table of contents (see `tests/all.rs`).

mod edit;
mod images;
mod plugin;
mod read;
mod support;
mod write;
