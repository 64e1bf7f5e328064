//! `Bash` in the session's editor: when the editor offers terminals (the
//! `editor-terminal` service answers anything but `local`), the command
//! runs there so the user watches it live, and the model reads what the
//! terminal kept, in the local result's shape.
//!
//! The editor runs the very script the local run would: `<shell> -c` with
//! the session's prelude (`CLAUDE_ENV_FILE`) and the `cwd` side channel
//! ([`crate::cwd`]), so `cd` persists and prelude variables reach the
//! command exactly as locally. The terminal gets the local run's
//! environment (dsh's, minus credentials) as explicit variables on top of
//! the editor's own; for bash, the script first unsets credential-like
//! variables (the rule of `dsh_plugin_api::credentials`), so what only the
//! editor's environment holds is scrubbed too, before the prelude runs.
//! Stdout and stderr arrive interleaved, as one output: the model reads it
//! as stdout.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;

use dsh_plugin_api::Host;
use dsh_plugin_api::services::editor_terminal::{
    KillRequest, METHOD_KILL, METHOD_OFFERS, METHOD_RUN, OffersAnswer, OffersRequest,
    RunRequest as TerminalRequest, SERVICE, TerminalAnswer,
};

use crate::Config;
use crate::cwd::shell_quote;
use crate::runner::RunAnswer;

/// One tool call's way to the session's editor.
pub(crate) struct EditorTerminal<'a> {
    pub(crate) host: &'a Host,
    pub(crate) session_id: &'a str,
    pub(crate) call_id: &'a str,
}

/// How an attempt to run in the editor went.
pub(crate) enum EditorRun {
    /// It ran there (or could not: a spawn error).
    Ran(RunAnswer),
    /// The editor offers no terminals: run it locally.
    Local,
}

impl EditorTerminal<'_> {
    /// Runs `script` in the editor's terminal, in `cwd`, for at most
    /// `timeout_ms`; `cancel` resolving kills it there.
    pub(crate) async fn run<F: Future<Output = ()>>(
        &self,
        script: &str,
        cwd: &Path,
        timeout_ms: u64,
        config: &Config,
        session_env: &[(String, String)],
        mut cancel: Pin<&mut F>,
    ) -> EditorRun {
        if !self.host.has_service(SERVICE) || self.offers().await == Some(false) {
            return EditorRun::Local;
        }
        let script = match scrub_prologue(&config.shell, &config.env_allow) {
            Some(prologue) => format!("{prologue}{script}"),
            None => script.to_string(),
        };
        let request = TerminalRequest {
            session_id: self.session_id.to_string(),
            call_id: self.call_id.to_string(),
            command: config.shell.clone(),
            args: vec!["-c".to_string(), script],
            env: local_env(&config.env_allow)
                .into_iter()
                .chain(session_env.iter().cloned())
                .collect(),
            cwd: cwd.to_string_lossy().into_owned(),
            output_byte_limit: u64::try_from(config.max_output_bytes).ok(),
            timeout_ms: Some(timeout_ms),
        };
        // As text both ways, no `Value` tree (the request carries the
        // whole environment, usually to be answered `local`): the same
        // bytes `call_service` sends for the `Value` of the request.
        let args = match serde_json::to_string(&request) {
            Ok(args) => args,
            Err(e) => return EditorRun::Ran(RunAnswer::spawn_failure(e.to_string())),
        };
        let run = call_text(self.host, METHOD_RUN, args);
        tokio::pin!(run);
        // The run first: its first poll registers it with the service, so
        // an abort that already fired still finds it to kill.
        let (answer, killed) = tokio::select! {
            biased;
            answer = &mut run => (answer, false),
            () = &mut cancel => {
                self.kill().await;
                (run.await, true)
            }
        };
        let answer = match answer
            .and_then(|a| serde_json::from_str::<TerminalAnswer>(&a).map_err(|e| e.to_string()))
        {
            Ok(answer) => answer,
            Err(e) => {
                return EditorRun::Ran(RunAnswer::spawn_failure(format!(
                    "the editor's terminal did not answer: {e}"
                )));
            }
        };
        match answer {
            TerminalAnswer::Done {
                output,
                truncated,
                exit_code,
                signal,
                timed_out,
                interrupted,
            } => EditorRun::Ran(RunAnswer {
                exit_code: exit_code.and_then(|c| i32::try_from(c).ok()),
                signal: signal.as_deref().and_then(signal_number),
                stdout: output,
                stdout_truncated: truncated,
                timed_out,
                interrupted: interrupted || killed,
                ..RunAnswer::default()
            }),
            TerminalAnswer::Failed { message } => EditorRun::Ran(RunAnswer::spawn_failure(
                format!("the editor could not run it: {message}"),
            )),
            // Cancelled while the service found no terminal: nothing ran,
            // and nothing should now.
            TerminalAnswer::Local if killed => EditorRun::Ran(RunAnswer {
                interrupted: true,
                ..RunAnswer::default()
            }),
            TerminalAnswer::Local => EditorRun::Local,
        }
    }

    /// Whether the session's editor offers terminals; `None` when the
    /// provider cannot say (one older than `offers`): then `run` is asked.
    async fn offers(&self) -> Option<bool> {
        let args = serde_json::to_string(&OffersRequest {
            session_id: self.session_id.to_string(),
        })
        .ok()?;
        let answer = call_text(self.host, METHOD_OFFERS, args).await.ok()?;
        serde_json::from_str::<OffersAnswer>(&answer)
            .ok()
            .map(|a| a.offers)
    }

    async fn kill(&self) {
        let request = KillRequest {
            session_id: self.session_id.to_string(),
            call_id: self.call_id.to_string(),
        };
        let Ok(args) = serde_json::to_value(&request) else {
            return;
        };
        if let Err(e) = self.host.call_service(SERVICE, METHOD_KILL, &args).await {
            tracing::warn!(session = %self.session_id, "Bash: the editor's terminal was not killed: {e}");
        }
    }
}

