//! The hook script every vector's commands run (`$HOOKS/hook.sh <label>`
//! or `$HOOKS/hook.sh $RUN/cap <label>`), and what it saved.
//!
//! Unlike the plugin-level tests, which set one answer before each call,
//! the loop runs many hooks per turn on its own, so the script keeps
//! everything per call: call `n` of `label` claims `cap/<label>.<n>/`
//! (stdin, cwd, argv, env), appends `<label> <n>` to `cap/order` (start
//! order), then answers (after its recorded sleep) from `beh/<label>.<n>/`, else `beh/<label>.when` +
//! `then`/`otherwise` (by what stdin holds), else `beh/<label>.default/`.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use dsh_hook_protocol::vectors::{Sandbox, Vector};
use serde_json::Value;

const HOOK_SH: &str = r#"#!/bin/sh
R='@RUN@'
case "$1" in */cap) label="$2" ;; *) label="$1" ;; esac
n=1
while ! mkdir "$R/cap/$label.$n" 2>/dev/null; do n=$((n+1)); done
d="$R/cap/$label.$n"
echo "$label $n" >> "$R/cap/order"
{ printf '%s\n' "$0"; for a in "$@"; do printf '%s\n' "$a"; done; } > "$d/argv"
cat > "$d/stdin"
pwd -P > "$d/cwd"
env > "$d/env"
b="$R/beh/$label.$n"
if [ ! -d "$b" ] && [ -f "$R/beh/$label.when" ]; then
  if grep -qF -- "$(cat "$R/beh/$label.when")" "$d/stdin"; then b="$R/beh/$label.then"; else b="$R/beh/$label.otherwise"; fi
fi
[ -d "$b" ] || b="$R/beh/$label.default"
[ -f "$b/sleep" ] && sleep "$(cat "$b/sleep")"
[ -f "$b/stdout" ] && cat "$b/stdout"
[ -f "$b/stderr" ] && cat "$b/stderr" >&2
[ -f "$b/signal" ] && kill -9 $$
code=0
[ -f "$b/exit" ] && code=$(cat "$b/exit")
exit "$code"
"#;

/// One call the hook script saw.
#[derive(Clone, Debug)]
pub struct Call {
    pub label: String,
    pub stdin: String,
    pub cwd: String,
    /// `$0` then every argument.
    pub argv: Vec<String>,
    pub env: String,
}

impl Call {
    pub fn env_var(&self, name: &str) -> Option<String> {
        let prefix = format!("{name}=");
        self.env
            .lines()
            .find_map(|l| l.strip_prefix(&prefix).map(String::from))
    }
}

/// Installs the script over the sandbox's `hooks/hook.sh`.
pub fn install(sb: &Sandbox) {
    let path = sb.run().join("hooks/hook.sh");
    std::fs::write(
        &path,
        HOOK_SH.replace("@RUN@", &sb.run().display().to_string()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn write_answer(dir: &Path, b: &Value, sb: &Sandbox) {
    std::fs::create_dir_all(dir).unwrap();
    // Bytes that are not UTF-8 come whole in `<stream>_b64` (vectors
    // `C19x-invalid-utf8-*`).
    let bytes = |k: &str| match b[format!("{k}_b64")].as_str() {
        Some(b64) => base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap(),
        None => sb.subst(b[k].as_str().unwrap_or_default()).into_bytes(),
    };
    std::fs::write(dir.join("stdout"), bytes("stdout")).unwrap();
    std::fs::write(dir.join("stderr"), bytes("stderr")).unwrap();
    // A hook that kills itself (vectors `C19x-signal`).
    if b["killed_by_signal"].is_string() {
        std::fs::write(dir.join("signal"), "").unwrap();
    }
    std::fs::write(
        dir.join("exit"),
        b["exit_code"].as_i64().unwrap_or(0).to_string(),
    )
    .unwrap();
    // Recorded sleeps fix the order in which the hooks of one point
    // finish (vectors `S53-*`).
    if let Some(secs) = b["sleep_s"].as_f64().filter(|s| *s > 0.0) {
        std::fs::write(dir.join("sleep"), secs.to_string()).unwrap();
    }
}

/// Writes every label's answers as `hook_behaviors` describes them.
pub fn write_behaviors(sb: &Sandbox, v: &Vector) {
    let beh = sb.run().join("beh");
    let silent = serde_json::json!({"exit_code": 0, "stdout": "", "stderr": ""});
    let Some(all) = v.json["hook_behaviors"].as_object() else {
        return;
    };
    for (label, b) in all {
        let at = |s: &str| beh.join(format!("{label}.{s}"));
        if let Some(calls) = b["per_call"].as_array() {
            for (i, c) in calls.iter().enumerate() {
                write_answer(&at(&(i + 1).to_string()), c, sb);
            }
            write_answer(&at("default"), calls.last().unwrap_or(&silent), sb);
        } else if let Some(when) = b["when"].as_str() {
            let needle = when.split("contains ").nth(1).unwrap_or_default().trim();
            let needle = needle
                .strip_prefix('\'')
                .and_then(|n| n.strip_suffix('\''))
                .unwrap_or(needle);
            std::fs::write(at("when"), needle).unwrap();
            write_answer(&at("then"), &b["then"], sb);
            write_answer(&at("otherwise"), &b["otherwise"], sb);
        } else if b["only_first_call"] == true {
            write_answer(&at("1"), b, sb);
            write_answer(&at("default"), &silent, sb);
        } else {
            write_answer(&at("default"), b, sb);
        }
    }
}

/// Every call, in start order.
pub fn calls(run: &Path) -> Vec<Call> {
    let cap = run.join("cap");
    let order = std::fs::read_to_string(cap.join("order")).unwrap_or_default();
    order
        .lines()
        .filter_map(|l| l.rsplit_once(' '))
        .map(|(label, n)| {
            let d: PathBuf = cap.join(format!("{label}.{n}"));
            let read = |f: &str| std::fs::read_to_string(d.join(f)).unwrap_or_default();
            Call {
                label: label.to_string(),
                stdin: read("stdin"),
                cwd: read("cwd").trim_end().to_string(),
                argv: read("argv").lines().map(String::from).collect(),
                env: read("env"),
            }
        })
        .collect()
}
