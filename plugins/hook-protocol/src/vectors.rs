//! Test support for driving the recorded vectors (feature `local-runner`).
//!
//! A vector (`tests/fixtures/vectors/<dialect>/*.json`) records what the
//! real CLI fed each hook and what it did with the answers. [`Sandbox`]
//! lays out the folders a vector's placeholders name, writes its hook
//! files with the placeholders replaced, and installs `hooks/hook.sh`: a
//! script that saves what it received (stdin, cwd, argv, environment) and
//! then answers exactly as the test tells it (stdout, stderr, exit code).

use std::path::{Path, PathBuf};

use serde_json::Value;

/// One vector file.
#[derive(Clone, Debug)]
pub struct Vector {
    /// File stem, e.g. `S2-exit2`.
    pub name: String,
    /// The parsed file.
    pub json: Value,
}

impl Vector {
    /// `hook_calls`.
    pub fn calls(&self) -> &[Value] {
        self.json["hook_calls"]
            .as_array()
            .map_or(&[], Vec::as_slice)
    }
}

/// Every vector of a folder, sorted by name.
pub fn load_dir(dir: &Path) -> Vec<Vector> {
    let mut out: Vec<Vector> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let text =
                std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            Vector {
                name: p
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                json: serde_json::from_str(&text)
                    .unwrap_or_else(|e| panic!("{}: {e}", p.display())),
            }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// What `hook.sh` saw on one call.
#[derive(Clone, Debug, Default)]
pub struct Captured {
    /// Exact stdin bytes.
    pub stdin: String,
    /// `pwd -P`.
    pub cwd: String,
    /// `$0` then every argument, as received.
    pub argv: Vec<String>,
    /// `env` output, one `K=V` per line.
    pub env: String,
}

impl Captured {
    /// The value of one environment variable.
    pub fn env_var(&self, name: &str) -> Option<String> {
        let prefix = format!("{name}=");
        self.env
            .lines()
            .find_map(|l| l.strip_prefix(&prefix).map(String::from))
    }
}

/// The folders of one vector run.
pub struct Sandbox {
    _dir: tempfile::TempDir,
    run: PathBuf,
    map: Vec<(String, String)>,
}

const HOOK_SH: &str = r#"#!/bin/sh
# Saves what the hook received, then answers as told in beh/<label>.*
R='@RUN@'
argv_file=$(mktemp "$R/cap/argv.XXXXXX")
{ printf '%s\n' "$0"; for a in "$@"; do printf '%s\n' "$a"; done; } > "$argv_file"
case "$1" in */cap) label="$2" ;; *) label="$1" ;; esac
mv "$argv_file" "$R/cap/$label.argv"
cat > "$R/cap/$label.stdin"
pwd -P > "$R/cap/$label.cwd"
env > "$R/cap/$label.env"
[ -f "$R/beh/$label.stdout" ] && cat "$R/beh/$label.stdout"
[ -f "$R/beh/$label.stderr" ] && cat "$R/beh/$label.stderr" >&2
[ -f "$R/beh/$label.signal" ] && kill -9 $$
code=0
[ -f "$R/beh/$label.exit" ] && code=$(cat "$R/beh/$label.exit")
exit "$code"
"#;

impl Default for Sandbox {
    fn default() -> Self {
        Sandbox::new()
    }
}

