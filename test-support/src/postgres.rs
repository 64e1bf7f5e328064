//! A real PostgreSQL server for a test: `initdb` in a throwaway folder, a
//! private port on 127.0.0.1 and a Unix socket in that folder.
//!
//! The binaries come from Debian's `postgresql` package
//! (`/usr/lib/postgresql/<version>/bin`; `.ci/run` installs it). When they
//! are missing at build time the tests that need them are marked ignored
//! (`cfg(dsh_have_postgres)`, `tests/build.rs`); when they are missing at
//! run time all the same, [`PgServer::start`] prints why and returns `None`
//! and the test returns early. `initdb` refuses to run as
//! root, so as root the server runs as the `postgres` user (the package
//! creates it) through `runuser`, with the folder handed to it.
//!
//! TCP connections need the password ([`PG_PASSWORD`], scram-sha-256);
//! local socket connections (`psql` here) are trusted. The server is
//! stopped (immediately) on drop.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::process::{Outcome, run};

/// The superuser's password on TCP.
pub const PG_PASSWORD: &str = "dsh-test-pw-Q7vX";
/// The superuser.
pub const PG_USER: &str = "dsh";

const WAIT: Duration = Duration::from_secs(90);

/// A running PostgreSQL server of the test's own.
pub struct PgServer {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
    as_postgres: bool,
}

fn bin_dir() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let version = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("find a free port")
}

impl PgServer {
    /// Starts a fresh server, or prints why it cannot and returns `None`.
    pub fn start() -> Option<PgServer> {
        let Some(bin) = bin_dir() else {
            eprintln!(
                "skipped: PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb; \
                 Debian package `postgresql`, which .ci/run installs)"
            );
            return None;
        };
        // SAFETY: geteuid(2) has no preconditions.
        let as_postgres = unsafe { libc::geteuid() } == 0;
        if as_postgres
            && !Command::new("id")
                .arg("postgres")
                .output()
                .is_ok_and(|o| o.status.success())
        {
            eprintln!(
                "skipped: running as root and there is no `postgres` user to run the server as"
            );
            return None;
        }
        let dir = tempfile::Builder::new()
            .prefix("dsh-pg-")
            .tempdir()
            .expect("create the server's folder");
        let server = PgServer {
            dir,
            bin,
            port: free_port(),
            as_postgres,
        };
        std::fs::write(server.dir.path().join("pwfile"), format!("{PG_PASSWORD}\n"))
            .expect("write the password file");
        if as_postgres {
            let out = run(
                {
                    let mut c = Command::new("chown");
                    c.arg("-R").arg("postgres:postgres").arg(server.dir.path());
                    c
                },
                WAIT,
            );
            assert_eq!(out.code, Some(0), "chown the server's folder: {out:?}");
        }
        let data = server.data();
        let pwfile = server.dir.path().join("pwfile");
        let out = server.run_as_server(
            "initdb",
            &[
                "-D",
                data.to_str().expect("utf-8 path"),
                "-U",
                PG_USER,
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "--pwfile",
                pwfile.to_str().expect("utf-8 path"),
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        assert_eq!(out.code, Some(0), "initdb failed: {out:?}");
        server.start_again();
        Some(server)
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn run_as_server(&self, tool: &str, args: &[&str]) -> Outcome {
        let program = self.bin.join(tool);
        let mut command = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&program);
            c
        } else {
            Command::new(&program)
        };
        command.args(args).current_dir(self.dir.path());
        run(command, WAIT)
    }

    /// Starts the server (again) on its data folder and port; waits until
    /// it accepts connections.
    pub fn start_again(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("server.log");
        let out = self.run_as_server(
            "pg_ctl",
            &[
                "-D",
                self.data().to_str().expect("utf-8 path"),
                "-l",
                log.to_str().expect("utf-8 path"),
                "-o",
                &options,
                "-w",
                "-t",
                "60",
                "start",
            ],
        );
        assert_eq!(
            out.code,
            Some(0),
            "pg_ctl start failed: {out:?}\n{}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }

    /// Stops the server: `fast` ends every session at once (as a restart
    /// does); waits until it is down.
    pub fn stop(&self) {
        self.pg_ctl_stop("fast");
    }

    fn pg_ctl_stop(&self, mode: &str) -> Outcome {
        self.run_as_server(
            "pg_ctl",
            &[
                "-D",
                self.data().to_str().expect("utf-8 path"),
                "-m",
                mode,
                "-w",
                "-t",
                "60",
                "stop",
            ],
        )
    }

    /// The server's TCP port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `postgres://dsh:<password>@127.0.0.1:<port>/postgres`.
    pub fn url(&self) -> String {
        self.url_with_password(PG_PASSWORD)
    }

    /// The URL with another password.
    pub fn url_with_password(&self, password: &str) -> String {
        format!(
            "postgres://{PG_USER}:{password}@127.0.0.1:{}/postgres",
            self.port
        )
    }

    /// Runs `sql` with `psql` over the local socket; returns its output
    /// (unaligned, tuples only), failing the test on an error.
    pub fn psql(&self, sql: &str) -> String {
        let mut command = Command::new(self.bin.join("psql"));
        command
            .args(["-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1"])
            .arg("-h")
            .arg(self.dir.path())
            .arg("-p")
            .arg(self.port.to_string())
            .args(["-U", PG_USER, "-d", "postgres", "-c", sql]);
        let out = run(command, WAIT);
        assert_eq!(out.code, Some(0), "psql `{sql}`: {out:?}");
        out.stdout
    }

    /// The server's folder.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let _ = self.pg_ctl_stop("immediate");
    }
}
