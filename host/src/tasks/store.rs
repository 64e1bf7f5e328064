//! Task lists on disk, laid out as Claude Code lays them out
//! (`~/.claude/tasks/<list>/<id>.json`, recorded S222): one folder per
//! list under `<state_dir>/tasks/`, one pretty-printed JSON file per task,
//! and `.highwatermark`, the highest id ever deleted, so an id is never
//! given twice (S221: the task a TaskCreated hook refused keeps its id).
//!
//! A list is a main session's (a subagent shares its parent's, S223), so a
//! session continued later (`dsh prompt --continue`, ACP `session/load`)
//! finds its tasks and a new session starts with none (S222). Folders are
//! private (0700), files 0600; every write goes to a temporary file first
//! and is renamed into place. A task file that does not parse is left
//! alone, logged and not listed (Claude Code skips it too).

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One task, in Claude Code's key order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// `"1"`, `"2"`, …
    pub id: String,
    /// A short imperative title.
    pub subject: String,
    /// What needs to be done.
    pub description: String,
    /// The present continuous form.
    #[serde(
        rename = "activeForm",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub active_form: Option<String>,
    /// `pending`, `in_progress` or `completed`.
    pub status: String,
    /// Who works on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Tasks waiting on this one.
    #[serde(default)]
    pub blocks: Vec<String>,
    /// Tasks this one waits on.
    #[serde(rename = "blockedBy", default)]
    pub blocked_by: Vec<String>,
    /// The model's own keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// Why the store could not do something: the action and the path.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file system call failed.
    #[error("task list: cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A task could not be written as JSON.
    #[error("task list: cannot encode {path}: {source}")]
    Encode {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
}

fn io<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> StoreError + 'a {
    move |source| StoreError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// A name Claude Code would use as a file name: every character but
/// `[A-Za-z0-9_-]` replaced by `-`.
fn file_name(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// Every task list of one state folder. Changes are serialized by one
/// lock, so two calls never give the same id.
#[derive(Debug)]
pub struct Store {
    root: PathBuf,
    lock: Mutex<()>,
}

impl Store {
    /// The lists under `root` (`<state_dir>/tasks`).
    pub fn new(root: PathBuf) -> Self {
        Store {
            root,
            lock: Mutex::new(()),
        }
    }

    fn dir(&self, list: &str) -> PathBuf {
        self.root.join(file_name(list))
    }

    fn path(&self, list: &str, id: &str) -> PathBuf {
        self.dir(list).join(format!("{}.json", file_name(id)))
    }

    fn guard(&self) -> std::sync::MutexGuard<'_, ()> {
        self.lock.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The task `id` of `list`, if there is one that parses.
    pub fn get(&self, list: &str, id: &str) -> Result<Option<Task>, StoreError> {
        let _held = self.guard();
        self.read(&self.path(list, id))
    }

    fn read(&self, path: &Path) -> Result<Option<Task>, StoreError> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io("read", path)(e)),
        };
        match serde_json::from_slice(&bytes) {
            Ok(task) => Ok(Some(task)),
            Err(e) => {
                tracing::warn!(path = %path.display(), "task file skipped: not a task: {e}");
                Ok(None)
            }
        }
    }

    /// Every task of `list` that parses, by id.
    pub fn all(&self, list: &str) -> Result<Vec<Task>, StoreError> {
        let _held = self.guard();
        self.read_all(list)
    }

    fn read_all(&self, list: &str) -> Result<Vec<Task>, StoreError> {
        let dir = self.dir(list);
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io("list", &dir)(e)),
        };
        let mut tasks = Vec::new();
        for entry in entries {
            let entry = entry.map_err(io("list", &dir))?;
            let path = entry.path();
            if path.extension().is_some_and(|x| x == "json")
                && let Some(task) = self.read(&path)?
            {
                tasks.push(task);
            }
        }
        tasks.sort_by_key(|t| t.id.parse::<u64>().unwrap_or(u64::MAX));
        Ok(tasks)
    }

    fn high_water(&self, list: &str) -> u64 {
        std::fs::read_to_string(self.dir(list).join(".highwatermark"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0)
    }

    fn write(&self, list: &str, task: &Task) -> Result<(), StoreError> {
        let dir = self.dir(list);
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(io("create", &dir))?;
        let path = self.path(list, &task.id);
        let text = serde_json::to_string_pretty(task).map_err(|source| StoreError::Encode {
            path: path.clone(),
            source,
        })?;
        write_file(&path, text.as_bytes())
    }

    /// Adds a task with the next id; the id.
    pub fn create(&self, list: &str, mut task: Task) -> Result<String, StoreError> {
        let _held = self.guard();
        // Every `<n>.json` counts, one that does not parse too: it is never
        // written over.
        let dir = self.dir(list);
        let mut highest = self.high_water(list);
        match std::fs::read_dir(&dir) {
            Ok(entries) => {
                for entry in entries {
                    let name = entry.map_err(io("list", &dir))?.file_name();
                    let n = name
                        .to_str()
                        .and_then(|n| n.strip_suffix(".json"))
                        .and_then(|n| n.parse::<u64>().ok());
                    highest = highest.max(n.unwrap_or(0));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io("list", &dir)(e)),
        }
        task.id = (highest + 1).to_string();
        self.write(list, &task)?;
        Ok(task.id)
    }

    /// Applies `change` to task `id`, if there is one; the task after.
    pub fn update(
        &self,
        list: &str,
        id: &str,
        change: impl FnOnce(&mut Task),
    ) -> Result<Option<Task>, StoreError> {
        let _held = self.guard();
        let Some(mut task) = self.read(&self.path(list, id))? else {
            return Ok(None);
        };
        change(&mut task);
        self.write(list, &task)?;
        Ok(Some(task))
    }

    /// Makes task `blocker` block task `blocked` (both must exist); whether
    /// both did.
    pub fn link(&self, list: &str, blocker: &str, blocked: &str) -> Result<bool, StoreError> {
        let _held = self.guard();
        let first = self.read(&self.path(list, blocker))?;
        let second = self.read(&self.path(list, blocked))?;
        let (Some(_), Some(_)) = (first, second) else {
            return Ok(false);
        };
        // Each file read again right before its own write: a task that
        // blocks itself gets both lists.
        if let Some(mut t) = self.read(&self.path(list, blocker))?
            && !t.blocks.iter().any(|b| b == blocked)
        {
            t.blocks.push(blocked.to_string());
            self.write(list, &t)?;
        }
        if let Some(mut t) = self.read(&self.path(list, blocked))?
            && !t.blocked_by.iter().any(|b| b == blocker)
        {
            t.blocked_by.push(blocker.to_string());
            self.write(list, &t)?;
        }
        Ok(true)
    }

    /// Removes task `id` and every mention of it; whether it was there.
    pub fn delete(&self, list: &str, id: &str) -> Result<bool, StoreError> {
        let _held = self.guard();
        let path = self.path(list, id);
        if let Ok(n) = id.parse::<u64>()
            && n > self.high_water(list)
        {
            let dir = self.dir(list);
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&dir)
                .map_err(io("create", &dir))?;
            write_file(&dir.join(".highwatermark"), n.to_string().as_bytes())?;
        }
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(io("remove", &path)(e)),
        }
        for mut task in self.read_all(list)? {
            let before = (task.blocks.len(), task.blocked_by.len());
            task.blocks.retain(|b| b != id);
            task.blocked_by.retain(|b| b != id);
            if before != (task.blocks.len(), task.blocked_by.len()) {
                self.write(list, &task)?;
            }
        }
        Ok(true)
    }
}

