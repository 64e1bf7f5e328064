//! Hostile discovered hook files (issue 11): a project a session starts in
//! is outside dsh's control, so each file it holds may be a FIFO, a folder,
//! gigantic, malformed, or a symlink out of the project. Each is refused by
//! name (`dsh check`, and the log at the turn), none hangs a turn, and the
//! good files beside them keep running.

use serde_json::json;

use crate::suite::discovery::{Site, shown};

#[test]
fn fifos_folders_huge_and_malformed_discovered_files_are_named_and_never_hang_a_turn() {
    // The project is trusted by prefix and Codex hooks need no review, so
    // trust is not why files are left out.
    let site = Site::new(
        ", trusted_prefixes: [proj]",
        ", trusted_prefixes: [proj], bypass_hook_trust: true",
    );
    site.write("codex/hooks.json", &site.ups(&["good-user"], json!({})));
    site.write("proj/.codex/config.toml", "[hooks\n");
    // A FIFO as project settings: reading it would block forever.
    std::fs::create_dir_all(site.path("proj/.claude")).unwrap();
    let fifo = site.path("proj/.claude/settings.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    // A 5 MiB local settings file.
    let huge = format!(
        "{{\"hooks\": {{}}, \"pad\": \"{}\"}}",
        "x".repeat(5 * 1024 * 1024)
    );
    site.write("proj/.claude/settings.local.json", &huge);
    // A folder where the user settings file goes.
    std::fs::create_dir_all(site.path("home/.claude/settings.json")).unwrap();
    // A valid Codex project file next to the broken TOML still runs.
    site.write(
        "proj/.codex/hooks.json",
        &site.ups(&["good-project"], json!({})),
    );

    let out = site.prompt("proj", "s1");
    assert_eq!(
        site.take_log(),
        ["good-project", "good-user"],
        "{}",
        shown(&out)
    );

    let check = site.dsh_in("proj", &["check"]);
    let named = |rel: &str, why: &str| {
        let line = format!("{}: {why}", site.path(rel).display());
        assert!(check.stdout.contains(&line), "{line}\n{}", shown(&check));
    };
    named(
        "proj/.claude/settings.json",
        "not a regular file; no hooks loaded from it",
    );
    named(
        "proj/.claude/settings.local.json",
        "5242904 bytes, more than the 4194304 a hooks or settings file may have",
    );
    named(
        "home/.claude/settings.json",
        "cannot read the hooks file: Is a directory (os error 21); no hooks loaded from it",
    );
    named("proj/.codex/config.toml", "not valid: TOML parse error");
}

#[test]
fn a_symlink_out_of_a_trusted_project_is_refused() {
    let site = Site::new("", "");
    // The project's settings point at a file outside it, and its `.codex`
    // folder is a symlink to a folder outside it.
    site.write(
        "elsewhere/settings.json",
        &site.ups(&["escaped-claude"], json!({})),
    );
    site.write(
        "elsewhere/codex/hooks.json",
        &site.ups(&["escaped-codex"], json!({})),
    );
    std::fs::create_dir_all(site.path("proj/.claude")).unwrap();
    std::os::unix::fs::symlink(
        site.path("elsewhere/settings.json"),
        site.path("proj/.claude/settings.json"),
    )
    .unwrap();
    std::os::unix::fs::symlink(site.path("elsewhere/codex"), site.path("proj/.codex")).unwrap();
    site.write(
        "proj/.claude/settings.local.json",
        &site.ups(&["inside"], json!({})),
    );
    let proj = site.path("proj");
    // Approving the project does not make the outside files part of it.
    let trusted = site.dsh(&["trust", proj.to_str().unwrap()]);
    assert_eq!(trusted.code, Some(0), "{}", shown(&trusted));

    let out = site.prompt("proj", "s1");
    assert_eq!(site.take_log(), ["inside"], "{}", shown(&out));
    let check = site.dsh_in("proj", &["check"]);
    for rel in ["proj/.claude/settings.json", "proj/.codex/hooks.json"] {
        let line = format!(
            "{}: resolves outside {} (a symlink out of the project); no hooks loaded from it",
            site.path(rel).display(),
            std::fs::canonicalize(&proj).unwrap().display()
        );
        assert!(check.stdout.contains(&line), "{line}\n{}", shown(&check));
    }
}

#[test]
fn a_broken_trust_record_trusts_nothing_and_is_named() {
    let site = Site::new("", "");
    site.write(
        "proj/.claude/settings.json",
        &site.ups(&["project"], json!({})),
    );
    let proj = site.path("proj");
    // Nothing to trust: refused, nothing written.
    let empty = site.path("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = site.dsh(&["trust", empty.to_str().unwrap()]);
    assert_eq!(out.code, Some(1), "{}", shown(&out));
    assert!(out.stderr.contains("nothing trusted"), "{}", shown(&out));
    assert!(!site.path("state/trust.json").exists());
    let out = site.dsh(&["trust", site.path("nowhere").to_str().unwrap()]);
    assert_eq!(out.code, Some(1), "{}", shown(&out));

    assert_eq!(site.dsh(&["trust", proj.to_str().unwrap()]).code, Some(0));
    site.prompt("proj", "s1");
    assert_eq!(site.take_log(), ["project"]);

    // The record damaged: every project is untrusted again, and both the
    // turn's log and `dsh trust --list` name the file.
    let record = site.path("state/trust.json");
    std::fs::write(&record, "{\"projects\": ").unwrap();
    let out = site.prompt("proj", "s2");
    assert_eq!(site.take_log(), Vec::<String>::new(), "{}", shown(&out));
    let named = format!("the trust record {} is not valid", record.display());
    assert!(out.stderr.contains(&named), "{}", shown(&out));
    let listed = site.dsh(&["trust", "--list"]);
    assert_eq!(listed.code, Some(1), "{}", shown(&listed));
    assert!(listed.stderr.contains(&named), "{}", shown(&listed));
}
