//! Hook files found from a session's working directory: reading them safely,
//! noticing when they change, and keeping the last good version of one that
//! breaks.
//!
//! Both bridges layer hook files per session (user, project, local, managed
//! for Claude Code; `$CODEX_HOME` and every `.codex/` from the project root
//! down for Codex). Which files form the layers is dialect business; what
//! they share lives here:
//!
//! - [`read_bounded`]: a discovered file is read only if it is a regular
//!   file of at most [`MAX_DISCOVERED_BYTES`], opened without blocking (a
//!   FIFO planted as `settings.json` cannot hang a turn), and, for files a
//!   project controls, only if it resolves inside that project
//!   ([`read_confined`], checked on the open file): a symlink out of the
//!   project is refused.
//! - [`FileCache`]: per file, the last [`FileStamp`] (device, inode, size,
//!   mtime and ctime in nanoseconds) and the last good parse. Each lookup
//!   is one `stat`; a file is parsed again only when its stamp changed, or
//!   after [`request_reread`] (the daemon's SIGHUP). A file that becomes
//!   invalid keeps its last good version ([`FileState::Kept`]) and the
//!   problem is reported once per change. A file that is deleted is gone:
//!   deleting is how a user removes hooks.
//! - [`sha256`]: the fingerprint trust is recorded with ([`crate::trust`]),
//!   over the exact bytes that were parsed.
//! - [`project_root`]: the nearest ancestor holding a root marker (`.git`
//!   by default), as Codex finds a project root.
//!
//! Stat per turn rather than file watching: a daemon serves many projects,
//! and a watch per `.claude/`/`.codex/` folder of every session would run
//! into inotify limits and miss network file systems, while a few `stat`s
//! per turn cost nothing next to a model request and make "the next turn
//! sees the edit" exact rather than eventual.

use std::collections::HashMap;
use std::io::Read as _;
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use dsh_plugin_api::ConfigProblem;

use crate::config::ConfigError;

/// The largest discovered hook or settings file read: 4 MiB, far above any
/// real settings file; a larger one is refused with a problem, not read.
pub const MAX_DISCOVERED_BYTES: u64 = 4 * 1024 * 1024;

/// Bumped by [`request_reread`]; every cache entry read before the bump is
/// parsed again at its next lookup. A process-wide counter because the
/// daemon's SIGHUP must reach the caches of bridge instances a reload keeps
/// (their per-session state survives the reload); it carries no data.
static REREAD: AtomicU64 = AtomicU64::new(0);

/// Makes every [`FileCache`] in this process read its files again at their
/// next lookup, changed or not (the daemon calls it on SIGHUP).
pub fn request_reread() {
    REREAD.fetch_add(1, Ordering::SeqCst);
}

fn reread_generation() -> u64 {
    REREAD.load(Ordering::SeqCst)
}

/// What identifies one version of a file without reading it. `ctime`
/// changes with any write, rename over, or `chmod`, so an edit that keeps
/// size and mtime is still seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileStamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

/// The stamp of `path` (following symlinks), `None` when it does not exist.
pub fn stamp(path: &Path) -> Option<FileStamp> {
    let meta = std::fs::metadata(path).ok()?;
    Some(FileStamp {
        dev: meta.dev(),
        ino: meta.ino(),
        len: meta.len(),
        mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
        ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
    })
}

/// The stamp of a symlink itself (for one that points nowhere).
fn link_stamp(path: &Path) -> Option<FileStamp> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some(FileStamp {
        dev: meta.dev(),
        ino: meta.ino(),
        len: meta.len(),
        mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
        ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
    })
}

/// Reads a discovered file: a regular file of at most
/// [`MAX_DISCOVERED_BYTES`], opened non-blocking so a FIFO or device
/// cannot stall the caller.
pub fn read_bounded(path: &Path) -> Result<Vec<u8>, ConfigError> {
    read_confined(path, None)
}

