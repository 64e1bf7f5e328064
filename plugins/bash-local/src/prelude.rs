//! The session's shell prelude: script the host keeps per session (plugin
//! API 1.4, `Host::session_shell_prelude`) that the `Bash` tool runs in the
//! same shell before each command. The Claude Code bridge sets it to what
//! `SessionStart`/`CwdChanged` hooks wrote into `CLAUDE_ENV_FILE`, so an
//! `export FOO=bar` there reaches every later command.
//!
//! Placed as Claude Code places it (vectors `S50-*`): the prelude's text
//! starts the script on line 1, followed by a line holding only `:`, then
//! the command. So a prelude's variables, exported or not, are the
//! command's; a syntax error in it fails the call as bash reports it
//! (`/bin/bash: -c: line 2: ...`, exit 2); `exit 3` in it ends the call
//! with status 3 before the command runs; a failing line does not stop it.

/// `script` with `prelude` (when non-empty) run before it.
pub fn prefix(prelude: Option<&str>, script: String) -> String {
    match prelude {
        Some(p) if !p.is_empty() => format!("{p}\n:\n{script}"),
        _ => script,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prelude_starts_the_script_and_a_colon_line_separates_it() {
        assert_eq!(
            prefix(Some("export A=1"), "eval 'x'".into()),
            "export A=1\n:\neval 'x'"
        );
        assert_eq!(prefix(None, "eval 'x'".into()), "eval 'x'");
        assert_eq!(prefix(Some(""), "eval 'x'".into()), "eval 'x'");
    }
}
