//! The hostile-input suite (issue 8): what an attacker, a careless user or a
//! crashing machine would try, each defect kept fixed by a test here.
//!
//! - [`plugins`]: plugin trust over the whole path, listener time limits,
//!   listeners that block their thread.

mod plugins;