/// [`read_bounded`], and with `confine`, only if the file opened lies inside
/// that folder: checked on the open file itself (`/proc/self/fd`), so a
/// symlink swapped in between a check and the open cannot lead out.
pub fn read_confined(path: &Path, confine: Option<&Path>) -> Result<Vec<u8>, ConfigError> {
    use std::os::fd::AsRawFd as _;
    let read_error = |source: std::io::Error| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(read_error)?;
    if let Some(dir) = confine {
        let real = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
            .map_err(read_error)?;
        let dir = std::fs::canonicalize(dir).map_err(read_error)?;
        if !real.starts_with(&dir) {
            return Err(ConfigError::Shape {
                path: path.to_path_buf(),
                message: format!(
                    "resolves outside {} (a symlink out of the project)",
                    dir.display()
                ),
            });
        }
    }
    let meta = file.metadata().map_err(read_error)?;
    if meta.is_dir() {
        return Err(read_error(std::io::Error::from_raw_os_error(libc::EISDIR)));
    }
    if !meta.is_file() {
        return Err(ConfigError::Shape {
            path: path.to_path_buf(),
            message: "not a regular file".into(),
        });
    }
    if meta.len() > MAX_DISCOVERED_BYTES {
        return Err(ConfigError::Shape {
            path: path.to_path_buf(),
            message: format!(
                "{} bytes, more than the {MAX_DISCOVERED_BYTES} a hooks or settings file may have",
                meta.len()
            ),
        });
    }
    let mut bytes = Vec::new();
    file.take(MAX_DISCOVERED_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    if bytes.len() as u64 > MAX_DISCOVERED_BYTES {
        return Err(ConfigError::Shape {
            path: path.to_path_buf(),
            message: format!("grew past {MAX_DISCOVERED_BYTES} bytes while read"),
        });
    }
    Ok(bytes)
}

/// `sha256:<hex>` of `bytes`.
pub fn sha256(bytes: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in digest.as_ref() {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// The project root of `cwd`: its nearest ancestor (itself included) that
/// holds one of `markers`, else `cwd` itself (Codex's
/// `project_root_markers`, default `[".git"]`; none: `cwd`).
pub fn project_root(cwd: &Path, markers: &[String]) -> PathBuf {
    for dir in cwd.ancestors() {
        if markers
            .iter()
            .any(|m| std::fs::symlink_metadata(dir.join(m)).is_ok())
        {
            return dir.to_path_buf();
        }
    }
    cwd.to_path_buf()
}

/// A parsed file and what was wrong inside it (problems that did not stop
/// it from loading: a skipped group, an unknown key).
#[derive(Debug)]
pub struct Parsed<T> {
    /// What the file holds.
    pub value: T,
    /// Problems inside it.
    pub problems: Vec<ConfigProblem>,
}

/// One file as a lookup found it.
#[derive(Debug)]
pub enum FileState<T> {
    /// No such file.
    Missing,
    /// Read and parsed as it is now.
    Current {
        /// The parse.
        value: Arc<T>,
        /// [`sha256`] of the bytes parsed.
        hash: String,
    },
    /// It no longer reads or parses; its last good version stays.
    Kept {
        /// The last good parse.
        value: Arc<T>,
        /// [`sha256`] of the bytes of that version.
        hash: String,
        /// Why the file as it is now is not used.
        problem: ConfigProblem,
    },
    /// It exists but has never read or parsed.
    Broken {
        /// Why.
        problem: ConfigProblem,
    },
}

impl<T> FileState<T> {
    /// The version in effect and its hash, if any.
    pub fn in_effect(&self) -> Option<(&Arc<T>, &str)> {
        match self {
            FileState::Current { value, hash } | FileState::Kept { value, hash, .. } => {
                Some((value, hash))
            }
            FileState::Missing | FileState::Broken { .. } => None,
        }
    }
}

struct Entry<T> {
    stamp: FileStamp,
    generation: u64,
    good: Option<(Arc<T>, String)>,
    problem: Option<ConfigProblem>,
}

/// The last version of each file looked up, re-read when it changes.
pub struct FileCache<T> {
    entries: Mutex<HashMap<PathBuf, Entry<T>>>,
}

impl<T> Default for FileCache<T> {
    fn default() -> Self {
        FileCache {
            entries: Mutex::new(HashMap::new()),
        }
    }
}

impl<T> FileCache<T> {
    /// `path` as it is now. A changed (or never seen) file is read and
    /// parsed with `parse`, and everything wrong with it goes to `report`
    /// (once per change, so a log is not flooded turn after turn). With
    /// `confine`, a file that resolves outside that folder (a symlink out of
    /// the project) is refused.
    pub fn get(
        &self,
        path: &Path,
        confine: Option<&Path>,
        parse: impl FnOnce(&Path, &[u8]) -> Result<Parsed<T>, ConfigError>,
        report: &mut dyn FnMut(ConfigProblem),
    ) -> FileState<T> {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        // A dangling symlink has a stamp of its own: it names something,
        // and reading it reports why it gives nothing.
        let Some(now) = stamp(path).or_else(|| link_stamp(path)) else {
            entries.remove(path);
            return FileState::Missing;
        };
        let generation = reread_generation();
        if let Some(entry) = entries.get(path)
            && entry.stamp == now
            && entry.generation == generation
        {
            return state_of(entry);
        }
        let read = read_confined(path, confine);
        let parsed = read.and_then(|bytes| {
            let hash = sha256(&bytes);
            parse(path, &bytes).map(|p| (p, hash))
        });
        let previous = entries.remove(path).and_then(|e| e.good);
        let entry = match parsed {
            Ok((parsed, hash)) => {
                for p in parsed.problems {
                    report(p);
                }
                Entry {
                    stamp: now,
                    generation,
                    good: Some((Arc::new(parsed.value), hash)),
                    problem: None,
                }
            }
            Err(e) => {
                let mut problem = e.problem();
                if previous.is_some() {
                    problem = ConfigProblem::error(
                        problem.file.to_string(),
                        problem.key.to_string(),
                        problem.message.replace(
                            "no hooks loaded from it",
                            "the last good version of the file stays in effect",
                        ),
                    );
                }
                report(problem.clone());
                Entry {
                    stamp: now,
                    generation,
                    good: previous,
                    problem: Some(problem),
                }
            }
        };
        let state = state_of(&entry);
        entries.insert(path.to_path_buf(), entry);
        state
    }
}

fn state_of<T>(entry: &Entry<T>) -> FileState<T> {
    match (&entry.good, &entry.problem) {
        (Some((value, hash)), None) => FileState::Current {
            value: value.clone(),
            hash: hash.clone(),
        },
        (Some((value, hash)), Some(problem)) => FileState::Kept {
            value: value.clone(),
            hash: hash.clone(),
            problem: problem.clone(),
        },
        (None, Some(problem)) => FileState::Broken {
            problem: problem.clone(),
        },
        (None, None) => FileState::Missing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_num(path: &Path, bytes: &[u8]) -> Result<Parsed<u32>, ConfigError> {
        std::str::from_utf8(bytes)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .map(|value| Parsed {
                value,
                problems: Vec::new(),
            })
            .ok_or_else(|| ConfigError::Parse {
                path: path.to_path_buf(),
                message: "not a number".into(),
            })
    }

    fn get(cache: &FileCache<u32>, path: &Path, reports: &mut Vec<String>) -> FileState<u32> {
        cache.get(path, None, parse_num, &mut |p| reports.push(p.to_string()))
    }

    #[test]
    fn edits_are_seen_and_a_broken_edit_keeps_the_last_good_version() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("n");
        let cache = FileCache::default();
        let mut reports = Vec::new();
        assert!(matches!(get(&cache, &f, &mut reports), FileState::Missing));
        std::fs::write(&f, "1").unwrap();
        let FileState::Current { value, hash } = get(&cache, &f, &mut reports) else {
            panic!("not current")
        };
        assert_eq!((*value, hash.clone()), (1, sha256(b"1")));
        std::fs::write(&f, "22").unwrap();
        let state = get(&cache, &f, &mut reports);
        assert_eq!(**state.in_effect().unwrap().0, 22);
        let generation = reread_generation();
        std::fs::write(&f, "x").unwrap();
        let FileState::Kept { value, problem, .. } = get(&cache, &f, &mut reports) else {
            panic!("not kept")
        };
        assert_eq!(*value, 22);
        assert!(
            problem.to_string().contains("last good version"),
            "{problem}"
        );
        // Looked up again unchanged: reported once only (unless another
        // test asked for a re-read meanwhile).
        get(&cache, &f, &mut reports);
        if generation == reread_generation() {
            assert_eq!(reports.len(), 1, "{reports:?}");
        }
        std::fs::remove_file(&f).unwrap();
        assert!(matches!(get(&cache, &f, &mut reports), FileState::Missing));
    }

    #[test]
    fn a_reread_request_parses_unchanged_files_again() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("n");
        std::fs::write(&f, "x").unwrap();
        let cache = FileCache::default();
        let mut reports = Vec::new();
        get(&cache, &f, &mut reports);
        get(&cache, &f, &mut reports);
        assert_eq!(reports.len(), 1);
        request_reread();
        get(&cache, &f, &mut reports);
        assert_eq!(reports.len(), 2);
    }

    #[test]
    fn fifos_big_files_and_escapes_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        nix_mkfifo(&fifo);
        let err = read_bounded(&fifo).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b' '; MAX_DISCOVERED_BYTES as usize + 1]).unwrap();
        assert!(
            read_bounded(&big)
                .unwrap_err()
                .to_string()
                .contains("bytes")
        );
        let inner = dir.path().join("proj");
        std::fs::create_dir(&inner).unwrap();
        let outside = dir.path().join("secret");
        std::fs::write(&outside, "7").unwrap();
        let link = inner.join("n");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        let cache = FileCache::default();
        let mut reports = Vec::new();
        let state = cache.get(&link, Some(&inner), parse_num, &mut |p| {
            reports.push(p.to_string())
        });
        assert!(matches!(state, FileState::Broken { .. }), "{state:?}");
        assert!(reports[0].contains("outside"), "{reports:?}");
    }

    fn nix_mkfifo(path: &Path) {
        let status = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap();
        assert!(status.success());
    }

    #[test]
    fn project_root_is_the_nearest_marked_ancestor() {
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("a/b/c");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::create_dir(dir.path().join("a/.git")).unwrap();
        let markers = vec![".git".to_string()];
        assert_eq!(project_root(&deep, &markers), dir.path().join("a"));
        assert_eq!(project_root(&deep, &[]), deep);
    }
}
