//! What an audit of every input surface found, one test per defect, each
//! through the real `dsh` binary (only the model is scripted):
//!
//! - durations past the clock's range (`shutdown_grace_s:
//!   18446744073709551615`, `listener_timeout_s: 1e19`) are no limit, where
//!   adding them to the clock panicked (exit 101);
//! - a `.so` cut short is refused by what it is, where the dynamic loader
//!   mapped it and the first touch of a missing page killed the process with
//!   `SIGBUS`; a library of another machine is named as such, where the
//!   loader's answer was "No such file or directory";
//! - a session log whose header has another format version is refused
//!   naming both versions, where it was loaded and appended to as version 1;
//! - a Claude settings permission rule that does not parse is left out
//!   alone and named with its file and key, where it took every other rule
//!   of its file with it (a `Bash` deny beside a typo did not deny) and the
//!   warning named no file;
//! - a `log_level` that is not a filter is refused naming the key, where
//!   it was dropped with a line naming neither file nor key;
//! - `dsh sessions import` of a FIFO nobody writes to reads it as empty,
//!   where it waited forever, and of a device refuses it, where it read
//!   `/dev/zero` until memory ran out; a damaged file says nothing was
//!   imported, where it advised `dsh sessions repair` of a stored session;
//! - a manifest that is a FIFO is read without waiting for a writer, and
//!   a manifest or scripted model's script that is a device is refused,
//!   where `dsh check` hung or read `/dev/zero` until memory ran out;
//! - a session log that is a FIFO is refused by `dsh prompt --session`,
//!   `sessions show`, `repair` and `list`, where each waited forever (and
//!   `dsh prompt` could then only be stopped with SIGKILL);
//! - a SessionStart hook that leaves a FIFO or a symlink to `/dev/zero`
//!   as its `CLAUDE_ENV_FILE` has it left out of the session's script,
//!   named, where building the script waited on the FIFO forever;
//! - `Write` and `Edit` of a FIFO and `Read` and `Edit` of `/dev/zero` are
//!   refused by what the path holds, where they waited for a writer
//!   forever or read until memory ran out.

use std::path::{Path, PathBuf};

use dsh_tests::daemon::ServedDaemon;
use dsh_tests::{copy_with_mode, example, run_dsh, temp_dir};

/// `d/cordis.yml` holding `text`.
fn manifest(d: &Path, text: impl AsRef<str>) -> PathBuf {
    let config = d.join("cordis.yml");
    std::fs::write(&config, text.as_ref()).unwrap();
    config
}

fn no_panic(out: &dsh_tests::Outcome) {
    assert!(
        out.code != Some(101) && !out.stderr.contains("panicked at"),
        "{out:?}"
    );
}

#[test]
fn a_shutdown_grace_past_the_clocks_range_stops_cleanly() {
    let dir = temp_dir();
    let d = dir.path();
    let config = manifest(
        d,
        "state_dir: state\nshutdown_grace_s: 18446744073709551615\nplugins:\n  - name: bash-local\n",
    );
    let daemon = ServedDaemon::start(&config, d, "info");
    let stderr_path = d.join("serve.stderr");
    let status = daemon.stop();
    let stderr = std::fs::read_to_string(stderr_path).unwrap();
    assert!(!stderr.contains("panicked at"), "{stderr}");
    assert!(status.success(), "{status:?}\n{stderr}");
    assert!(stderr.contains("dsh stopped"), "{stderr}");
}

#[test]
fn a_listener_timeout_past_the_clocks_range_is_no_limit() {
    let dir = temp_dir();
    let d = dir.path();
    let marker = d.join("ran");
    // The timeout example wraps `tools/execute`: its call runs under the
    // limit while the tool runs.
    let config = manifest(
        d,
        format!(
            "state_dir: state\nplugins:\n  - name: bash-local\n  - id: model\n    name: model-scripted\n    config:\n      script:\n        - tool_calls: [{{name: Bash, arguments: {{command: 'touch {}'}}}}]\n        - text: done\n  - id: slow\n    path: {}\n    listener_timeout_s: 1e19\n    config: {{millis: 60000}}\n",
            marker.display(),
            example("timeout").display()
        ),
    );
    let out = run_dsh(["prompt", "--config", config.to_str().unwrap(), "go"], d);
    no_panic(&out);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(out.stdout.contains("[turn completed]"), "{out:?}");
    assert!(marker.exists(), "the tool ran: {out:?}");
}

