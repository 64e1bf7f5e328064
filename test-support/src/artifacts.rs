//! The real binaries under test, built once per test run.
//!
//! The target directory and profile come from the running test executable
//! (`<target>/<profile>/deps/<test>-<hash>`), so they follow
//! `CARGO_TARGET_DIR`, `--release` and `cargo bench` without configuration.
//!
//! - [`workspace`]: `cargo build -p dsh-host -p dsh-example-*` in the
//!   workspace's own target directory (no `--bin` filter: it would apply to
//!   every `-p` and leave the example libraries out). `env!("CARGO_BIN_EXE_dsh")`
//!   exists only inside the host package, and `cargo test` does not build
//!   its binary, so the suite builds it itself (a no-op when up to date).
//! - [`fixture`]: the fixture workspace `tests/fixtures/plugins`, built into
//!   `<target>/fixture-plugins` so it never contends with the main build.
//!   abi_stable compiles once for every fixture; those that switch on a
//!   `__fixture-*` feature of dsh-plugin-api get builds of their own, since
//!   cargo unifies features within one build. `frozen-v1` builds against the
//!   frozen copy of the 1.0 API kept in that workspace.
//!
//! Each build runs at most once per process behind a `OnceLock`; a failed
//! build fails every test that needs it, with cargo's own output.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use crate::process::run;

/// Where builds go and which profile they use.
struct Target {
    /// The target directory.
    root: PathBuf,
    /// The profile's folder name: `debug`, `release`, or a custom profile.
    profile_dir: String,
}

fn target() -> &'static Target {
    static TARGET: OnceLock<Target> = OnceLock::new();
    TARGET.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test executable's path");
        // <target>/<profile>/deps/<exe>
        let profile = exe
            .parent()
            .and_then(Path::parent)
            .expect("a <target>/<profile>/deps/ layout");
        Target {
            root: profile.parent().expect("a target directory").to_path_buf(),
            profile_dir: profile
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        }
    })
}

/// The cargo that runs this test (`$CARGO`), else the one that built it.
fn cargo() -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let mut command = Command::new(cargo);
    command.arg("build");
    match target().profile_dir.as_str() {
        "debug" => {}
        "release" => {
            command.arg("--release");
        }
        other => {
            command.args(["--profile", other]);
        }
    }
    command
}

/// Variables cargo sets for the test or bench running this build, which a
/// top-level `cargo build` does not see. Some build scripts (ring's) ask to
/// rerun when one of them changes, so handing them on would rebuild ring
/// and everything above it (the host) at every switch between this build
/// and the `cargo test`/`cargo bench` around it.
fn is_runner_variable(name: &str) -> bool {
    ["CARGO_PKG_", "CARGO_MANIFEST_", "CARGO_BIN_EXE_"]
        .iter()
        .any(|prefix| name.starts_with(prefix))
        || [
            "CARGO_CRATE_NAME",
            "CARGO_BIN_NAME",
            "CARGO_PRIMARY_PACKAGE",
            "CARGO_TARGET_TMPDIR",
            "CARGO_RUSTC_CURRENT_DIR",
            "OUT_DIR",
        ]
        .contains(&name)
}

/// Runs one `cargo build`, returning cargo's complaint on failure.
fn build(mut command: Command, target_dir: &Path) -> Result<(), String> {
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(is_runner_variable) {
            command.env_remove(name);
        }
    }
    command.env("CARGO_TARGET_DIR", target_dir);
    let shown = format!("{command:?}");
    let outcome = run(command, Duration::from_secs(30 * 60));
    match outcome.code {
        Some(0) => Ok(()),
        _ => Err(format!("{shown} failed:\n{}", outcome.stderr)),
    }
}

/// What the workspace build produced.
#[derive(Debug)]
pub struct Artifacts {
    /// The `dsh` binary.
    pub dsh: PathBuf,
    /// The folder holding `libdsh_example_*.so`.
    pub examples: PathBuf,
}

/// The `dsh` binary and the example plugins, built on first use.
pub fn workspace() -> &'static Artifacts {
    static BUILT: OnceLock<Result<Artifacts, String>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let mut command = cargo();
        command
            .arg("--manifest-path")
            .arg(crate::workspace_root().join("Cargo.toml"));
        command.args(["-p", "dsh-host"]);
        for example in ["policy-gate", "timeout", "audit"] {
            command.args(["-p", &format!("dsh-example-{example}")]);
        }
        build(command, &target().root)?;
        let out = target().root.join(&target().profile_dir);
        Ok(Artifacts {
            dsh: out.join("dsh"),
            examples: out,
        })
    });
    built.as_ref().unwrap_or_else(|e| panic!("{e}"))
}

/// The example plugin `name` (`policy-gate`, `timeout`, `audit`).
pub fn example(name: &str) -> PathBuf {
    workspace()
        .examples
        .join(format!("libdsh_example_{}.so", name.replace('-', "_")))
}

/// The fixtures built together; the others each need a build of their own.
const PLAIN_FIXTURES: &[&str] = &[
    "current",
    "delegate",
    "frozen-v1",
    "needs-service",
    "no-root",
    "panicky",
    "stall",
];
const FEATURE_FIXTURES: &[&str] = &["abi-changed", "api-major-2", "future-minor"];

/// The fixture plugin `name` (a folder of `tests/fixtures/plugins`).
pub fn fixture(name: &str) -> PathBuf {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let manifest = crate::workspace_root().join("tests/fixtures/plugins/Cargo.toml");
        let target_dir = target().root.join("fixture-plugins");
        let mut batches: Vec<Vec<&str>> = vec![PLAIN_FIXTURES.to_vec()];
        batches.extend(FEATURE_FIXTURES.iter().map(|f| vec![*f]));
        for batch in batches {
            let mut command = cargo();
            command.arg("--manifest-path").arg(&manifest);
            for name in batch {
                command.args(["-p", &format!("dsh-fixture-{name}")]);
            }
            build(command, &target_dir)?;
        }
        Ok(target_dir.join(&target().profile_dir))
    });
    let dir = built.as_ref().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        PLAIN_FIXTURES.contains(&name) || FEATURE_FIXTURES.contains(&name),
        "no fixture plugin `{name}`"
    );
    dir.join(format!("libdsh_fixture_{}.so", name.replace('-', "_")))
}

/// The `dsh-mcp-fixture` MCP server (`tests/mcp-fixture`), built on first
/// use into the workspace's target directory. It depends on nothing of
/// dsh, so this build never touches the host's artifacts.
pub fn mcp_fixture() -> PathBuf {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let mut command = cargo();
        command
            .arg("--manifest-path")
            .arg(crate::workspace_root().join("Cargo.toml"));
        command.args(["-p", "dsh-mcp-fixture"]);
        build(command, &target().root)?;
        Ok(target()
            .root
            .join(&target().profile_dir)
            .join("dsh-mcp-fixture"))
    });
    built.as_ref().unwrap_or_else(|e| panic!("{e}")).clone()
}