/// Calls `method` of the editor-terminal service with the request's text
/// and returns the answer's text.
async fn call_text(host: &Host, method: &str, args: String) -> Result<String, String> {
    use dsh_plugin_api::{ROption, RStr, RString};
    let service = match host.raw().service(RStr::from_str(SERVICE)) {
        ROption::RSome(service) => service,
        ROption::RNone => return Err(format!("service `{SERVICE}` is not available")),
    };
    service
        .call(RString::from(method), RString::from(args))
        .await
        .into_result()
        .map(RString::into_string)
        .map_err(String::from)
}

/// The environment a local run gives its command (dsh's, minus
/// credentials), as explicit variables; names or values that are not
/// UTF-8 cannot travel in JSON and are left to the editor's environment.
/// (From the runner's cached copy of dsh's environment, with each
/// variable's credential verdict already worked out.)
fn local_env(allow: &[String]) -> BTreeMap<String, String> {
    let snapshot = crate::runner::environ::snapshot();
    snapshot
        .entries()
        .iter()
        .filter_map(|entry| {
            let name = std::str::from_utf8(entry.name()).ok()?;
            if entry.is_credential() && !allow.iter().any(|a| a == name) {
                return None;
            }
            let value = std::str::from_utf8(entry.value()).ok()?;
            Some((name.to_string(), value.to_string()))
        })
        .collect()
}

/// A first-line prefix for a bash script that unsets every exported
/// credential-like variable but the `allow`ed ones: the credential rule of
/// `dsh_plugin_api::credentials` (names compared upper-cased; `*_URL` and
/// `*_URI` only when the value holds userinfo), written in bash. `None` for
/// other shells. It ends with `; ` and holds no newline, so the script's
/// line numbers (which bash's messages cite) stay those of a local run.
pub(crate) fn scrub_prologue(shell: &str, allow: &[String]) -> Option<String> {
    let is_bash = Path::new(shell).file_name().is_some_and(|n| n == "bash");
    if !is_bash {
        return None;
    }
    let kept = if allow.is_empty() {
        String::new()
    } else {
        let names: Vec<String> = allow.iter().map(|n| shell_quote(n)).collect();
        format!("{}) ;; ", names.join("|"))
    };
    Some(format!(
        "for __dsh_v in $(compgen -e); do case $__dsh_v in {kept}*) case ${{__dsh_v^^}} in \
         *KEY*|*SECRET*|*TOKEN*|*PASSWORD*|*PASSWD*|*WEBHOOK*|PAT|*_PAT|DSN|*_DSN) \
         unset \"$__dsh_v\" 2>/dev/null;; \
         URL|*_URL|URI|*_URI) __dsh_a=${{!__dsh_v#*://}}; __dsh_a=${{__dsh_a%%[/?#]*}}; \
         [[ ${{!__dsh_v}} == ?*://* && $__dsh_a == ?*@* ]] && unset \"$__dsh_v\" 2>/dev/null;; \
         esac;; esac; done; unset __dsh_v __dsh_a; "
    ))
}

/// A signal's number from its name (`SIGKILL`, `KILL`) or number (`9`).
fn signal_number(signal: &str) -> Option<i32> {
    if let Ok(n) = signal.parse() {
        return Some(n);
    }
    let name = signal.strip_prefix("SIG").unwrap_or(signal);
    Some(match name {
        "HUP" => libc::SIGHUP,
        "INT" => libc::SIGINT,
        "QUIT" => libc::SIGQUIT,
        "ILL" => libc::SIGILL,
        "ABRT" => libc::SIGABRT,
        "FPE" => libc::SIGFPE,
        "KILL" => libc::SIGKILL,
        "SEGV" => libc::SIGSEGV,
        "PIPE" => libc::SIGPIPE,
        "ALRM" => libc::SIGALRM,
        "TERM" => libc::SIGTERM,
        "USR1" => libc::SIGUSR1,
        "USR2" => libc::SIGUSR2,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_by_name_or_number() {
        assert_eq!(signal_number("SIGKILL"), Some(9));
        assert_eq!(signal_number("TERM"), Some(15));
        assert_eq!(signal_number("2"), Some(2));
        assert_eq!(signal_number("SIGWHAT"), None);
    }

    /// The bash scrub follows the credential rule: run it for real.
    #[test]
    fn the_prologue_unsets_what_the_credential_rule_names() {
        let prologue = scrub_prologue("/bin/bash", &["KEEP_TOKEN".to_string()]).unwrap();
        assert!(!prologue.contains('\n'));
        assert!(scrub_prologue("/bin/sh", &[]).is_none());
        let vars = [
            ("MY_API_KEY", "a"),
            ("github_token", "b"),
            ("KEEP_TOKEN", "c"),
            ("DB_URL", "postgres://u:p@h/db"),
            ("PLAIN_URL", "https://h/x@y"),
            ("SENTRY_DSN", "d"),
            ("PATTERN", "e"),
        ];
        let script = format!(
            "{prologue}for v in MY_API_KEY github_token KEEP_TOKEN DB_URL PLAIN_URL SENTRY_DSN PATTERN; do echo \"$v=${{!v-unset}}\"; done"
        );
        let out = std::process::Command::new("/bin/bash")
            .arg("-c")
            .arg(script)
            .env_clear()
            .envs(vars)
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stderr), "");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "MY_API_KEY=unset\ngithub_token=unset\nKEEP_TOKEN=c\nDB_URL=unset\n\
             PLAIN_URL=https://h/x@y\nSENTRY_DSN=unset\nPATTERN=e\n"
        );
    }
}