/// `dsh check` on a manifest of `bash-local` and the library at `lib`.
fn check_library(d: &Path, lib: &Path) -> dsh_tests::Outcome {
    let config = manifest(
        d,
        format!(
            "state_dir: state\nplugins:\n  - name: bash-local\n  - id: lib\n    path: {}\n",
            lib.display()
        ),
    );
    run_dsh(["check", "--config", config.to_str().unwrap()], d)
}

#[test]
fn truncated_and_foreign_libraries_are_refused_by_what_they_are() {
    let dir = temp_dir();
    let d = dir.path();
    let whole = std::fs::read(example("audit")).unwrap();
    // (name, bytes, what the refusal says)
    let mut foreign = whole.clone();
    foreign[18..20].copy_from_slice(&183u16.to_le_bytes()); // e_machine: AArch64
    let cases: [(&str, Vec<u8>, &str); 3] = [
        (
            "cut.so",
            whole[..3000].to_vec(),
            "truncated: a loadable segment ends at byte",
        ),
        (
            "headers-cut.so",
            whole[..64].to_vec(),
            "truncated: its program headers end at byte",
        ),
        (
            "foreign.so",
            foreign,
            if cfg!(target_arch = "x86_64") {
                "built for AArch64; this dsh runs on x86-64"
            } else {
                "built for AArch64"
            },
        ),
    ];
    for (name, bytes, says) in cases {
        let src = d.join(format!("{name}.src"));
        std::fs::write(&src, &bytes).unwrap();
        let lib = copy_with_mode(&src, d, name, 0o755);
        let out = check_library(d, &lib);
        let ctx = format!("{name}: {out:?}");
        // Before: SIGBUS (no exit code) for the cut library.
        assert_eq!(out.code, Some(1), "{ctx}");
        let all = format!("{}{}", out.stdout, out.stderr);
        assert!(
            all.contains(&format!(
                "plugin `lib`: {}: refused: not a loadable shared library: {says}",
                lib.display()
            )),
            "{ctx}"
        );
        assert!(!all.contains("No such file or directory"), "{ctx}");
        // The rest of the manifest still loads.
        assert!(
            out.stdout
                .lines()
                .any(|l| l.starts_with("bash-local") && l.contains("applied")),
            "{ctx}"
        );
        // The file is left as it was.
        assert_eq!(std::fs::read(&lib).unwrap(), bytes, "{name}");
    }
    // The whole library still loads.
    let lib = copy_with_mode(&example("audit"), d, "whole.so", 0o755);
    let out = check_library(d, &lib);
    assert_eq!(out.code, Some(0), "{out:?}");
}

