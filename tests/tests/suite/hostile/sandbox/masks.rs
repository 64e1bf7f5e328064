//! Codex's masks (C140) under hostile conditions: the helper covers only
//! empty folders (never hiding anything) and refuses anything else by
//! name without running the command; a file someone puts into a mask's
//! folder on disk while the command runs stays, with its folder; a
//! command cut off by its timeout leaves no folder behind.

use std::path::Path;
use std::time::{Duration, Instant};

use dsh_tests::{run_dsh, temp_dir};

use crate::suite::sandbox;

/// A manifest running `bash-local` in `workspace-write` (the project its
/// only writable root) with the model script `script`.
fn manifest(dir: &Path, script: &str) -> std::path::PathBuf {
    let path = dir.join("cordis.yml");
    std::fs::write(
        &path,
        "state_dir: state\nplugins:\n  - name: bash-local\n    config:\n      \
         sandbox_mode: workspace-write\n      sandbox_workspace_write: \
         {exclude_slash_tmp: true, exclude_tmpdir_env_var: true}\n  \
         - id: model\n    name: model-scripted\n    config:\n      script: script.yml\n",
    )
    .unwrap();
    std::fs::write(dir.join("script.yml"), script).unwrap();
    path
}

/// `dsh prompt --json go` in `project`; the `tool/result` contents.
fn prompt(config: &Path, project: &Path) -> Vec<(String, bool)> {
    sandbox::results(&sandbox::prompt(config, project))
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn the_helper_covers_only_empty_folders_and_refuses_the_rest_by_name() {
    let dir = temp_dir();
    let p = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(p.join(".codex")).unwrap();
    std::fs::write(p.join(".codex/config.toml"), "model = \"mine\"\n").unwrap();
    std::fs::write(p.join(".aws"), "a file\n").unwrap();
    let cases = [
        (
            p.join(".codex"),
            format!(
                "cannot cover the protected folder {}: Directory not empty",
                p.join(".codex").display()
            ),
        ),
        (
            p.join(".aws"),
            format!(
                "cannot read the protected folder to cover {}: Not a directory",
                p.join(".aws").display()
            ),
        ),
        (
            Path::new(".git").to_path_buf(),
            "--mask must be an absolute path, not .git".to_string(),
        ),
    ];
    for (mask, message) in cases {
        let out = run_dsh(
            [
                "sandbox-exec".as_ref(),
                "--mode".as_ref(),
                "workspace-write".as_ref(),
                "--cwd".as_ref(),
                p.as_os_str(),
                "--exclude-slash-tmp".as_ref(),
                "--exclude-tmpdir-env-var".as_ref(),
                "--mask".as_ref(),
                mask.as_os_str(),
                "--".as_ref(),
                "/bin/sh".as_ref(),
                "-c".as_ref(),
                "touch ran".as_ref(),
            ] as [&std::ffi::OsStr; 13],
            &p,
        );
        assert_eq!(out.code, Some(125), "{}: {out:?}", mask.display());
        assert!(
            out.stderr.contains(&message) && out.stderr.contains("the command did not run"),
            "{}: {}",
            mask.display(),
            out.stderr
        );
        assert!(!p.join("ran").exists(), "{}", mask.display());
    }
    // Nothing was hidden or changed.
    assert_eq!(
        std::fs::read_to_string(p.join(".codex/config.toml")).unwrap(),
        "model = \"mine\"\n"
    );
    assert_eq!(std::fs::read_to_string(p.join(".aws")).unwrap(), "a file\n");
}

#[test]
fn a_file_put_in_a_mask_folder_during_the_run_stays_with_its_folder() {
    let dir = temp_dir();
    let d = dir.path().canonicalize().unwrap();
    let project = d.join("proj");
    std::fs::create_dir_all(&project).unwrap();
    let config = manifest(
        &d,
        "- tool_calls: [{name: Bash, arguments: {command: 'ls -A .codex; touch started; \
         while [ ! -e go ]; do sleep 0.02; done; ls -A .codex; echo end'}}]\n- text: done\n",
    );
    // The binary is built (once) before the clock of the wait starts.
    dsh_tests::artifacts::workspace();
    let (config2, project2) = (config.clone(), project.clone());
    let run = std::thread::spawn(move || prompt(&config2, &project2));
    let deadline = Instant::now() + Duration::from_secs(60);
    while !project.join("started").exists() {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Outside the sandbox the mask's folder is a plain folder: someone
    // writes into it while the command runs (the command does not see it).
    std::fs::write(project.join(".codex/notes.txt"), "mine\n").unwrap();
    std::fs::write(project.join("go"), "").unwrap();
    let got = run.join().unwrap();
    assert_eq!(got, [("end".to_string(), false)]);
    assert_eq!(names(&project), [".codex", "go", "started"]);
    assert_eq!(
        std::fs::read_to_string(project.join(".codex/notes.txt")).unwrap(),
        "mine\n"
    );
}

#[test]
fn a_command_cut_off_by_its_timeout_leaves_no_mask_folder() {
    let dir = temp_dir();
    let d = dir.path().canonicalize().unwrap();
    let project = d.join("proj");
    std::fs::create_dir_all(&project).unwrap();
    // The command waits for `go`, which never comes, until its timeout.
    let config = manifest(
        &d,
        "- tool_calls: [{name: Bash, arguments: {command: 'touch started; \
         while [ ! -e go ]; do sleep 0.02; done', timeout: 2000}}]\n- text: done\n",
    );
    dsh_tests::artifacts::workspace();
    let (config2, project2) = (config.clone(), project.clone());
    let run = std::thread::spawn(move || prompt(&config2, &project2));
    let deadline = Instant::now() + Duration::from_secs(60);
    while !project.join("started").exists() {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // While it runs, the masks' folders are on disk...
    assert_eq!(
        names(&project),
        [".agents", ".aws", ".codex", ".git", "started"]
    );
    let got = run.join().unwrap();
    assert_eq!(got.len(), 1);
    assert!(got[0].1 && got[0].0.contains("timed out"), "{got:?}");
    // ...and the timeout took them away with the command.
    assert_eq!(names(&project), ["started"]);
}
