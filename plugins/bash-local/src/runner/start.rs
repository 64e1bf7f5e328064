//! Starting a child without holding up the runtime thread.
//!
//! `posix_spawn` returns only once the child has exec'd (the parent thread
//! is suspended meanwhile, as with `vfork`): a few hundred microseconds.
//! The hooks of one point are started by one task, one after another, so
//! started inline their spawns would queue behind each other (issue 15:
//! each extra hook added about 0.35 ms). So a run first says it is about
//! to start and yields once, which lets the other runs polled by the same
//! task say so too. Then a run that is alone spawns inline (no thread
//! hand-off for the common single process), and runs that start together
//! spawn on the blocking pool, so they all exec at once, as concurrent
//! bare spawns do. (On two busy cores this measured the same as spawning
//! inline: there the children's own exec work is what queues.)

use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::process::Child;

use super::group::ProcessGroup;
use super::spec::RunRequest;

/// Runs between their announcement and the end of their spawn.
static STARTING: AtomicUsize = AtomicUsize::new(0);

/// Counts one run in [`STARTING`] while it lives.
struct Starting;

impl Starting {
    fn announce() -> Starting {
        STARTING.fetch_add(1, Ordering::SeqCst);
        Starting
    }
}

impl Drop for Starting {
    fn drop(&mut self) {
        STARTING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Where a child was spawned from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Via {
    /// The calling thread: the run was alone.
    Inline,
    /// The blocking pool: other runs were starting with it.
    Pool,
}

/// Spawns `spec` (see [`super::spawn`]), on the blocking pool when other
/// runs are starting at the same time.
pub(super) async fn start(spec: &RunRequest) -> Result<(Child, ProcessGroup), String> {
    start_via(spec).await.0
}

async fn start_via(spec: &RunRequest) -> (Result<(Child, ProcessGroup), String>, Via) {
    let starting = Starting::announce();
    tokio::task::yield_now().await;
    if STARTING.load(Ordering::SeqCst) > 1 {
        // Still counted while it spawns: a sibling polled later must see it.
        (blocking(spec.clone(), starting).await, Via::Pool)
    } else {
        (super::spawn(spec), Via::Inline)
    }
}

/// Spawns on the blocking pool; `starting` is released once spawned.
async fn blocking(spec: RunRequest, starting: Starting) -> Result<(Child, ProcessGroup), String> {
    let task = tokio::task::spawn_blocking(move || {
        let spawned = super::spawn(&spec);
        drop(starting);
        spawned
    });
    match task.await {
        Ok(spawned) => spawned,
        // Only a panic in the spawn itself (or a runtime shutting down)
        // gets here; a child it made was dropped with its group guard.
        Err(e) => Err(format!("cannot start the process: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn touch(marker: &Path) -> RunRequest {
        let cwd = marker.parent().expect("a folder");
        RunRequest::new(
            vec![
                "/bin/sh".into(),
                "-c".into(),
                format!("touch '{}'", marker.display()),
            ],
            cwd,
        )
    }

    #[tokio::test]
    async fn runs_polled_together_spawn_on_the_blocking_pool() {
        let dir = tempfile::tempdir().expect("temp dir");
        let markers = [dir.path().join("a"), dir.path().join("b")];
        let (a, b) = (touch(&markers[0]), touch(&markers[1]));
        // One task polls both, as a point's `join_all` polls its hooks.
        let ((first, via_a), (second, via_b)) = tokio::join!(start_via(&a), start_via(&b));
        assert_eq!((via_a, via_b), (Via::Pool, Via::Pool));
        for spawned in [first, second] {
            let (mut child, mut group) = spawned.expect("spawned");
            let status = tokio::time::timeout(std::time::Duration::from_secs(30), child.wait())
                .await
                .expect("the child exits")
                .expect("wait");
            assert!(status.success());
            group.disarm();
        }
        assert!(markers.iter().all(|m| m.exists()), "both children ran");
    }
}
