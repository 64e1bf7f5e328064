//! Codex's masks (C140): in `workspace-write`, a writable root without
//! `.agents`, `.aws`, `.codex` or `.git` shows each as an empty read-only
//! folder (a tmpfs, mode 555) to the command, so it cannot make one; on
//! disk, plain empty folders stand in their place while the command runs
//! and are gone afterwards. Real namespaces, shells and files; the test
//! looks at the disk from outside while the command waits for it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use dsh_tests::temp_dir;

use super::{prompt, results, setup};

/// Waits (at most 60 s) until `path` exists.
fn wait_for(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The command of the test: what the masks are inside, then it waits for
/// the test to look at the disk.
const COMMAND: &str = "exec 2>&1; stat -c '%n %F %a %s %h' .agents .codex .git; \
    stat -f -c '%n %T' .codex; mkdir .codex; echo rc=$?; touch .git/x; echo rc=$?; \
    rmdir .agents; echo rc=$?; cat .aws/config; touch started; \
    while [ ! -e go ]; do sleep 0.02; done";

#[test]
fn workspace_write_shows_empty_read_only_folders_the_root_lacks_and_leaves_none() {
    let dir = temp_dir();
    let d = dir.path().canonicalize().unwrap();
    let project = d.join("proj");
    std::fs::create_dir_all(project.join(".aws")).unwrap();
    std::fs::write(project.join(".aws/config"), "[default]\n").unwrap();
    // `/tmp` and `$TMPDIR` (writable roots too, masked alike) are left
    // out: this test looks at the project only.
    let config = setup(
        &d,
        "      sandbox_mode: workspace-write\n      sandbox_workspace_write: \
         {exclude_slash_tmp: true, exclude_tmpdir_env_var: true}\n",
        &format!(
            "- tool_calls: [{{name: Bash, arguments: {{command: \"{COMMAND}\"}}}}]\n- text: done\n"
        ),
    );
    // The binary is built (once) before the clock of the wait starts.
    dsh_tests::artifacts::workspace();
    let (config2, project2) = (config.clone(), project.clone());
    let run = std::thread::spawn(move || prompt(&config2, &project2));

    wait_for(&project.join("started"));
    // On disk, during the run: plain empty folders where the masks are,
    // the real `.aws` as it was.
    assert_eq!(
        names(&project),
        [".agents", ".aws", ".codex", ".git", "started"]
    );
    for name in [".agents", ".codex", ".git"] {
        let path: PathBuf = project.join(name);
        assert!(path.is_dir(), "{name}");
        assert!(names(&path).is_empty(), "{name}");
    }
    std::fs::write(project.join("go"), "").unwrap();
    let out = run.join().unwrap();

    let got = results(&out);
    assert_eq!(got.len(), 1, "{}", out.stdout);
    assert_eq!(
        got[0],
        (
            ".agents directory 555 40 2\n.codex directory 555 40 2\n.git directory 555 40 2\n\
             .codex tmpfs\n\
             mkdir: cannot create directory ‘.codex’: File exists\nrc=1\n\
             touch: cannot touch '.git/x': Read-only file system\nrc=1\n\
             rmdir: failed to remove '.agents': Device or resource busy\nrc=1\n\
             [default]"
                .to_string(),
            false
        )
    );
    // After the run: nothing of the masks is left, the rest is as it was.
    assert_eq!(names(&project), [".aws", "go", "started"]);
    assert_eq!(names(&project.join(".aws")), ["config"]);
}
