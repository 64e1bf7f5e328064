//! Session ids that are paths, state that must stay private, and logs that
//! arrive damaged, through the real `dsh` binary (and `dsh acp` on stdio).
//!
//! - ids like `../../x`, an absolute path, `a/b`, empty, 200 characters or
//!   holding a NUL are refused at every entry, and nothing anywhere (least
//!   of all the files planted where the traversal would land) changes;
//! - a fresh state folder, `sessions/` and every log are private under a
//!   0000 umask;
//! - an empty log, a torn or garbage header and garbage in the middle are
//!   each reported naming the file, the line and `dsh sessions repair`,
//!   and that command makes the session usable again without losing a byte.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};

use dsh_tests::acp_stdio::AcpStdio;
use dsh_tests::run;
use serde_json::{Value, json};

use super::session_support::{DSH_TIMEOUT, Project, kinds, shown, tree};

/// What an unchecked load would find where a traversal lands: a log with
/// an open turn and a torn last line, so loading it would both cut the
/// file and append to it.
const BAIT: &str = "{\"type\":\"session\",\"version\":1,\"session_id\":\"x\",\"cwd\":\"/\",\"created_ms\":1}\n{\"type\":\"turn/start\",\"turn_id\":\"t\",\"kind\":\"prompt\"}\n{\"type\":\"user/mess";

/// The paths that differ between two pictures of a tree.
fn changed(
    before: &BTreeMap<PathBuf, Option<Vec<u8>>>,
    after: &BTreeMap<PathBuf, Option<Vec<u8>>>,
) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = before.keys().chain(after.keys()).cloned().collect();
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .filter(|p| before.get(p) != after.get(p))
        .collect()
}

/// A project with one real session, bait planted where `../../x` and the
/// absolute id land, and the ids to try.
fn baited() -> (Project, Vec<String>) {
    let project = Project::new("- text: ok\n");
    let made = project.prompt("real", "hi");
    assert_eq!(made.code, Some(0), "{}", shown(&made));
    // `state/sessions/../../x.jsonl` is the project's `x.jsonl`.
    std::fs::write(project.path("x.jsonl"), BAIT).unwrap();
    let absolute = project.path("abs");
    std::fs::write(project.path("abs.jsonl"), BAIT).unwrap();
    let ids = vec![
        "../../x".to_string(),
        absolute.display().to_string(),
        "a/b".to_string(),
        String::new(),
        "x".repeat(200),
    ];
    (project, ids)
}

#[test]
fn path_like_session_ids_are_refused_by_every_cli_entry_and_touch_nothing() {
    let (project, ids) = baited();
    let before = tree(project.root());
    for id in &ids {
        for args in [
            vec!["prompt", "--session", id, "hi"],
            vec!["sessions", "show", id],
            vec!["sessions", "repair", id],
        ] {
            let out = project.dsh(&args);
            assert_eq!(out.code, Some(2), "dsh {args:?}: {}", shown(&out));
            assert!(
                out.stderr.contains("invalid session id")
                    && out
                        .stderr
                        .contains("1 to 128 characters, each A-Z, a-z, 0-9"),
                "dsh {args:?}: {}",
                shown(&out)
            );
        }
    }
    let after = tree(project.root());
    assert!(
        changed(&before, &after).is_empty(),
        "changed: {:?}",
        changed(&before, &after)
    );
}

