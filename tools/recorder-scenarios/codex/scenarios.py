"""Scenario definitions for runner.py.

SCENARIOS maps a scenario name ("C2_pretooluse_decisions"; runner.py selects by prefix, e.g. C2) to
{"description": str, "cases": [CASE, ...]}. Each case is one run (or a few runs) of `codex exec` in a
fresh scratch folder; name it <scenario id><letter>_<what>, e.g. "C2a_exit2_stderr". CASE keys:

  name, purpose   case name and a one-line description (both copied into the capture).
  hooks           {Event: [{"matcher": str (optional), "hooks": [HANDLER, ...]}, ...]}; HANDLER is
                  {"label": L} plus optional "timeout" (seconds), "extra" (text appended to the command,
                  e.g. literal argv), "raw" (a command string used instead of hook.sh), "json_extra"
                  (extra handler keys, copied as they are).
  behave          {label: bash snippet}, sourced by hook.sh after it has saved stdin to
                  $CAP/hooks/$ID.stdin: it may print, sleep, test the stdin, exit N. Default: exit 0.
  script          mock model answers per /v1/responses request, in order: {"type": "tool", "cmd": ...,
                  "extra_args": {...} (optional)} (an exec_command call) or {"type": "text", "text": ...}.
  prompt          the prompt (default "run the probe"); args: extra `codex exec` arguments.
  invocations     several runs in one case: [{"args": [...], "prompt": ...}, ...] (e.g. exec resume --last).
  hooks_in        where the hooks go: "json" ($CODEX_HOME/hooks.json, default), "toml" ([hooks] tables
                  in config.toml) or "project" (<proj>/.codex/hooks.json; also pass args=["--trust"]).
  perm_args       replaces the default --dangerously-bypass-approvals-and-sandbox.
  bypass_trust    False drops --dangerously-bypass-hook-trust.
  timeout         seconds before a codex run is killed (default 120).
  config_top, config_extra   extra config.toml lines (before / after the model provider table).
  proj_files      {relative path: text} written into the project folder first.
  env             extra variables for codex's launch env (added to the fixed one).
  collect_files   paths relative to the case folder (e.g. "proj/tool_env.env0") copied into the capture as
                  collected_files (None if absent; *.env0 parsed and compared with the launch env).
  untruncated_inputs  True: keep the full text of every request input item after the 3 boilerplate ones
                  (otherwise long items are cut to 300 chars in the capture).
The capture also holds each hook's full env ("env") and saved_hook_output_files (<temp dir>/hook_outputs/
<thread id>/*: where Codex saves hook output it does not send whole).

observations.py holds the hand-written outcome per case name.
"""

ALL_EVENTS = ["SessionStart", "UserPromptSubmit", "PreModelRequest", "PreToolUse",
              "PermissionRequest", "PostToolUse", "PreCompact", "PostCompact",
              "SubagentStart", "SubagentStop", "Stop", "StopFailure", "SessionEnd",
              "Interrupt"]

TOOL_THEN_TEXT = [{"type": "tool", "cmd": "echo hi"}, {"type": "text", "text": "all done"}]
TEXT_ONLY = [{"type": "text", "text": "all done"}]


def obs(events, exclude=()):
    """one observer hook (label obs_<Event>, no matcher) per event"""
    return {e: [{"hooks": [{"label": "obs_" + e}]}] for e in events if e not in exclude}


def merge(*ds):
    out = {}
    for d in ds:
        for k, v in d.items():
            out.setdefault(k, []).extend(v)
    return out


def pre(behave, label="pre", matcher="Bash"):
    return {"hooks": merge({"PreToolUse": [{"matcher": matcher, "hooks": [{"label": label}]}]},
                           obs(["PostToolUse", "Stop"])),
            "behave": {label: behave}, "script": TOOL_THEN_TEXT,
            "prompt": "run echo hi"}


def case(name, purpose, **kw):
    d = {"name": name, "purpose": purpose}
    d.update(kw)
    return d


SCENARIOS = {}

