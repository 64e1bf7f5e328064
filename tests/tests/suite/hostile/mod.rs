//! The hostile-input suite (issue 8): what an attacker, a careless user and
//! a crashing machine do to dsh, each over real processes, files and
//! sockets, and what dsh must do about it. One file per area.

mod hooks;
