//! TEMPORARY (measurement build only, removed before the branch is done):
//! switches read once from the environment so one bench build can measure
//! each change on and off.

use std::sync::OnceLock;
use std::time::Duration;

fn vars() -> &'static (bool, Duration) {
    static V: OnceLock<(bool, Duration)> = OnceLock::new();
    V.get_or_init(|| {
        let raw = std::env::var("DSH_SOCK3_RAW").map_or(true, |v| v != "0");
        let spin = std::env::var("DSH_SOCK3_SPIN_US")
            .ok()
            .and_then(|v| v.parse().ok())
            .map_or(super::socket_read::SPIN, Duration::from_micros);
        (raw, spin)
    })
}

pub fn raw() -> bool {
    vars().0
}

pub fn spin() -> Duration {
    vars().1
}

pub fn timer() -> bool {
    static V: OnceLock<bool> = OnceLock::new();
    *V.get_or_init(|| std::env::var("DSH_SOCK3_TIMER").map_or(true, |v| v != "0"))
}
