//! The session store's settings against bad input: a URL that is not one, a
//! store that does not exist, a wrong password, a database nobody answers
//! on, and `DSH_STORE_URL`. Each is refused when `dsh serve` starts, with
//! one line naming the key or the database (`postgres://user@host:port/db`)
//! and never the password.

use std::path::{Path, PathBuf};
use std::time::Duration;

use dsh_tests::postgres::PgServer;
use dsh_tests::{dsh_command, run, run_dsh, temp_dir};

fn manifest(dir: &Path, state: &str) -> PathBuf {
    let path = dir.join("cordis.yml");
    std::fs::write(
        &path,
        format!("state_dir: state\nsocket: state/dsh.sock\n{state}plugins: []\n"),
    )
    .unwrap();
    path
}

fn serve(config: &Path, dir: &Path) -> dsh_tests::Outcome {
    run_dsh(["serve", "--config", config.to_str().unwrap()], dir)
}

fn nobody_listening() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_store_url_that_is_not_one_is_refused_without_echoing_it() {
    let dir = temp_dir();
    let config = manifest(
        dir.path(),
        "state: {store: postgres, url: 'postgres://dsh:s3cret-pw-91@127.0.0.1:notaport/db'}\n",
    );
    let out = serve(&config, dir.path());
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr
            .contains("state.url (or DSH_STORE_URL) is not a PostgreSQL URL"),
        "{out:?}"
    );
    assert!(!out.stderr.contains("s3cret-pw-91"), "{out:?}");
    assert!(!dir.path().join("state/dsh.sock").exists());
}

#[test]
fn an_unknown_store_or_a_missing_url_names_the_key() {
    let dir = temp_dir();
    for (state, needle) in [
        (
            "state: {store: redis}\n",
            "`state.store: redis` is not a store",
        ),
        (
            "state: {store: postgres}\n",
            "`state.store: postgres` needs `state.url`",
        ),
        ("state: {stor: files}\n", "stor"),
    ] {
        let config = manifest(dir.path(), state);
        let out = serve(&config, dir.path());
        assert_eq!(out.code, Some(1), "{state}: {out:?}");
        assert!(out.stderr.contains(needle), "{state}: {out:?}");
        assert!(out.stderr.contains("cordis.yml"), "names the file: {out:?}");
    }
}

#[test]
fn an_unreachable_database_at_start_is_one_clear_error() {
    let dir = temp_dir();
    let port = nobody_listening();
    let config = manifest(
        dir.path(),
        &format!(
            "state: {{store: postgres, url: 'postgres://dsh:pw-never-shown@127.0.0.1:{port}/dsh', connect_timeout_s: 3}}\n"
        ),
    );
    let out = serve(&config, dir.path());
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains(&format!(
            "session store postgres://dsh@127.0.0.1:{port}/dsh: cannot connect"
        )),
        "{out:?}"
    );
    assert!(!out.stderr.contains("pw-never-shown"), "{out:?}");
}

#[test]
#[cfg_attr(
    not(dsh_have_postgres),
    ignore = "needs PostgreSQL (Debian package postgresql; .ci/run installs it)"
)]
fn a_wrong_password_is_refused_naming_the_database_not_the_password() {
    let Some(pg) = PgServer::start() else { return };
    let dir = temp_dir();
    let config = manifest(
        dir.path(),
        &format!(
            "state: {{store: postgres, url: '{}'}}\n",
            pg.url_with_password("wrong-pw-55")
        ),
    );
    let out = serve(&config, dir.path());
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains(&format!(
            "session store postgres://dsh@127.0.0.1:{}/postgres",
            pg.port()
        )) && out.stderr.contains("password authentication failed"),
        "{out:?}"
    );
    assert!(!out.stderr.contains("wrong-pw-55"), "{out:?}");
    // Nothing was created in the database.
    assert_eq!(
        pg.psql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'dsh_%'")
            .trim(),
        "0"
    );
}

#[test]
fn dsh_store_url_overrides_the_manifest_store() {
    let dir = temp_dir();
    let port = nobody_listening();
    let config = manifest(dir.path(), "");
    let mut command = dsh_command(["serve", "--config", config.to_str().unwrap()], dir.path());
    command.env(
        "DSH_STORE_URL",
        format!("postgres://dsh:env-pw-3@127.0.0.1:{port}/envdb?connect_timeout=3"),
    );
    let out = run(command, Duration::from_secs(60));
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains(&format!(
            "session store postgres://dsh@127.0.0.1:{port}/envdb"
        )),
        "{out:?}"
    );
    assert!(!out.stderr.contains("env-pw-3"), "{out:?}");
}
