//! `tools-fs`: placeholder, filled in below.