#[test]
fn path_like_session_ids_are_refused_over_acp_and_touch_nothing() {
    let (project, mut ids) = baited();
    ids.push("a\0b".to_string());
    let before = tree(project.root());
    let mut acp = AcpStdio::start(&project.path("cordis.yml"), project.root());
    for id in &ids {
        let requests = [
            (
                "session/load",
                json!({"sessionId": id, "cwd": project.root(), "mcpServers": []}),
            ),
            (
                "session/prompt",
                json!({"sessionId": id, "prompt": [{"type": "text", "text": "hi"}]}),
            ),
        ];
        for (method, params) in requests {
            let answer = acp.request(method, params);
            let error = &answer["error"];
            assert_eq!(error["code"], -32602, "{method} {id:?}: {answer}");
            assert_eq!(error["data"]["sessionId"], json!(id), "{answer}");
            let message = error["message"].as_str().unwrap_or_default();
            assert!(
                message.starts_with("invalid session id") && message.contains("A-Z, a-z"),
                "{method} {id:?}: {answer}"
            );
        }
    }
    // A well-formed id still works on the same connection.
    let session = acp.new_session(project.root());
    assert!(session.starts_with("ses_"), "{session}");
    assert_eq!(acp.close(), Some(0));
    let after = tree(project.root());
    let touched: Vec<PathBuf> = changed(&before, &after)
        .into_iter()
        .filter(|p| *p != project.log(&session))
        .collect();
    assert!(touched.is_empty(), "changed: {touched:?}");
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// `dsh ARGS` in `project` under umask 0000.
fn under_open_umask(project: &Project, args: &[&str]) -> dsh_tests::Outcome {
    let mut command = project.command(args);
    // SAFETY: umask(2) is async-signal-safe and touches no memory.
    unsafe {
        command.pre_exec(|| {
            libc::umask(0);
            Ok(())
        });
    }
    run(command, DSH_TIMEOUT)
}

#[test]
fn state_is_private_whatever_the_umask() {
    let project = Project::new("- text: ok\n");
    let named = under_open_umask(&project, &["prompt", "--session", "s1", "hi"]);
    assert_eq!(named.code, Some(0), "{}", shown(&named));
    let generated = under_open_umask(&project, &["prompt", "hi"]);
    assert_eq!(generated.code, Some(0), "{}", shown(&generated));
    assert_eq!(mode(&project.path("state")), 0o700);
    assert_eq!(mode(&project.path("state/sessions")), 0o700);
    let logs: Vec<PathBuf> = std::fs::read_dir(project.path("state/sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(logs.len(), 2, "{logs:?}");
    for log in &logs {
        assert_eq!(mode(log), 0o600, "{}", log.display());
    }

    // What a load and a repair write is private too.
    let log = project.log("s1");
    let mut bytes = std::fs::read(&log).unwrap();
    bytes.extend_from_slice(b"{\"type\":\"tor");
    std::fs::write(&log, &bytes).unwrap();
    let show = under_open_umask(&project, &["sessions", "show", "s1"]);
    assert_eq!(show.code, Some(0), "{}", shown(&show));
    assert_eq!(
        std::fs::read(project.path("state/sessions/s1.jsonl.damaged-1")).unwrap(),
        bytes
    );
    assert_eq!(
        mode(&project.path("state/sessions/s1.jsonl.damaged-1")),
        0o600
    );
    let mut bytes = std::fs::read(&log).unwrap();
    bytes.extend_from_slice(b"garbage\n{\"type\":\"x\"}\n");
    std::fs::write(&log, &bytes).unwrap();
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o644)).unwrap();
    let repair = under_open_umask(&project, &["sessions", "repair", "s1"]);
    assert_eq!(repair.code, Some(0), "{}", shown(&repair));
    assert_eq!(mode(&log), 0o600);
}

/// One kind of damage: what the log becomes from a whole one, and the
/// line the report must name.
struct Damage {
    id: &'static str,
    line: usize,
    make: fn(&[String]) -> String,
    /// Whether the events after the header survive the repair.
    events_survive: bool,
}

const DAMAGE: &[Damage] = &[
    Damage {
        id: "empty",
        line: 1,
        make: |_| String::new(),
        events_survive: false,
    },
    Damage {
        id: "torn-header",
        line: 1,
        make: |lines| lines[0][..30].to_string(),
        events_survive: false,
    },
    Damage {
        id: "garbage-header",
        line: 1,
        make: |lines| format!("\u{1}garbage{{\n{}\n", lines[1..].join("\n")),
        events_survive: true,
    },
    Damage {
        id: "garbage-middle",
        line: 3,
        make: |lines| {
            format!(
                "{}\n{}\n\u{0}not json\n{}\n",
                lines[0],
                lines[1],
                lines[2..].join("\n")
            )
        },
        events_survive: true,
    },
];

#[test]
fn every_kind_of_damaged_log_is_reported_then_repaired_losing_no_byte() {
    let project = Project::new("- text: ok\n");
    for damage in DAMAGE {
        let id = damage.id;
        let made = project.prompt(id, "first");
        assert_eq!(made.code, Some(0), "{}", shown(&made));
        let log = project.log(id);
        let whole = std::fs::read_to_string(&log).unwrap();
        let lines: Vec<String> = whole.lines().map(str::to_string).collect();
        let damaged = (damage.make)(&lines);
        std::fs::write(&log, &damaged).unwrap();

        // Reported, naming the file, the line and the way forward; untouched.
        let expected = format!("state/sessions/{id}.jsonl: line {}:", damage.line);
        for args in [
            vec!["prompt", "--session", id, "again"],
            vec!["sessions", "show", id],
        ] {
            let out = project.dsh(&args);
            assert_eq!(out.code, Some(1), "{id}: dsh {args:?}: {}", shown(&out));
            assert!(
                out.stderr.contains(&expected)
                    && out
                        .stderr
                        .contains(&format!("run `dsh sessions repair {id}`")),
                "{id}: dsh {args:?}: wanted {expected:?} in {}",
                shown(&out)
            );
            assert_eq!(std::fs::read_to_string(&log).unwrap(), damaged, "{id}");
        }
        let list = project.dsh(&["sessions", "list"]);
        if damage.line == 1 {
            assert!(
                list.stdout
                    .lines()
                    .any(|l| l.starts_with(id) && l.contains("damaged")),
                "{id}: {}",
                shown(&list)
            );
        }

        // Repaired: the original kept byte for byte, every readable event kept.
        let repair = project.dsh(&["sessions", "repair", id]);
        assert_eq!(repair.code, Some(0), "{id}: {}", shown(&repair));
        assert!(repair.stdout.contains("repaired"), "{}", shown(&repair));
        let aside = project.path(&format!("state/sessions/{id}.jsonl.damaged-1"));
        assert_eq!(std::fs::read_to_string(&aside).unwrap(), damaged, "{id}");
        let events = project.events(id);
        assert_eq!(events[0]["type"], "session", "{id}");
        assert_eq!(events[0]["session_id"], id);
        let kept: Vec<Value> = events[1..].to_vec();
        let original: Vec<Value> = lines[1..]
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        if damage.events_survive {
            assert_eq!(kept, original, "{id}");
        } else {
            assert!(kept.is_empty(), "{id}: {kept:?}");
        }

        // And usable again.
        let again = project.prompt(id, "again");
        assert_eq!(again.code, Some(0), "{id}: {}", shown(&again));
        let events = project.events(id);
        assert_eq!(events.last().unwrap()["reason"], "completed", "{id}");
    }
}

#[test]
fn a_crash_cut_last_line_is_cut_on_load_and_kept_aside() {
    let project = Project::new("- text: ok\n");
    assert_eq!(project.prompt("torn", "first").code, Some(0));
    let log = project.log("torn");
    let mut bytes = std::fs::read(&log).unwrap();
    let whole = bytes.clone();
    bytes.extend_from_slice(b"{\"type\":\"turn/start\",\"tur");
    std::fs::write(&log, &bytes).unwrap();
    let again = project.prompt("torn", "again");
    assert_eq!(again.code, Some(0), "{}", shown(&again));
    assert_eq!(
        std::fs::read(project.path("state/sessions/torn.jsonl.damaged-1")).unwrap(),
        bytes
    );
    let now = std::fs::read(&log).unwrap();
    assert!(now.starts_with(&whole));
    let events = project.events("torn");
    let turns: Vec<&str> = kinds(&events)
        .into_iter()
        .filter(|k| k.starts_with("turn/"))
        .collect();
    assert_eq!(turns, ["turn/start", "turn/end", "turn/start", "turn/end"]);
}