# ---------------------------------------------------------------- C1
SCENARIOS["C1_all_events_exit0"] = {
    "description": "Every event configured with a silent exit-0 hook; record payloads, env, argv, cwd.",
    "cases": [
        case("C1a_all_events_hooks_json", "all 14 candidate event names in $CODEX_HOME/hooks.json; "
             "tool call then text. Hook argv carries literal ${...} tokens (single-quoted) to test substitution.",
             hooks={e: [{"hooks": [{"label": e, "extra": "'${CODEX_HOME}' '${PLUGIN_ROOT}' '${CLAUDE_PROJECT_DIR}' '$HOOK_LITERAL'"}]}] for e in ALL_EVENTS},
             script=TOOL_THEN_TEXT, prompt="run echo hi"),
        case("C1b_config_toml_hooks", "same hooks, but declared in config.toml [hooks] tables",
             hooks={e: [{"hooks": [{"label": e}]}] for e in ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"]},
             hooks_in="toml", script=TOOL_THEN_TEXT, prompt="run echo hi"),
        case("C1c_no_trust_bypass", "hooks.json hooks without --dangerously-bypass-hook-trust (untrusted hooks)",
             hooks={e: [{"hooks": [{"label": e}]}] for e in ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"]},
             bypass_trust=False, script=TOOL_THEN_TEXT, prompt="run echo hi"),
        case("C1d_resume", "second invocation: `codex exec resume --last PROMPT` -> SessionStart source",
             hooks={e: [{"hooks": [{"label": e}]}] for e in ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"]},
             script=[{"type": "text", "text": "first"}, {"type": "text", "text": "second"}],
             invocations=[{"prompt": "first prompt"},
                          {"args": ["resume", "--last"], "prompt": "second prompt"}]),
        case("C1e_project_hooks_json", "hooks in <project>/.codex/hooks.json (project layer)",
             hooks={e: [{"hooks": [{"label": e}]}] for e in ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"]},
             hooks_in="project", script=TOOL_THEN_TEXT, prompt="run echo hi", args=["--trust"]),
        case("C1h_perm_workspace_write_never", "permission_mode with -s workspace-write -a never",
             hooks={e: [{"hooks": [{"label": e}]}] for e in ["SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop"]},
             perm_args=["-s", "workspace-write", "-c", "approval_policy=\"never\""], script=TOOL_THEN_TEXT, prompt="run echo hi"),
        case("C1i_perm_readonly_onrequest", "permission_mode with -s read-only -a on-request",
             hooks={e: [{"hooks": [{"label": e}]}] for e in ["SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop"]},
             perm_args=["-s", "read-only", "-c", "approval_policy=\"on-request\""], script=TOOL_THEN_TEXT, prompt="run echo hi"),
        case("C1j_perm_default", "permission_mode with no sandbox/approval flags",
             hooks={e: [{"hooks": [{"label": e}]}] for e in ["SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop"]},
             perm_args=[], script=TOOL_THEN_TEXT, prompt="run echo hi"),
        case("C1k_exec_extra_args", "exec_command call with extra args (workdir=/tmp, yield_time_ms, max_output_tokens): tool_input shape",
             hooks={e: [{"hooks": [{"label": e}]}] for e in ["PreToolUse", "PostToolUse"]},
             script=[{"type": "tool", "cmd": "pwd", "extra_args": {"workdir": "/tmp", "yield_time_ms": 2000, "max_output_tokens": 500}},
                     {"type": "text", "text": "done"}], prompt="run pwd"),
        case("C1f_multiline_prompt", "prompt with unicode, quotes, newline: check JSON escaping in stdin",
             hooks={e: [{"hooks": [{"label": e}]}] for e in ["UserPromptSubmit"]},
             script=TEXT_ONLY, prompt="line1 \"quoted\" \\ back\nline2 caf\u00e9 <tag> & \u2603 /path"),
        case("C1g_tool_failing_cmd", "tool command that fails (exit 3, stderr) -> PostToolUse tool_response shape",
             hooks={e: [{"hooks": [{"label": e}]}] for e in ["PreToolUse", "PostToolUse"]},
             script=[{"type": "tool", "cmd": "echo out; echo err >&2; exit 3"}, {"type": "text", "text": "done"}],
             prompt="run failing"),
    ]}

# ---------------------------------------------------------------- C2
SCENARIOS["C2_pretooluse_decisions"] = {
    "description": "PreToolUse (matcher Bash) blocking/allow/ask variants; tool = exec_command `echo hi`.",
    "cases": [
        case("C2a_exit2_stderr", "exit 2 + stderr text", **pre("echo 'blocked by probe policy' >&2; exit 2")),
        case("C2b_exit2_no_stderr", "exit 2, no stderr", **pre("exit 2")),
        case("C2c_json_decision_block", "stdout {decision:block, reason}, exit 0",
             **pre("""printf '%s' '{"decision":"block","reason":"json block reason"}'""")),
        case("C2d_pd_deny", "hookSpecificOutput permissionDecision deny + reason",
             **pre("""printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"deny reason text"}}'""")),
        case("C2e_pd_allow", "permissionDecision allow",
             **pre("""printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"allow reason"}}'""")),
        case("C2f_pd_ask", "permissionDecision ask",
             **pre("""printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"ask reason"}}'""")),
        case("C2g_decision_approve", "legacy decision approve",
             **pre("""printf '%s' '{"decision":"approve","reason":"ok"}'""")),
        case("C2h_pd_deny_no_reason", "permissionDecision deny without reason",
             **pre("""printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}}'""")),
        case("C2i_allow_updated_input", "permissionDecision allow + updatedInput {command: echo rewritten}",
             **pre("""printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"echo rewritten"}}}'""")),
        case("C2j_continue_false", "continue:false + stopReason",
             **pre("""printf '%s' '{"continue":false,"stopReason":"stop reason text"}'""")),
        case("C2k_plain_stdout", "plain text stdout, exit 0",
             **pre("echo 'plain pre stdout text'")),
        case("C2l_exit1_stderr", "exit 1 + stderr",
             **pre("echo 'exit1 stderr text' >&2; exit 1")),
        case("C2m_exit2_plus_json", "stdout JSON allow + exit 2 + stderr",
             **pre("""printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'; echo 'exit2 stderr wins?' >&2; exit 2""")),
        case("C2n_systemMessage", "systemMessage only, exit 0",
             **pre("""printf '%s' '{"systemMessage":"system message text"}'""")),
        case("C2o_pd_deny_wrong_event_name", "deny with hookEventName mismatching (PostToolUse)",
             **pre("""printf '%s' '{"hookSpecificOutput":{"hookEventName":"PostToolUse","permissionDecision":"deny","permissionDecisionReason":"mismatch"}}'""")),
        case("C2p_additional_context", "hookSpecificOutput additionalContext without decision",
             **pre("""printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"pre additional context"}}'""")),
        case("C2q_updated_input_no_allow", "updatedInput without permissionDecision",
             **pre("""printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"echo rewritten2"}}}'""")),
        case("C2r_allow_updated_input_cmd_key", "allow + updatedInput using key 'cmd' (raw exec_command arg name)",
             **pre("""printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"cmd":"echo rewritten3"}}}'""")),
        case("C2s_stderr_only_exit0", "exit 0 with stderr text only",
             **pre("echo 'stderr on exit 0' >&2")),
        case("C2t_json_trailing_newline_block", "decision block JSON followed by newline (printf '%s\\n')",
             **pre("""printf '%s\\n' '{"decision":"block","reason":"nl block"}'""")),
        case("C2u_deny_plus_additional_context", "permissionDecision deny + reason + additionalContext",
             **pre("""printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"deny r","additionalContext":"deny ctx"}}'""")),
    ]}

# ---------------------------------------------------------------- C3
UPS = "UserPromptSubmit"
SS = "SessionStart"


def ctx_case(name, purpose, event, behave):
    return case(name, purpose,
                hooks=merge({event: [{"hooks": [{"label": "h"}]}]}, obs(["UserPromptSubmit", "Stop", "PreModelRequest"], exclude=[event])),
                behave={"h": behave}, script=TEXT_ONLY, prompt="hello prompt")


SCENARIOS["C3_context_injection"] = {
    "description": "SessionStart / UserPromptSubmit stdout & JSON: context injection and blocking.",
    "cases": [
        ctx_case("C3a_ss_plain_stdout", "SessionStart plain stdout exit 0", SS, "echo 'SS plain context line'"),
        ctx_case("C3b_ss_json_additional", "SessionStart JSON additionalContext", SS,
                 """printf '%s' '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"SS json additional context"}}'"""),
        ctx_case("C3c_ups_plain_stdout", "UserPromptSubmit plain stdout exit 0", UPS, "echo 'UPS plain context line'"),
        ctx_case("C3d_ups_json_additional", "UserPromptSubmit JSON additionalContext", UPS,
                 """printf '%s' '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"UPS json additional context"}}'"""),
        ctx_case("C3e_ups_decision_block", "UserPromptSubmit decision block", UPS,
                 """printf '%s' '{"decision":"block","reason":"UPS block reason"}'"""),
        ctx_case("C3f_ups_exit2_stderr", "UserPromptSubmit exit 2 + stderr", UPS,
                 "echo 'UPS exit2 stderr' >&2; exit 2"),
        ctx_case("C3g_ups_continue_false", "UserPromptSubmit continue:false + stopReason", UPS,
                 """printf '%s' '{"continue":false,"stopReason":"UPS stop reason"}'"""),
        ctx_case("C3h_ss_exit2_stderr", "SessionStart exit 2 + stderr", SS,
                 "echo 'SS exit2 stderr' >&2; exit 2"),
        ctx_case("C3i_ss_continue_false", "SessionStart continue:false + stopReason", SS,
                 """printf '%s' '{"continue":false,"stopReason":"SS stop reason"}'"""),
        ctx_case("C3j_ups_plain_multiline_trailing_ws", "UserPromptSubmit plain stdout with leading/trailing blank lines", UPS,
                 "printf '\\n\\n  line A\\nline B  \\n\\n'"),
        ctx_case("C3k_ups_json_with_trailing_newline_and_plain_json_no_hso", "UserPromptSubmit stdout JSON without hookSpecificOutput but with systemMessage", UPS,
                 """printf '%s\\n' '{"systemMessage":"UPS sys msg"}'"""),
        ctx_case("C3l_ss_plain_stdout_exit1", "SessionStart plain stdout exit 1 (non-blocking error?)", SS,
                 "echo 'SS stdout on exit1'; echo 'SS stderr on exit1' >&2; exit 1"),
        case("C3m_ups_block_then_resume", "UPS blocks a prompt containing 'secret'; then `exec resume --last` with a normal prompt: does the blocked prompt reach the model later?",
             hooks=merge({UPS: [{"hooks": [{"label": "h"}]}]}, obs(["Stop", "SessionStart"])),
             behave={"h": """if grep -q secret "$CAP/hooks/$ID.stdin"; then printf '%s' '{"decision":"block","reason":"no secrets"}'; fi"""},
             script=[{"type": "text", "text": "answer"}, {"type": "text", "text": "answer2"}],
             invocations=[{"prompt": "the secret prompt"}, {"args": ["resume", "--last"], "prompt": "normal prompt"}]),
        case("C3n_ups_large_additional_context", "UPS additionalContext of ~40 KB (spill-to-disk threshold ~2500 tokens?)",
             hooks=merge({UPS: [{"hooks": [{"label": "h"}]}]}, obs(["Stop"])),
             behave={"h": """w=$(printf 'word %.0s' $(seq 8000)); printf '{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "BIGCTX %s"}}\\n' "$w\""""},
             script=TEXT_ONLY, prompt="hello prompt"),
    ]}

# ---------------------------------------------------------------- C4
PTU = "PostToolUse"


def post(name, purpose, behave):
    return case(name, purpose,
                hooks=merge({PTU: [{"matcher": "Bash", "hooks": [{"label": "post"}]}]}, obs(["Stop"])),
                behave={"post": behave}, script=TOOL_THEN_TEXT + [{"type": "text", "text": "extra"}],
                prompt="run echo hi")


SCENARIOS["C4_posttooluse"] = {
    "description": "PostToolUse block/feedback/additionalContext: effect on next model request.",
    "cases": [
        post("C4a_decision_block", "decision block + reason", """printf '%s' '{"decision":"block","reason":"post block reason"}'"""),
        post("C4b_exit2_stderr", "exit 2 + stderr", "echo 'post exit2 stderr feedback' >&2; exit 2"),
        post("C4c_additional_context", "hookSpecificOutput additionalContext",
             """printf '%s' '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"post additional context"}}'"""),
        post("C4d_plain_stdout", "plain stdout exit 0", "echo 'post plain stdout'"),
        post("C4e_continue_false", "continue:false + stopReason", """printf '%s' '{"continue":false,"stopReason":"post stop reason"}'"""),
        post("C4f_block_plus_context", "decision block + reason + additionalContext",
             """printf '%s' '{"decision":"block","reason":"post block reason 2","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"post ctx 2"}}'"""),
        post("C4g_updated_mcp_output", "updatedMCPToolOutput on a non-MCP tool",
             """printf '%s' '{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedMCPToolOutput":"replaced"}}'"""),
        post("C4h_exit1_stderr", "exit 1 + stderr", "echo 'post exit1 stderr' >&2; exit 1"),
    ]}

# ---------------------------------------------------------------- C5
STOP_BLOCK_ONCE = """
if grep -q '"stop_hook_active":false' "$CAP/hooks/$ID.stdin"; then
  printf '%s' '{"decision":"block","reason":"stop block reason: keep going"}'
fi
"""
STOP_EXIT2_ONCE = """
if grep -q '"stop_hook_active":false' "$CAP/hooks/$ID.stdin"; then
  echo 'stop exit2 continuation prompt' >&2; exit 2
fi
"""
STOP_BLOCK_ALWAYS_N = """
n=$(ls "$CAP/hooks/" | grep -c -- '-stop-.*\\.stdin$')
if [ "$n" -le 4 ]; then
  printf '{"decision":"block","reason":"block #%s"}' "$n"
fi
"""


def stop(name, purpose, behave, script=None):
    return case(name, purpose,
                hooks=merge({"Stop": [{"hooks": [{"label": "stop"}]}]}, obs(["UserPromptSubmit", "PreModelRequest"])),
                behave={"stop": behave},
                script=script or [{"type": "text", "text": "first answer"}, {"type": "text", "text": "second answer"},
                                  {"type": "text", "text": "third answer"}, {"type": "text", "text": "4th"},
                                  {"type": "text", "text": "5th"}, {"type": "text", "text": "6th"}],
                prompt="hello", timeout=90)


SCENARIOS["C5_stop"] = {
    "description": "Stop hook block -> continuation; stop_hook_active on the next Stop.",
    "cases": [
        stop("C5a_block_once", "JSON decision block when stop_hook_active=false, silent otherwise", STOP_BLOCK_ONCE),
        stop("C5b_exit2_once", "exit 2 + stderr when stop_hook_active=false", STOP_EXIT2_ONCE),
        stop("C5c_continue_false", "continue:false + stopReason", """printf '%s' '{"continue":false,"stopReason":"stop stopReason"}'"""),
        stop("C5d_block_4_times", "block on the first 4 Stop invocations regardless of stop_hook_active", STOP_BLOCK_ALWAYS_N),
        stop("C5e_plain_stdout", "plain stdout on Stop, exit 0", "echo 'stop plain stdout'"),
        stop("C5f_block_no_reason", "decision block without reason", """printf '%s' '{"decision":"block"}'"""),
    ]}

# ---------------------------------------------------------------- C20: hook environment passthrough
PASSTHROUGH_ENV = {
    "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318",
    "OTEL_SERVICE_NAME": "x",
    "OTEL_RESOURCE_ATTRIBUTES": "a=b",
    "GITHUB_TOKEN": "ghp_MARK",
    "MY_API_KEY": "k_MARK",
    "DATABASE_URL": "postgres://u:p_MARK@127.0.0.1/db",
    "GITLAB_PAT": "pat_MARK",
    "DB_PASSWD": "pw_MARK",
    "SENTRY_DSN": "https://k@o.ingest/1",
    "SLACK_WEBHOOK_URL": "https://hooks.example/x",
    "MARK_PLAIN": "plain",
    "NODE_OPTIONS": "--max-old-space-size=100",
    "CLAUDE_CODE_USE_BEDROCK": "",
    "PYTHONPATH": "/x",
}
TOOL_ENV_CMD = "env -0 > tool_env.env0 && env | sort > tool_env.txt && echo MARK_TOOL_ENV_SAVED"

SCENARIOS["C20_env_passthrough"] = {
    "description": "Extra variables in codex's launch env (OTEL_*, tokens, keys, NODE_OPTIONS, an empty one): which "
                   "reach the hooks and the exec_command tool unchanged?",
    "cases": [
        case("C20a_env_passthrough", "codex launched with 14 extra variables (OTEL_*, *_TOKEN, *_API_KEY, DATABASE_URL, "
             "*_PAT, *_PASSWD, SENTRY_DSN, SLACK_WEBHOOK_URL, MARK_PLAIN, NODE_OPTIONS, CLAUDE_CODE_USE_BEDROCK='' "
             "(empty), PYTHONPATH). SessionStart, UserPromptSubmit, PreToolUse(Bash), PostToolUse(Bash), Stop hooks "
             "save their full env; the tool saves its own (env -0 > tool_env.env0).",
             hooks={"SessionStart": [{"hooks": [{"label": "ss"}]}],
                    "UserPromptSubmit": [{"hooks": [{"label": "ups"}]}],
                    "PreToolUse": [{"matcher": "Bash", "hooks": [{"label": "pre"}]}],
                    "PostToolUse": [{"matcher": "Bash", "hooks": [{"label": "post"}]}],
                    "Stop": [{"hooks": [{"label": "stop"}]}]},
             env=PASSTHROUGH_ENV, collect_files=["proj/tool_env.env0", "proj/tool_env.txt"],
             script=[{"type": "tool", "cmd": TOOL_ENV_CMD}, {"type": "text", "text": "all done"}],
             prompt="dump the env"),
    ]}

# ---------------------------------------------------------------- C21: huge decision output
HUGE_DENY = ("""printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",""" 
             """"permissionDecisionReason":"MARK_HUGE_DENY_HEAD '; yes pad | head -n 275000 | tr '\\n' ' '; """
             """printf '%s' 'MARK_HUGE_DENY_TAIL"}}'""")

SCENARIOS["C21_huge_decision"] = {
    "description": "PreToolUse deny JSON of ~1.1 MB on stdout, exit 0: honoured? what does the model see?",
    "cases": [
        case("C21a_deny_1mb", "PreToolUse (matcher Bash) prints a valid deny JSON whose permissionDecisionReason is "
             "1,100,039 chars ('MARK_HUGE_DENY_HEAD ' + 'pad ' x 275000 + 'MARK_HUGE_DENY_TAIL'), exit 0; the command "
             "would create made_by_bash.txt",
             hooks=merge({"PreToolUse": [{"matcher": "Bash", "hooks": [{"label": "pre"}]}]}, obs(["PostToolUse", "Stop"])),
             behave={"pre": HUGE_DENY}, untruncated_inputs=True, collect_files=["proj/made_by_bash.txt"],
             script=[{"type": "tool", "cmd": "touch made_by_bash.txt && echo hi"}, {"type": "text", "text": "all done"}],
             prompt="run it"),
    ]}


# ---------------------------------------------------------------- C22: context cap (40 KB)
def big_words(prefix, n=8000, tail="MARK_BIGCTX_TAIL_END"):
    """bash: T = prefix + 'word ' x n + tail"""
    return "T=\"%s$(yes word | head -n %d | tr '\\n' ' ')%s\"; " % (prefix, n, tail)


def hso_ctx(event):
    return """printf '{"hookSpecificOutput":{"hookEventName":"%s","additionalContext":"%%s"}}' "$T\"""" % event


def big_case(name, purpose, event, snippet, matcher=None, tool=False):
    g = {"hooks": [{"label": "big"}]}
    if matcher:
        g["matcher"] = matcher
    return case(name, purpose, hooks=merge({event: [g]}, obs(["Stop"], exclude=[event])),
                behave={"big": snippet}, untruncated_inputs=True,
                script=TOOL_THEN_TEXT if tool else TEXT_ONLY, prompt="run echo hi" if tool else "hello prompt")


SCENARIOS["C22_context_cap"] = {
    "description": "~40 KB hook context (additionalContext / plain stdout) on PostToolUse, SessionStart and "
                   "UserPromptSubmit: what the model sees (full text kept in the capture).",
    "cases": [
        big_case("C22a_post_additional_40k", "PostToolUse (matcher Bash) additionalContext of 40,037 chars",
                 "PostToolUse", big_words("MARK_BIGCTX_POST ") + hso_ctx("PostToolUse"), matcher="Bash", tool=True),
        big_case("C22b_ss_additional_40k", "SessionStart additionalContext of 40,035 chars",
                 "SessionStart", big_words("MARK_BIGCTX_SS ") + hso_ctx("SessionStart")),
        big_case("C22c_ss_plain_40k", "SessionStart plain stdout of 40,041 chars (+ newline)",
                 "SessionStart", big_words("MARK_BIGCTX_SS_PLAIN ") + 'printf "%s\\n" "$T"'),
        big_case("C22d_ups_additional_40k", "UserPromptSubmit additionalContext of 40,036 chars (C3n again, with "
                 "the full text recorded)", "UserPromptSubmit",
                 big_words("MARK_BIGCTX_UPS ") + hso_ctx("UserPromptSubmit")),
        big_case("C22e_ups_plain_40k", "UserPromptSubmit plain stdout of 40,042 chars (+ newline)",
                 "UserPromptSubmit", big_words("MARK_BIGCTX_UPS_PLAIN ") + 'printf "%s\\n" "$T"'),
    ]}


def big_bytes(prefix, total):
    """bash: T = prefix + ('word\\n' repeated, cut to total-len(prefix) bytes, newlines turned into spaces)"""
    return "T=\"%s$(yes word | head -c %d | tr '\\n' ' ')\"; " % (prefix, total - len(prefix))


SCENARIOS["C22_context_cap"]["cases"] += [
    big_case("C22f_ups_additional_10000_bytes", "UserPromptSubmit additionalContext of exactly 10,000 bytes",
             "UserPromptSubmit", big_bytes("MARK_BIGCTX_B10000 ", 10000) + hso_ctx("UserPromptSubmit")),
    big_case("C22g_ups_additional_10001_bytes", "UserPromptSubmit additionalContext of exactly 10,001 bytes",
             "UserPromptSubmit", big_bytes("MARK_BIGCTX_B10001 ", 10001) + hso_ctx("UserPromptSubmit")),
    big_case("C22h_ups_additional_multibyte", "UserPromptSubmit additionalContext: 'MARK_BIGCTX_EACUTE ' + 5,000 x "
             "U+00E9 = 5,019 chars but 10,019 UTF-8 bytes (bytes or chars?)", "UserPromptSubmit",
             "T=\"MARK_BIGCTX_EACUTE $(yes \u00e9 | head -n 5000 | tr -d '\\n')\"; " + hso_ctx("UserPromptSubmit")),
    big_case("C22i_ups_plain_lines", "UserPromptSubmit plain stdout: 'MARK_BIGCTX_LINES' line + 400 lines of "
             "100 bytes (40,018 bytes): line count and cut points", "UserPromptSubmit",
             "echo MARK_BIGCTX_LINES; for i in $(seq 0 399); do printf 'line %04d %s\\n' \"$i\" "
             "\"$(printf 'y%.0s' $(seq 89))\"; done"),
]

# How the hook command itself is started (login shell or not): a raw command that reports on its shell.
SHELL_PROBE = ("{ echo \"argv0=$0\"; echo \"opts=$-\"; shopt -q login_shell && echo login_shell=yes || echo login_shell=no; "
               "echo \"PATH=$PATH\"; echo \"ppid_cmd=$(tr '\\0' ' ' < /proc/$PPID/cmdline)\"; "
               "echo \"self_cmd=$(tr '\\0' ' ' < /proc/$$/cmdline)\"; } > \"$PWD/hook_probe.txt\"")
SCENARIOS["C20_env_passthrough"]["cases"].append(
    case("C20b_hook_shell_probe", "a raw (non-hook.sh) PreToolUse command reports how its shell was started "
         "(login shell?, PATH, parent); the tool does the same", 
         hooks={"PreToolUse": [{"matcher": "Bash", "hooks": [{"raw": SHELL_PROBE}]}],
                "Stop": [{"hooks": [{"label": "stop"}]}]},
         env=PASSTHROUGH_ENV, collect_files=["proj/hook_probe.txt", "proj/tool_probe.txt"],
         script=[{"type": "tool", "cmd": SHELL_PROBE.replace("hook_probe.txt", "tool_probe.txt")},
                 {"type": "text", "text": "all done"}],
         prompt="probe"))
SCENARIOS["C20_env_passthrough"]["cases"].append(
    dict(SCENARIOS["C20_env_passthrough"]["cases"][-1], name="C20c_hook_shell_probe_sh",
         purpose="as C20b, with SHELL=/bin/sh in codex's launch env: does the hook shell follow $SHELL?",
         env=dict(PASSTHROUGH_ENV, SHELL="/bin/sh")))
