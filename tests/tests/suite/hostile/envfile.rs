//! A resumed session's SessionStart(resume) hooks writing what would break
//! a shell into their `CLAUDE_ENV_FILE`: `exit 3` (which ends a `Bash` call
//! before its command when run) and a syntax error. Claude Code never runs
//! those files (recorded `S160-resume`: the resume hooks' folder is a fresh
//! id's), so the resumed session's `Bash` runs as before, with the startup
//! hooks' variables.

use crate::suite::envfile::{probe, probed, project};

#[test]
fn a_resume_hook_writing_exit_or_bad_syntax_breaks_no_later_bash_call() {
    for line in ["exit 3", "if then"] {
        let p = project(line);
        assert_eq!(probed(&probe(&p, "do it")), "A=1 B=unset C=3", "{line}");
        let resumed = probe(&p, "again");
        assert_eq!(probed(&resumed), "A=1 B=unset C=3", "{line}");
        let results = resumed.of_type("tool/result");
        assert_ne!(results[0]["is_error"], true, "{line}: {:?}", results[0]);
    }
}