impl Sandbox {
    /// Lays out `$RUN/{proj,home,hooks,plugin,codex_home,cap,beh}` and
    /// installs `hooks/hook.sh`. `$HOME` maps to `$RUN/home` (as in the
    /// recordings), except under `$HOME/.claude/plugins/`: the plugin data
    /// folder the bridge names after the real `HOME` (only named, never
    /// written). `$PROJECT_SLUG` is Claude Code's slug of `$RUN/proj`.
    pub fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let run = dir
            .path()
            .canonicalize()
            .unwrap_or_else(|e| panic!("canonicalize: {e}"));
        for sub in [
            "proj",
            "hooks",
            "plugin",
            "codex_home",
            "cap",
            "beh",
            "home",
        ] {
            std::fs::create_dir_all(run.join(sub)).unwrap_or_else(|e| panic!("mkdir {sub}: {e}"));
        }
        let r = |s: &str| run.join(s).display().to_string();
        let real_home = std::env::var("HOME").unwrap_or_default();
        // Longest names first: `$PROJECT_SLUG` is not `$PROJECT` + `_SLUG`.
        let map = vec![
            (
                "$HOME/.claude/plugins/".to_string(),
                format!("{real_home}/.claude/plugins/"),
            ),
            ("$PLUGIN_ROOT".to_string(), r("plugin")),
            ("$CODEX_HOME".to_string(), r("codex_home")),
            ("$PROJECT_SLUG".to_string(), project_slug(&r("proj"))),
            // Claude Code's temp folder: background `Bash` output (S260-*).
            ("$CLAUDE_TMP".to_string(), r("claude_tmp")),
            ("$PROJECT".to_string(), r("proj")),
            ("$HOOKS".to_string(), r("hooks")),
            ("$HOME".to_string(), r("home")),
            ("$RUN".to_string(), run.display().to_string()),
        ];
        let sandbox = Sandbox {
            _dir: dir,
            run,
            map,
        };
        let script = HOOK_SH.replace("@RUN@", &sandbox.run.display().to_string());
        let hook = sandbox.run.join("hooks/hook.sh");
        std::fs::write(&hook, script).unwrap_or_else(|e| panic!("hook.sh: {e}"));
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755))
            .unwrap_or_else(|e| panic!("chmod: {e}"));
        sandbox
    }

    /// `$HOME`: `$RUN/home`, empty at first.
    pub fn home(&self) -> PathBuf {
        self.run().join("home")
    }

    /// The run folder.
    pub fn run(&self) -> &Path {
        &self.run
    }

    /// Replaces the path placeholders of `text` (ids stay as they are).
    pub fn subst(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        'outer: while let Some(pos) = rest.find('$') {
            out.push_str(&rest[..pos]);
            let tail = &rest[pos..];
            for (name, value) in &self.map {
                let boundary = tail[name.len().min(tail.len())..]
                    .chars()
                    .next()
                    .is_none_or(|c| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'));
                if tail.starts_with(name.as_str()) && boundary {
                    out.push_str(value);
                    rest = &tail[name.len()..];
                    continue 'outer;
                }
            }
            out.push('$');
            rest = &tail[1..];
        }
        out.push_str(rest);
        out
    }

    /// [`Self::subst`] over every string of a JSON value.
    pub fn subst_value(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.subst(s)),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.subst_value(x)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, x)| (k.clone(), self.subst_value(x)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    /// Writes every file of `hooks_config.files`; returns their paths.
    pub fn write_config_files(&self, vector: &Vector) -> Vec<PathBuf> {
        let files = vector.json["hooks_config"]["files"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut written = Vec::new();
        for f in files {
            let path = PathBuf::from(self.subst(f["path"].as_str().unwrap_or_default()));
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("mkdir: {e}"));
            }
            let text = match (&f["json"], &f["text"]) {
                (Value::Null, Value::String(t)) => self.subst(t),
                (json, _) => self.subst_value(json).to_string(),
            };
            std::fs::write(&path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
            written.push(path);
        }
        written
    }

    /// Tells `hook.sh` how to answer the next call of `label` (bytes, so
    /// output that is not UTF-8 is replayed whole).
    pub fn set_behavior(
        &self,
        label: &str,
        exit: i64,
        stdout: impl AsRef<[u8]>,
        stderr: impl AsRef<[u8]>,
    ) {
        let beh = self.run.join("beh");
        let w = |ext: &str, s: &[u8]| {
            std::fs::write(beh.join(format!("{label}.{ext}")), s)
                .unwrap_or_else(|e| panic!("beh: {e}"))
        };
        w("exit", exit.to_string().as_bytes());
        w("stdout", stdout.as_ref());
        w("stderr", stderr.as_ref());
        let _ = std::fs::remove_file(beh.join(format!("{label}.signal")));
    }

    /// Makes the next call of `label` kill itself with SIGKILL after its
    /// output (`killed_by_signal`; call after [`Sandbox::set_behavior`]).
    pub fn set_killed(&self, label: &str) {
        std::fs::write(self.run.join("beh").join(format!("{label}.signal")), "")
            .unwrap_or_else(|e| panic!("beh: {e}"));
    }

    /// Takes what `hook.sh` saved for `label`, if it ran.
    pub fn take_captured(&self, label: &str) -> Option<Captured> {
        let cap = self.run.join("cap");
        let read = |ext: &str| std::fs::read_to_string(cap.join(format!("{label}.{ext}"))).ok();
        let stdin = read("stdin")?;
        let c = Captured {
            stdin,
            cwd: read("cwd").unwrap_or_default().trim_end().to_string(),
            argv: read("argv")
                .unwrap_or_default()
                .lines()
                .map(String::from)
                .collect(),
            env: read("env").unwrap_or_default(),
        };
        for ext in ["stdin", "cwd", "argv", "env"] {
            let _ = std::fs::remove_file(cap.join(format!("{label}.{ext}")));
        }
        Some(c)
    }
}

/// Names [`set_launch_env`] put into this process's environment.
static LAUNCHED: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();