#[test]
fn a_log_of_another_format_version_is_refused_and_kept() {
    let dir = temp_dir();
    let d = dir.path();
    let config = manifest(
        d,
        "state_dir: state\nplugins:\n  - name: bash-local\n  - id: model\n    name: model-scripted\n    config:\n      script:\n        - text: one\n        - text: two\n",
    );
    let cfg = config.to_str().unwrap();
    let out = run_dsh(["prompt", "--config", cfg, "--session", "s1", "first"], d);
    assert_eq!(out.code, Some(0), "{out:?}");
    let log = d.join("state/sessions/s1.jsonl");
    let text = std::fs::read_to_string(&log).unwrap();
    let (header, rest) = text.split_once('\n').unwrap();
    assert!(header.contains("\"version\":1,"), "{header}");
    let newer = format!(
        "{}\n{rest}",
        header.replace("\"version\":1,", "\"version\":2,")
    );
    std::fs::write(&log, &newer).unwrap();

    let out = run_dsh(["prompt", "--config", cfg, "--session", "s1", "second"], d);
    no_panic(&out);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains(&format!(
            "{}: line 1: written in log format version 2, and this dsh reads version 1 only",
            log.display()
        )),
        "{out:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        newer,
        "nothing was appended to the other version's log"
    );

    // `dsh sessions repair` rewrites it as this version, keeping every
    // event, and the session goes on from where it was.
    let out = run_dsh(["sessions", "repair", "--config", cfg, "s1"], d);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(d.join("state/sessions/s1.jsonl.damaged-1")).unwrap(),
        newer
    );
    let out = run_dsh(
        [
            "prompt",
            "--config",
            cfg,
            "--session",
            "s1",
            "--json",
            "second",
        ],
        d,
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let repaired = std::fs::read_to_string(&log).unwrap();
    assert!(
        repaired.starts_with("{\"type\":\"session\",\"version\":1,"),
        "{repaired}"
    );
    assert!(repaired.contains(rest), "every old event kept in order");
    assert!(repaired.contains("\"content\":\"second\""), "{repaired}");
}

#[test]
fn a_settings_rule_that_does_not_parse_leaves_the_files_other_rules_in_force() {
    let dir = temp_dir();
    let d = dir.path();
    let marker = d.join("ran");
    let settings = d.join("settings.json");
    std::fs::write(
        &settings,
        r#"{"hooks": {"PreToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": "true"}]}]},
           "permissions": {"deny": ["Bash", "Read(x"]}}"#,
    )
    .unwrap();
    let config = manifest(
        d,
        format!(
            "state_dir: state\nplugins:\n  - name: bash-local\n  - name: hooks-claude\n    config: {{config_path: settings.json}}\n  - id: model\n    name: model-scripted\n    config:\n      script:\n        - tool_calls: [{{name: Bash, arguments: {{command: 'touch {}'}}}}]\n        - text: done\n",
            marker.display()
        ),
    );
    let cfg = config.to_str().unwrap();
    let named = format!(
        "{}: key `permissions.deny[1]`: permission rule `Read(x`: a specifier must end with `)`; the rule is ignored, the file's other rules apply",
        settings.display()
    );

    let out = run_dsh(["check", "--config", cfg], d);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        format!("{}{}", out.stdout, out.stderr)
            .contains(&format!("plugin `hooks-claude`: {named}")),
        "{out:?}"
    );

    // Before: the bad rule dropped the whole file's rules, and the
    // `Bash` deny beside it with them: the command ran.
    let out = run_dsh(["prompt", "--config", cfg, "--json", "go"], d);
    no_panic(&out);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(out.stderr.contains(&named), "{out:?}");
    let denied: Vec<serde_json::Value> = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|e: &serde_json::Value| e["type"] == "tool/denied")
        .collect();
    assert_eq!(denied.len(), 1, "{out:?}");
    assert_eq!(
        denied[0]["reason"],
        format!(
            "Permission to use Bash with command touch {} has been denied.",
            marker.display()
        )
    );
    assert!(!marker.exists(), "the denied command did not run");
}

#[test]
fn a_log_level_that_is_not_a_filter_is_refused_naming_the_key() {
    let dir = temp_dir();
    let d = dir.path();
    let config = manifest(d, "log_level: \"[[[[\"\nstate_dir: state\nplugins: []\n");
    // Before: accepted; `dsh serve` then wrote "ignoring `[[[[`: invalid
    // filter directive", naming neither the file nor the key.
    let out = run_dsh(["check", "--config", config.to_str().unwrap()], d);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert_eq!(
        out.stderr,
        format!(
            "{}: key `log_level` (or DSH_LOG_LEVEL): `[[[[` is not a log filter (invalid filter directive); write e.g. `info` or `info,dsh_host=debug`\n",
            config.display()
        )
    );
}

