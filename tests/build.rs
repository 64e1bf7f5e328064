//! Build-time facts for the end-to-end suite, nothing else uses:
//! `cfg(dsh_have_postgres)` is set when PostgreSQL's server binaries are
//! installed (`/usr/lib/postgresql/<version>/bin/initdb`, Debian package
//! `postgresql`; `.ci/run` installs it). Without them the tests that start
//! a PostgreSQL server are marked `#[ignore]` with that reason, so they
//! show as *ignored* in the summary instead of passing untested.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(dsh_have_postgres)");
    println!("cargo::rerun-if-changed=build.rs");
    // Installing or removing the package changes this folder.
    println!("cargo::rerun-if-changed=/usr/lib/postgresql");
    let installed = std::fs::read_dir("/usr/lib/postgresql")
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .any(|e| e.path().join("bin/initdb").is_file())
        })
        .unwrap_or(false);
    if installed {
        println!("cargo::rustc-cfg=dsh_have_postgres");
    }
}