/// Writes `bytes` to a private temporary file beside `path` and renames it
/// into place.
fn write_file(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(io("create", &tmp))?;
    file.write_all(bytes).map_err(io("write", &tmp))?;
    drop(file);
    std::fs::rename(&tmp, path).map_err(io("rename into", path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(subject: &str) -> Task {
        Task {
            id: String::new(),
            subject: subject.into(),
            description: "d".into(),
            active_form: None,
            status: "pending".into(),
            owner: None,
            blocks: Vec::new(),
            blocked_by: Vec::new(),
            metadata: None,
        }
    }

    #[test]
    fn ids_count_up_and_a_deleted_id_is_never_given_again() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().join("tasks"));
        assert_eq!(store.create("s", task("a")).unwrap(), "1");
        assert_eq!(store.create("s", task("b")).unwrap(), "2");
        assert!(store.delete("s", "2").unwrap());
        assert!(!store.delete("s", "2").unwrap());
        assert_eq!(store.create("s", task("c")).unwrap(), "3");
        // Another list starts at 1.
        assert_eq!(store.create("other", task("x")).unwrap(), "1");
        let ids: Vec<String> = store.all("s").unwrap().into_iter().map(|t| t.id).collect();
        assert_eq!(ids, ["1", "3"]);
    }

    #[test]
    fn deleting_a_task_removes_it_from_every_blocks_list() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().join("tasks"));
        for s in ["a", "b", "c"] {
            store.create("s", task(s)).unwrap();
        }
        assert!(store.link("s", "1", "2").unwrap());
        assert!(store.link("s", "3", "2").unwrap());
        assert!(!store.link("s", "1", "9").unwrap());
        assert_eq!(store.get("s", "2").unwrap().unwrap().blocked_by, ["1", "3"]);
        store.delete("s", "3").unwrap();
        assert_eq!(store.get("s", "2").unwrap().unwrap().blocked_by, ["1"]);
        assert!(store.get("s", "1").unwrap().unwrap().blocks == ["2"]);
    }

    #[test]
    fn a_damaged_file_is_skipped_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().join("tasks"));
        store.create("s", task("a")).unwrap();
        let bad = dir.path().join("tasks/s/2.json");
        std::fs::write(&bad, "{not json").unwrap();
        assert_eq!(store.all("s").unwrap().len(), 1);
        // Its id stays taken: the next task does not write over it.
        assert_eq!(store.create("s", task("b")).unwrap(), "3");
        assert_eq!(std::fs::read_to_string(&bad).unwrap(), "{not json");
    }
}