/// `dsh sessions import FILE` with `--config config`, with at most 1 GiB of
/// address space (reading `/dev/zero` whole would end there, not in the
/// machine's memory) and a time limit well under the suite's.
fn import(d: &Path, config: &Path, file: &Path) -> dsh_tests::Outcome {
    run_limited(
        d,
        &[
            "sessions".as_ref(),
            "import".as_ref(),
            "--config".as_ref(),
            config.as_os_str(),
            file.as_os_str(),
        ],
    )
}

/// `dsh args` in `d` with at most 1 GiB of address space and 30 s.
fn run_limited(d: &Path, args: &[&std::ffi::OsStr]) -> dsh_tests::Outcome {
    use std::os::unix::process::CommandExt as _;
    let mut command = dsh_tests::dsh_command(args, d);
    let limit = libc::rlimit {
        rlim_cur: 1 << 30,
        rlim_max: 1 << 30,
    };
    // SAFETY: setrlimit is async-signal-safe; it only limits the child
    // about to exec.
    unsafe {
        command.pre_exec(move || {
            if libc::setrlimit(libc::RLIMIT_AS, &limit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    dsh_tests::run(command, std::time::Duration::from_secs(30))
}

#[test]
fn import_never_waits_on_a_fifo_or_reads_a_device_and_names_a_damaged_file() {
    let dir = temp_dir();
    let d = dir.path();
    let config = manifest(
        d,
        "state_dir: state\nplugins:\n  - name: bash-local\n  - id: model\n    name: model-scripted\n    config:\n      script:\n        - text: one\n",
    );
    let fifo = mkfifo(&d.join("pipe.jsonl"));
    // Before: waited for a writer forever.
    let out = import(d, &config, &fifo);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert_eq!(
        out.stderr,
        format!(
            "dsh: {}: line 1: the file is empty; nothing was imported\n",
            fifo.display()
        )
    );
    // Before: read until memory ran out.
    let out = import(d, &config, Path::new("/dev/zero"));
    no_panic(&out);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert_eq!(
        out.stderr,
        "dsh: /dev/zero: cannot read: a device, not a file to read\n"
    );

    // A file cut in the middle names its line and says nothing was
    // imported (before: "run `dsh sessions repair <id>`", which works on
    // stored sessions, not on the file).
    let cfg = config.to_str().unwrap();
    let out = run_dsh(["prompt", "--config", cfg, "--session", "s1", "hi"], d);
    assert_eq!(out.code, Some(0), "{out:?}");
    let text = std::fs::read_to_string(d.join("state/sessions/s1.jsonl")).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(3, "garbage");
    let other = lines.join("\n").replace("\"s1\"", "\"s2\"") + "\n";
    let file = d.join("s2.jsonl");
    std::fs::write(&file, &other).unwrap();
    let out = import(d, &config, &file);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert_eq!(
        out.stderr,
        format!(
            "dsh: {}: line 4: the line is not JSON (expected value at line 1 column 1); nothing was imported\n",
            file.display()
        )
    );
    assert!(!d.join("state/sessions/s2.jsonl").exists());

    // The same file whole imports.
    std::fs::write(&file, text.replace("\"s1\"", "\"s2\"")).unwrap();
    let out = import(d, &config, &file);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(out.stdout.contains("imported session `s2`"), "{out:?}");
}

fn mkfifo(path: &Path) -> std::path::PathBuf {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo(3) with a NUL-terminated path we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    path.to_path_buf()
}

/// `dsh check --config config` with a time limit well under the suite's.
fn check_within(d: &Path, config: &Path) -> dsh_tests::Outcome {
    let command = dsh_tests::dsh_command(
        ["check".as_ref(), "--config".as_ref(), config.as_os_str()],
        d,
    );
    dsh_tests::run(command, std::time::Duration::from_secs(30))
}

#[test]
fn a_manifest_or_script_that_is_a_fifo_or_a_device_never_stalls_dsh() {
    let dir = temp_dir();
    let d = dir.path();
    // Before: `open` waited for a writer forever.
    let fifo = mkfifo(&d.join("cordis.yml"));
    let out = check_within(d, &fifo);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert_eq!(
        out.stderr,
        format!(
            "{}: the manifest is empty (only whitespace or comments); write at least `plugins: []`\n",
            fifo.display()
        )
    );
    let out = check_within(d, Path::new("/dev/zero"));
    assert_eq!(out.code, Some(1), "{out:?}");
    assert_eq!(
        out.stderr,
        "/dev/zero: cannot read manifest: a device, not a file to read\n"
    );

    // A scripted model's script of /dev/zero: before, read until memory
    // ran out (a FIFO is still waited on: tests hold an apply that way).
    let config = d.join("zero.yml");
    std::fs::write(
        &config,
        "state_dir: state\nplugins:\n  - name: bash-local\n  - id: model\n    name: model-scripted\n    config: {script: /dev/zero}\n",
    )
    .unwrap();
    let out = run_limited(
        d,
        &["check".as_ref(), "--config".as_ref(), config.as_os_str()],
    );
    no_panic(&out);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stdout.contains(
            "plugin `model`: apply failed: key `script`: cannot read /dev/zero: not a regular file"
        ),
        "{out:?}"
    );
}

#[test]
fn a_session_log_that_is_a_fifo_is_refused_never_waited_on() {
    let dir = temp_dir();
    let d = dir.path();
    let config = manifest(
        d,
        "state_dir: state\nplugins:\n  - name: bash-local\n  - id: model\n    name: model-scripted\n    config:\n      script:\n        - text: one\n        - text: two\n",
    );
    let cfg = config.to_str().unwrap();
    let out = run_dsh(["prompt", "--config", cfg, "--session", "good", "hi"], d);
    assert_eq!(out.code, Some(0), "{out:?}");
    let fifo = mkfifo(&d.join("state/sessions/piped.jsonl"));
    let refused = format!(
        "dsh: {}: cannot open session log: not a regular file (a FIFO, device or folder is never read as a log)\n",
        fifo.display()
    );
    // Before: each of these waited forever (a writer's open reads the log
    // to its end, and a FIFO it holds open for writing has none; the
    // readers waited in `open` for a writer).
    for args in [
        vec!["prompt", "--config", cfg, "--session", "piped", "hi"],
        vec!["sessions", "show", "--config", cfg, "piped"],
        vec!["sessions", "repair", "--config", cfg, "piped"],
    ] {
        let command = dsh_tests::dsh_command(&args, d);
        let out = dsh_tests::run(command, std::time::Duration::from_secs(30));
        no_panic(&out);
        assert_eq!(out.code, Some(1), "{args:?}: {out:?}");
        assert!(out.stderr.ends_with(&refused), "{args:?}: {out:?}");
    }
    let command = dsh_tests::dsh_command(["sessions", "list", "--config", cfg], d);
    let out = dsh_tests::run(command, std::time::Duration::from_secs(30));
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout
            .lines()
            .any(|l| l.starts_with("piped ") && l.contains("damaged")),
        "{out:?}"
    );
    assert!(
        out.stdout.lines().any(|l| l.starts_with("good ")),
        "{out:?}"
    );
    // The other session goes on.
    let out = run_dsh(["prompt", "--config", cfg, "--session", "good", "again"], d);
    assert_eq!(out.code, Some(0), "{out:?}");
}

#[test]
fn env_files_a_hook_swaps_for_a_fifo_or_dev_zero_are_left_out_never_read() {
    let dir = temp_dir();
    let d = dir.path();
    // Three SessionStart hooks: the first leaves a FIFO where its
    // CLAUDE_ENV_FILE goes, the second a symlink to /dev/zero, the third
    // writes a variable there as usual.
    std::fs::write(
        d.join("settings.json"),
        serde_json::json!({"hooks": {"SessionStart": [{"hooks": [
            {"type": "command", "command": "rm -f \"$CLAUDE_ENV_FILE\"; mkfifo \"$CLAUDE_ENV_FILE\""},
            {"type": "command", "command": "ln -sf /dev/zero \"$CLAUDE_ENV_FILE\""},
            {"type": "command", "command": "echo 'export FOO=bar' > \"$CLAUDE_ENV_FILE\""},
        ]}]}})
        .to_string(),
    )
    .unwrap();
    let config = manifest(
        d,
        "state_dir: state\nplugins:\n  - name: bash-local\n  - name: hooks-claude\n    config: {config_path: settings.json}\n  - id: model\n    name: model-scripted\n    config:\n      script:\n        - tool_calls: [{name: Bash, arguments: {command: 'echo got $FOO'}}]\n        - text: done\n",
    );
    // Before: building the session's script opened the FIFO and waited
    // for a writer forever (and /dev/zero would have been read without
    // end).
    let command = dsh_tests::dsh_command(
        [
            "prompt".as_ref(),
            "--config".as_ref(),
            config.as_os_str(),
            "--json".as_ref(),
            "go".as_ref(),
        ],
        d,
    );
    let out = dsh_tests::run(command, std::time::Duration::from_secs(30));
    no_panic(&out);
    assert_eq!(out.code, Some(0), "{out:?}");
    let result = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|e| e["type"] == "tool/result")
        .unwrap_or_else(|| panic!("no tool result: {out:?}"));
    assert_eq!(result["content"], "got bar", "{out:?}");
    for n in [0, 1] {
        assert!(
            out.stderr
                .contains(&format!("sessionstart-hook-{n}.sh is left out of session "))
                && out.stderr.contains("'s script: not a regular file"),
            "hook {n}: {out:?}"
        );
    }
}

#[test]
fn file_tools_refuse_fifos_and_devices_instead_of_waiting_or_reading_forever() {
    let dir = temp_dir();
    let d = dir.path();
    let fifo = mkfifo(&d.join("pipe.txt"));
    let calls = [
        (
            "Write",
            format!("{{file_path: {}, content: x}}", fifo.display()),
        ),
        (
            "Edit",
            format!(
                "{{file_path: {}, old_string: a, new_string: b}}",
                fifo.display()
            ),
        ),
        ("Read", "{file_path: /dev/zero}".to_string()),
        ("Read", "{file_path: /dev/zero, limit: 5}".to_string()),
        (
            "Edit",
            "{file_path: /dev/zero, old_string: a, new_string: b}".to_string(),
        ),
    ];
    let mut script = String::new();
    for (tool, args) in &calls {
        script.push_str(&format!(
            "        - tool_calls: [{{name: {tool}, arguments: {args}}}]\n"
        ));
    }
    let config = manifest(
        d,
        format!(
            "state_dir: state\nplugins:\n  - name: bash-local\n  - name: tools-fs\n  - id: model\n    name: model-scripted\n    config:\n      script:\n{script}        - text: done\n"
        ),
    );
    // Before: Write and Edit read the FIFO's old text, waiting for a
    // writer forever; Read and Edit read /dev/zero until memory ran out
    // (here: 1 GiB of address space, then an abort).
    let out = run_limited(
        d,
        &[
            "prompt".as_ref(),
            "--config".as_ref(),
            config.as_os_str(),
            "--json".as_ref(),
            "go".as_ref(),
        ],
    );
    no_panic(&out);
    assert_eq!(out.code, Some(0), "{out:?}");
    let results: Vec<serde_json::Value> = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["type"] == "tool/result")
        .collect();
    let want = [
        format!(
            "Cannot write {}: it is a FIFO, not a regular file",
            fifo.display()
        ),
        format!(
            "Cannot edit {}: it is a FIFO, not a regular file",
            fifo.display()
        ),
        "Cannot read /dev/zero: it is a device, not a regular file".to_string(),
        "Cannot read /dev/zero: it is a device, not a regular file".to_string(),
        "Cannot edit /dev/zero: it is a device, not a regular file".to_string(),
    ];
    assert_eq!(results.len(), want.len(), "{out:?}");
    for (result, want) in results.iter().zip(want) {
        assert_eq!(result["content"], want.as_str(), "{result}");
        assert_eq!(result["is_error"], true, "{result}");
    }
}
