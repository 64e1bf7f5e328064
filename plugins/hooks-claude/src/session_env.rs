//! `CLAUDE_ENV_FILE` for real: what SessionStart and CwdChanged hooks write
//! there reaches the session's later `Bash` commands, as in Claude Code.
//!
//! The lifecycle, recorded (vectors `S50-*`) and read from Claude Code
//! 2.1.197:
//! - each such hook gets its own file,
//!   `<session_env_dir>/<session>/<event lowercased>-hook-<n>.sh`, `n` its
//!   index among the hooks that run for that event (across matcher
//!   groups); the hook writes it, nothing is made for it;
//! - a SessionStart(resume) firing's files are under a fresh id's folder
//!   instead of the session's (vectors `S160-*`, [`crate::events`]), so
//!   what resume hooks write is never built into the script; the
//!   session's folder keeps what its startup and compact hooks wrote in
//!   earlier processes, and a resumed session's script is built from it;
//! - the session's shell script is built from the file named by dsh's own
//!   `CLAUDE_ENV_FILE` (if set), then every `setup`, `sessionstart`,
//!   `cwdchanged`, `filechanged` hook file in that order, by index within an
//!   event; each trimmed, empty ones left out, joined by a blank line;
//! - it is built once SessionStart's hooks have run and again after every
//!   move of the session's cwd (after its CwdChanged hooks, whose files are
//!   emptied before they run); in between it is not re-read, so a command
//!   that writes a hook file is seen only after the next rebuild
//!   (`S50-tool-writes-file`);
//! - it runs in the `Bash` tool's shell before each command (plugin API
//!   1.4's shell prelude): exported or not, its variables are the
//!   command's; hooks never see them.

use std::path::Path;

/// Claude Code's order of the events whose hooks get a `CLAUDE_ENV_FILE`.
const EVENTS: [&str; 4] = ["setup", "sessionstart", "cwdchanged", "filechanged"];

/// `(event rank, index)` of a hook file name Claude Code sources
/// (`^(setup|sessionstart|cwdchanged|filechanged)-hook-(\d+)\.sh$`).
fn rank(name: &str) -> Option<(usize, u64)> {
    let (event, rest) = name.split_once("-hook-")?;
    let event = EVENTS.iter().position(|e| *e == event)?;
    let digits = rest.strip_suffix(".sh")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Claude Code compares `parseInt`s; an index past u64 sorts last.
    Some((event, digits.parse().unwrap_or(u64::MAX)))
}

/// The largest hook env file read; a larger one is left out.
const MAX_ENV_FILE_BYTES: u64 = 16 << 20;

/// The text of the env file at `path`, or why it is left out. A hook may
/// leave anything there: a FIFO (whose open would wait for a writer
/// forever), a symlink to `/dev/zero` (endless), a folder. Only a regular
/// file (symlinks followed) of at most [`MAX_ENV_FILE_BYTES`] is read.
fn read_env_file(path: &Path) -> Result<String, String> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .read(true)
        // Opening a FIFO without it does not return until a writer comes.
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| e.to_string())?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > MAX_ENV_FILE_BYTES {
        return Err(format!(
            "{} bytes, more than the {MAX_ENV_FILE_BYTES} read",
            meta.len()
        ));
    }
    let mut bytes = Vec::new();
    file.take(MAX_ENV_FILE_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|_| "not UTF-8".to_string())
}

/// The session's script: `launch_file`'s text, then the hook files of
/// `dir` in Claude Code's order, each trimmed, empty ones left out, joined
/// by a blank line. Unreadable files are left out.
pub fn build(dir: &Path, launch_file: Option<&Path>) -> String {
    build_reporting(dir, launch_file, |_, _| {})
}

/// [`build`], telling `left_out` each file left out and why.
pub fn build_reporting(
    dir: &Path,
    launch_file: Option<&Path>,
    mut left_out: impl FnMut(&Path, &str),
) -> String {
    let mut parts = Vec::new();
    if let Some(file) = launch_file {
        match read_env_file(file) {
            Ok(text) => parts.push(text.trim().to_string()),
            Err(why) => left_out(file, &why),
        }
    }
    let mut files: Vec<((usize, u64), std::path::PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            Some((rank(&name)?, e.path()))
        })
        .collect();
    files.sort();
    for (_, path) in files {
        match read_env_file(&path) {
            Ok(text) => parts.push(text.trim().to_string()),
            Err(why) => left_out(&path, &why),
        }
    }
    parts.retain(|p| !p.is_empty());
    parts.join("\n\n")
}

/// Empties every `cwdchanged` and `filechanged` hook file of `dir`, as
/// Claude Code does before its CwdChanged hooks run.
pub fn clear_cwd_files(dir: &Path) -> std::io::Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        // Only a regular file is emptied: opening a FIFO a hook left there
        // for writing would wait for a reader forever.
        if matches!(rank(name), Some((2 | 3, _)))
            && std::fs::metadata(entry.path()).is_ok_and(|m| m.is_file())
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            std::fs::OpenOptions::new()
                .write(true)
                .truncate(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(entry.path())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_claude_code_file_names_count() {
        assert_eq!(rank("sessionstart-hook-0.sh"), Some((1, 0)));
        assert_eq!(rank("cwdchanged-hook-12.sh"), Some((2, 12)));
        assert_eq!(rank("setup-hook-3.sh"), Some((0, 3)));
        for bad in [
            "sessionstart-hook-.sh",
            "sessionstart-hook-1.sh.bak",
            "stop-hook-0.sh",
            "sessionstart-hook-x.sh",
            "SessionStart-hook-0.sh",
        ] {
            assert_eq!(rank(bad), None, "{bad}");
        }
    }

    #[test]
    fn files_are_sourced_by_event_then_index_trimmed_and_joined() {
        let dir = tempfile::tempdir().unwrap();
        let w = |n: &str, t: &str| std::fs::write(dir.path().join(n), t).unwrap();
        w("cwdchanged-hook-0.sh", "export C=1\n");
        w("sessionstart-hook-10.sh", "export B=10");
        w("sessionstart-hook-2.sh", "\n  export B=2 \n\n");
        w("sessionstart-hook-3.sh", "   \n");
        w("setup-hook-0.sh", "export S=0");
        w("notes.txt", "ignored");
        let launch = dir.path().join("launch.sh");
        std::fs::write(&launch, "export L=1\n").unwrap();
        assert_eq!(
            build(dir.path(), Some(&launch)),
            "export L=1\n\nexport S=0\n\nexport B=2\n\nexport B=10\n\nexport C=1"
        );
        assert_eq!(build(&dir.path().join("missing"), None), "");
    }

    #[test]
    fn a_cwd_change_empties_only_cwd_and_file_hook_files() {
        let dir = tempfile::tempdir().unwrap();
        let w = |n: &str| std::fs::write(dir.path().join(n), "export X=1").unwrap();
        w("cwdchanged-hook-0.sh");
        w("filechanged-hook-1.sh");
        w("sessionstart-hook-0.sh");
        clear_cwd_files(dir.path()).unwrap();
        assert_eq!(build(dir.path(), None), "export X=1");
        clear_cwd_files(&dir.path().join("missing")).unwrap();
    }
}
