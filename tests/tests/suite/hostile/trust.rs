//! Hostile Codex trust records (issue 11, task `trust`): `$CODEX_HOME/
//! config.toml` is the user's own file and Codex's, so dsh reads whatever
//! is there without trusting more than it says and writes it only when it
//! can keep everything else in it: a file that is not valid TOML, a
//! `hooks.state` that is not a table, an entry whose `trusted_hash` is not a
//! string, a FIFO in its place, a symlinked config. Each is named, nothing
//! hangs, and no hook runs on a record that does not review it.

use serde_json::json;

use crate::suite::discovery::{Site, shown};

fn user_hooks(site: &Site) {
    site.write("codex/hooks.json", &site.ups(&["user"], json!({})));
}

#[test]
fn a_broken_or_misshapen_codex_record_is_left_as_it_is_and_reviews_nothing() {
    let site = Site::new("", "");
    user_hooks(&site);
    let proj = site.path("proj");
    let record = site.path("codex/config.toml");

    // Not valid TOML: `dsh trust` refuses to write it and says which file;
    // the turn runs no unreviewed hook.
    std::fs::write(&record, "model = \n").unwrap();
    let out = site.dsh(&["trust", proj.to_str().unwrap()]);
    assert_eq!(out.code, Some(1), "{}", shown(&out));
    assert!(
        out.stderr.contains(&format!(
            "Codex's config {} is not valid TOML",
            record.display()
        )) && out.stderr.contains("it was not changed"),
        "{}",
        shown(&out)
    );
    assert_eq!(std::fs::read_to_string(&record).unwrap(), "model = \n");
    site.prompt("proj", "s1");
    assert_eq!(site.take_log(), Vec::<String>::new());

    // `hooks.state` a string: named by key, the file kept.
    let text = "[hooks]\nstate = \"everything\"\n";
    std::fs::write(&record, text).unwrap();
    let out = site.dsh(&["trust", proj.to_str().unwrap()]);
    assert_eq!(out.code, Some(1), "{}", shown(&out));
    assert!(
        out.stderr.contains("key `hooks.state` is not a table"),
        "{}",
        shown(&out)
    );
    assert_eq!(std::fs::read_to_string(&record).unwrap(), text);
    site.prompt("proj", "s2");
    assert_eq!(site.take_log(), Vec::<String>::new());

    // A `trusted_hash` that is not a string reviews nothing (Codex drops
    // such an entry).
    let key = format!(
        "{}:user_prompt_submit:0:0",
        site.path("codex/hooks.json").display()
    );
    std::fs::write(
        &record,
        format!("[hooks.state.\"{key}\"]\ntrusted_hash = 5\n"),
    )
    .unwrap();
    let out = site.prompt("proj", "s3");
    assert_eq!(site.take_log(), Vec::<String>::new(), "{}", shown(&out));
    // `dsh trust` replaces it with the real review, and the hook runs.
    let out = site.dsh(&["trust", proj.to_str().unwrap()]);
    assert_eq!(out.code, Some(0), "{}", shown(&out));
    site.prompt("proj", "s4");
    assert_eq!(site.take_log(), ["user"]);
}

#[test]
fn a_fifo_record_never_hangs_and_a_symlinked_record_is_written_where_it_points() {
    let site = Site::new("", "");
    user_hooks(&site);
    let proj = site.path("proj");
    let record = site.path("codex/config.toml");
    let made = std::process::Command::new("mkfifo")
        .arg(&record)
        .status()
        .unwrap();
    assert!(made.success());
    // Reading a FIFO would block forever: the turn and `dsh trust` both go on.
    let out = site.prompt("proj", "s1");
    assert_eq!(site.take_log(), Vec::<String>::new(), "{}", shown(&out));
    let out = site.dsh(&["trust", proj.to_str().unwrap()]);
    assert_eq!(out.code, Some(1), "{}", shown(&out));
    assert!(
        out.stderr
            .contains(&format!("cannot read Codex's config {}", record.display())),
        "{}",
        shown(&out)
    );
    std::fs::remove_file(&record).unwrap();

    // A dotfiles-style symlink stays a symlink; its target gets the review.
    site.write("dotfiles/codex.toml", "# mine\nmodel = \"m\"\n");
    std::os::unix::fs::symlink(site.path("dotfiles/codex.toml"), &record).unwrap();
    let out = site.dsh(&["trust", proj.to_str().unwrap()]);
    assert_eq!(out.code, Some(0), "{}", shown(&out));
    assert!(
        std::fs::symlink_metadata(&record)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let target = std::fs::read_to_string(site.path("dotfiles/codex.toml")).unwrap();
    assert!(
        target.starts_with("# mine\nmodel = \"m\"\n") && target.contains("trusted_hash"),
        "{target}"
    );
    site.prompt("proj", "s2");
    assert_eq!(site.take_log(), ["user"]);
}