/// Puts the launch environment of the environment recordings (vectors
/// whose hook calls have `env_removed` or `env_PATH`: S20, C20) into this
/// process's environment, once: telemetry variables and credentials that
/// the hooks inherit unless the bridge drops them. Base variables (`HOME`,
/// `PATH`, `SHELL`, `LANG`, `TERM`), values with placeholders and names
/// already set are left alone. Call it before any hook runs.
pub fn set_launch_env(all: &[Vector]) {
    LAUNCHED.get_or_init(|| {
        let mut set = Vec::new();
        for v in all {
            let recorded = v
                .calls()
                .iter()
                .any(|c| c.get("env_removed").is_some() || c.get("env_PATH").is_some());
            let Some(env) = v.json["launch_env"].as_object().filter(|_| recorded) else {
                continue;
            };
            for (name, value) in env {
                let Some(value) = value.as_str() else {
                    continue;
                };
                let base = ["HOME", "PATH", "SHELL", "LANG", "TERM"].contains(&name.as_str());
                if base || value.contains('$') || std::env::var_os(name).is_some() {
                    continue;
                }
                // SAFETY: done once, before the vectors run any hook; the
                // names are the recordings' own (OTEL_*, *_TOKEN, MARK_*),
                // read by no other code of the test binary.
                unsafe { std::env::set_var(name, value) };
                set.push(name.clone());
            }
        }
        set
    });
}

/// Whether `name` was put into this process's environment by
/// [`set_launch_env`] for another vector than `v` (so it is not part of
/// `v`'s launch environment).
pub fn foreign_to(v: &Vector, name: &str) -> bool {
    LAUNCHED
        .get()
        .is_some_and(|set| set.iter().any(|n| n == name))
        && v.json["launch_env"].get(name).is_none()
}

/// Claude Code's folder name for a project: the absolute path with every
/// character other than `[A-Za-z0-9]` replaced by `-`.
pub fn project_slug(path: &str) -> String {
    path.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// Whether `got` is `want` with every whole `$UUID`, `$UUID_<n>` and
/// `$HOOK_ID` token standing for a lowercase hyphenated UUID, the same
/// token always for the same UUID (ids dsh makes afresh: saved-file
/// names). Everything else must be equal.
pub fn matches_with_uuids(want: &str, got: &str) -> bool {
    let mut bound: Vec<(String, String)> = Vec::new();
    let (mut w, mut g) = (want, got);
    loop {
        let Some(pos) = w.find('$') else {
            return w == g;
        };
        if g.get(..pos) != Some(&w[..pos]) {
            return false;
        }
        let tail = &w[pos..];
        let len = tail[1..]
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .map_or(tail.len(), |n| n + 1);
        let name = &tail[..len];
        let is_id = name == "$HOOK_ID" || name == "$UUID" || name.starts_with("$UUID_");
        if !is_id {
            if !g[pos..].starts_with('$') {
                return false;
            }
            w = &tail[1..];
            g = &g[pos + 1..];
            continue;
        }
        let Some(value) = g.get(pos..pos + 36) else {
            return false;
        };
        let shaped = value.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_digit() || ('a'..='f').contains(&c),
        });
        if !shaped {
            return false;
        }
        match bound.iter().find(|(n, _)| n == name) {
            Some((_, v)) if v != value => return false,
            Some(_) => {}
            None => {
                if bound.iter().any(|(_, v)| v == value) {
                    return false;
                }
                bound.push((name.to_string(), value.to_string()));
            }
        }
        w = &tail[len..];
        g = &g[pos + 36..];
    }
}

/// The answer a vector's `hook_behaviors[label]` gives on its `nth` call
/// (1-based) whose stdin is `stdin`: `(exit code, stdout, stderr)`.
pub fn behavior(vector: &Vector, label: &str, nth: usize, stdin: &str) -> (i64, String, String) {
    let v = behavior_entry(vector, label, nth, stdin);
    (
        v["exit_code"].as_i64().unwrap_or(0),
        v["stdout"].as_str().unwrap_or_default().to_string(),
        v["stderr"].as_str().unwrap_or_default().to_string(),
    )
}

/// The entry of `hook_behaviors[label]` that answers its `nth` call
/// (1-based) whose stdin is `stdin` (`exit_code`, `stdout`, `stderr`, and
/// where recorded `stdout_b64`/`stderr_b64` for bytes that are not UTF-8
/// and `killed_by_signal`); a silent answer when there is none.
pub fn behavior_entry(vector: &Vector, label: &str, nth: usize, stdin: &str) -> Value {
    let b = &vector.json["hook_behaviors"][label];
    let silent = || serde_json::json!({"exit_code": 0, "stdout": "", "stderr": ""});
    let pick = |v: &Value| v.clone();
    if let Some(calls) = b["per_call"].as_array() {
        return calls
            .get(nth - 1)
            .or(calls.last())
            .map(pick)
            .unwrap_or_else(silent);
    }
    if let Some(when) = b["when"].as_str() {
        let needle = when.split("contains ").nth(1).unwrap_or_default().trim();
        let needle = needle
            .strip_prefix('\'')
            .and_then(|n| n.strip_suffix('\''))
            .unwrap_or(needle);
        return pick(if stdin.contains(needle) {
            &b["then"]
        } else {
            &b["otherwise"]
        });
    }
    if b["only_first_call"].as_bool() == Some(true) && nth > 1 {
        return silent();
    }
    pick(b)
}
