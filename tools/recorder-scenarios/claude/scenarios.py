"""Scenario definitions for run_all.py.

SCENARIOS maps a scenario id (e.g. "S3") to {"title": str, "variants": {name: VARIANT}}. Each variant
is one run of the CLI in a fresh scratch folder. VARIANT keys (only "settings" is required):

  settings       dict, or function(ctx) -> dict, written to <proj>/.claude/settings.json. ctx has
                 RUN (scratch folder), PROJ (project folder = the CLI's cwd) and HOOK, the command
                 prefix of the capturing hook ("bash <RUN>/hooks/hook.sh"). The helpers below build it:
                 settings(Event=[group(matcher_or_None, cmd("label"), ...)], ...).
  behaviors      {label: {stdout|stderr: text, exit: int, sleep: seconds, once: 1, ignore_term: 1}}:
                 what the hook with that label does (see hooks/hook.sh); default: exit 0, no output.
  steps          mock model answers for the requests that carry tools, in order:
                 {"text": ...} or {"tool_use": {"name": ..., "input": {...}}} (see mock_api.py).
  desc           one-line description (copied into the capture).
  prompt         the -p prompt (default "do it").
  allowed_tools  the --allowedTools value (default "Bash,Read,Write,Task").
  extra_args     extra CLI arguments: a list, or function(ctx) -> list.
  env            extra environment variables for the CLI.
  setup          function(ctx) run before the CLI starts (make files, plugins, ...).
  cli_timeout    seconds before the CLI is killed (default 150).
  post_wait      seconds to wait after the CLI exits before hook records are collected (default 0.3).
  collect_files  paths relative to the run folder (e.g. "proj/tool_env.env0") copied into the capture as
                 collected_files after the run (None if absent; *.env0 files are parsed and compared with the
                 launch env). The capture also lists saved_tool_result_files (<HOME>/.claude/projects/*/*/
                 tool-results/*: where the CLI saves hook output it does not send whole).

Marker strings MARK_* make hook-injected text easy to find in the recorded model requests.
"""
import json
import os

ALL_EVENTS = ["PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "Notification",
              "UserPromptSubmit", "UserPromptExpansion", "SessionStart", "SessionEnd", "Stop", "StopFailure",
              "SubagentStart", "SubagentStop", "PreCompact", "PostCompact", "PermissionRequest",
              "PermissionDenied", "Setup", "TeammateIdle", "TaskCreated", "TaskCompleted", "Elicitation",
              "ElicitationResult", "ConfigChange", "WorktreeCreate", "WorktreeRemove", "InstructionsLoaded",
              "CwdChanged", "FileChanged", "MessageDisplay"]

BASH = {"tool_use": {"name": "Bash", "input": {"command": "echo hi", "description": "Print hi"}}}
DONE = {"text": "All done."}
BASH_STEPS = [BASH, DONE]
# a command that is not read-only, so it needs a permission (touch creates a file in the project dir)
BASH_W = {"tool_use": {"name": "Bash", "input": {"command": "touch made_by_bash.txt && echo hi",
                                                 "description": "Create a file"}}}
BASH_W_STEPS = [BASH_W, DONE]


def cmd(label, timeout=None, **kw):
    """One command handler running the capturing hook as LABEL; timeout and any other keyword become
    handler fields."""
    def f(ctx):
        h = {"type": "command", "command": "%s %s" % (ctx["HOOK"], label)}
        if timeout is not None:
            h["timeout"] = timeout
        h.update(kw)
        return h
    return f


def group(matcher, *hooks):
    """matcher=None -> no matcher key at all."""
    def f(ctx):
        g = {}
        if matcher is not None:
            g["matcher"] = matcher
        g["hooks"] = [h(ctx) for h in hooks]
        return g
    return f


def settings(**events):
    def f(ctx):
        return {"hooks": {ev: [g(ctx) for g in groups] for ev, groups in events.items()}}
    return f


def js(obj):
    return json.dumps(obj) + "\n"


SCENARIOS = {}

# ---------------------------------------------------------------- S1
SCENARIOS["S1"] = {
    "title": "all events observed, every hook exits 0 with no output",
    "variants": {
        "all_events": {
            "desc": "Every known hook event registered (no matcher). Model: Task(general-purpose) -> subagent answers "
                    "text -> Bash 'echo hi' -> Bash 'ls /nonexistent_dir' (fails) -> text.",
            "settings": settings(**{ev: [group(None, cmd(ev))] for ev in ALL_EVENTS}),
            "steps": [
                {"tool_use": {"name": "Task", "input": {"description": "Sub task", "prompt": "Say hi please",
                                                        "subagent_type": "general-purpose"}}},
                {"text": "Sub agent done."},
                BASH,
                {"tool_use": {"name": "Bash", "input": {"command": "ls /nonexistent_dir",
                                                        "description": "List missing dir"}}},
                DONE,
            ],
        },
        "bash_only": {
            "desc": "Same registration, simplest flow: Bash 'echo hi' then text.",
            "settings": settings(**{ev: [group(None, cmd(ev))] for ev in ALL_EVENTS}),
            "steps": BASH_STEPS,
        },
        "permission_needed": {
            "desc": "Bash NOT in --allowedTools (only Read) so a permission check is needed in -p mode; "
                    "which events fire (PermissionRequest / PermissionDenied / Notification)?",
            "settings": settings(**{ev: [group(None, cmd(ev))] for ev in ALL_EVENTS}),
            "allowed_tools": "Read",
            "steps": BASH_W_STEPS,
        },
    },
}

# ---------------------------------------------------------------- S2
SCENARIOS["S2"] = {
    "title": "PreToolUse exit 2 with stderr",
    "variants": {
        "exit2": {
            "settings": settings(PreToolUse=[group("Bash", cmd("pre"))],
                                 PostToolUse=[group("Bash", cmd("post"))],
                                 Stop=[group(None, cmd("stop"))]),
            "behaviors": {"pre": {"stderr": "blocked by policy\n", "exit": 2}},
            "steps": BASH_STEPS,
        },
        "exit2_stdout_and_stderr": {
            "desc": "exit 2 with both stdout (ignored?) and stderr",
            "settings": settings(PreToolUse=[group("Bash", cmd("pre"))]),
            "behaviors": {"pre": {"stdout": "MARK_S2_STDOUT should be ignored\n",
                                  "stderr": "MARK_S2_STDERR blocked by policy\n", "exit": 2}},
            "steps": BASH_STEPS,
        },
        "exit2_json_stdout": {
            "desc": "exit 2 with a JSON allow on stdout: is JSON ignored on exit 2?",
            "settings": settings(PreToolUse=[group("Bash", cmd("pre"))]),
            "behaviors": {"pre": {"stdout": js({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                                                        "permissionDecision": "allow"}}),
                                  "stderr": "MARK_S2_STDERR2 blocked\n", "exit": 2}},
            "steps": BASH_STEPS,
        },
    },
}

# ---------------------------------------------------------------- S3
def _pre(beh, allowed="Read", desc=""):
    return {
        "desc": desc,
        "settings": settings(PreToolUse=[group("Bash", cmd("pre"))], PostToolUse=[group("Bash", cmd("post"))],
                             PermissionRequest=[group(None, cmd("permreq"))],
                             PermissionDenied=[group(None, cmd("permdenied"))]),
        "behaviors": {"pre": beh} if beh else {},
        "allowed_tools": allowed,
        "steps": BASH_W_STEPS,
    }


def _hso(**kw):
    d = {"hookEventName": "PreToolUse"}
    d.update(kw)
    return js({"hookSpecificOutput": d})


SCENARIOS["S3"] = {
    "title": "PreToolUse JSON permission decisions (Bash not pre-allowed unless noted)",
    "variants": {
        "control_no_output": _pre(None, desc="hook silent; Bash not in allowedTools: baseline -p permission behaviour"),
        "deny": _pre({"stdout": _hso(permissionDecision="deny", permissionDecisionReason="no")}),
        "ask": _pre({"stdout": _hso(permissionDecision="ask", permissionDecisionReason="MARK_ASK please confirm")}),
        "allow": _pre({"stdout": _hso(permissionDecision="allow", permissionDecisionReason="MARK_ALLOW ok")}),
        "legacy_block": _pre({"stdout": js({"decision": "block", "reason": "MARK_LEGACY_BLOCK reason"})}),
        "legacy_approve": _pre({"stdout": js({"decision": "approve", "reason": "MARK_LEGACY_APPROVE reason"})}),
        "deny_with_bash_allowed": _pre({"stdout": _hso(permissionDecision="deny", permissionDecisionReason="no")},
                                       allowed="Bash,Read", desc="deny while an allow rule covers Bash"),
        "ask_with_bash_allowed": _pre({"stdout": _hso(permissionDecision="ask",
                                                      permissionDecisionReason="MARK_ASK2 confirm")},
                                      allowed="Bash,Read", desc="ask while an allow rule covers Bash"),
        "allow_updated_input": _pre({"stdout": _hso(permissionDecision="allow",
                                                    updatedInput={"command": "echo MARK_UPDATED",
                                                                  "description": "changed"})},
                                    allowed="Bash,Read", desc="allow + updatedInput rewrites the command"),
        "allow_additional_context": _pre({"stdout": _hso(permissionDecision="allow",
                                                         additionalContext="MARK_PRE_CTX extra")},
                                         allowed="Bash,Read", desc="PreToolUse additionalContext"),
        "wrong_event_name": _pre({"stdout": js({"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                                                      "permissionDecision": "deny",
                                                                      "permissionDecisionReason": "MARK_WRONG"}})},
                                 allowed="Bash,Read", desc="hookEventName mismatching the event"),
        "deny_exit1": _pre({"stdout": _hso(permissionDecision="deny", permissionDecisionReason="MARK_DENY_EXIT1"),
                            "exit": 1}, allowed="Bash,Read", desc="JSON deny but exit code 1: is JSON honoured?"),
    },
}

# ---------------------------------------------------------------- S4
def _ups(beh, desc=""):
    return {
        "desc": desc,
        "settings": settings(UserPromptSubmit=[group(None, cmd("ups"))], Stop=[group(None, cmd("stop"))]),
        "behaviors": {"ups": beh},
        "prompt": "MARK_PROMPT do it",
        "steps": [DONE],
    }


SCENARIOS["S4"] = {
    "title": "UserPromptSubmit outputs",
    "variants": {
        "plain_stdout": _ups({"stdout": "MARK_UPS_PLAIN context line\n"}),
        "plain_stdout_multiline_no_newline": _ups({"stdout": "MARK_UPS_L1\nMARK_UPS_L2"}),
        "json_additional_context": _ups({"stdout": js({"hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit", "additionalContext": "MARK_UPS_JSON ctx"}})}),
        "exit2": _ups({"stderr": "MARK_UPS_EXIT2 prompt rejected\n", "exit": 2}),
        "decision_block": _ups({"stdout": js({"decision": "block", "reason": "MARK_UPS_BLOCK reason"})}),
        "exit1_stderr": _ups({"stderr": "MARK_UPS_EXIT1 err\n", "exit": 1}),
        "system_message": _ups({"stdout": js({"systemMessage": "MARK_UPS_SYSMSG warn"})}),
    },
}

# ---------------------------------------------------------------- S5
def _post(beh, desc="", steps=None):
    return {
        "desc": desc,
        "settings": settings(PostToolUse=[group("Bash", cmd("post"))], Stop=[group(None, cmd("stop"))]),
        "behaviors": {"post": beh},
        "steps": steps or BASH_STEPS,
    }


SCENARIOS["S5"] = {
    "title": "PostToolUse outputs",
    "variants": {
        "exit2": _post({"stderr": "MARK_POST_EXIT2 fix this\n", "exit": 2}),
        "decision_block": _post({"stdout": js({"decision": "block", "reason": "MARK_POST_BLOCK reason"})}),
        "additional_context": _post({"stdout": js({"hookSpecificOutput": {
            "hookEventName": "PostToolUse", "additionalContext": "MARK_POST_CTX extra"}})}),
        "block_and_context": _post({"stdout": js({"decision": "block", "reason": "MARK_POST_BLOCK2",
                                                  "hookSpecificOutput": {"hookEventName": "PostToolUse",
                                                                         "additionalContext": "MARK_POST_CTX2"}})}),
        "plain_stdout": _post({"stdout": "MARK_POST_PLAIN out\n"}),
        "exit1_stderr": _post({"stderr": "MARK_POST_EXIT1 err\n", "exit": 1}),
        "updated_mcp_output": _post({"stdout": js({"hookSpecificOutput": {
            "hookEventName": "PostToolUse", "updatedMCPToolOutput": "MARK_REPLACED"}})},
            desc="updatedMCPToolOutput on a non-MCP tool"),
    },
}

# ---------------------------------------------------------------- S6
def _stop(beh, desc=""):
    b = dict(beh)
    b["once"] = 1
    return {
        "desc": desc + " (behaviour applies on first Stop call only; later calls exit 0 silently)",
        "settings": settings(Stop=[group(None, cmd("stop"))], SessionEnd=[group(None, cmd("end"))]),
        "behaviors": {"stop": b},
        "steps": [{"text": "First answer."}, {"text": "Second answer."}],
    }


SCENARIOS["S6"] = {
    "title": "Stop hook blocking",
    "variants": {
        "decision_block": _stop({"stdout": js({"decision": "block", "reason": "keep going"})}),
        "exit2": _stop({"stderr": "MARK_STOP_EXIT2 keep going\n", "exit": 2}),
        "exit1": _stop({"stderr": "MARK_STOP_EXIT1 err\n", "exit": 1}),
        "continue_false": _stop({"stdout": js({"continue": False, "stopReason": "MARK_STOP_CONT"})}),
        "plain_stdout": _stop({"stdout": "MARK_STOP_PLAIN\n"}),
    },
}
SCENARIOS["S6"]["variants"]["block_always"] = {
    "desc": "Stop hook blocks every time: does the CLI cap the loop? (mock answers text forever)",
    "settings": settings(Stop=[group(None, cmd("stop"))]),
    "behaviors": {"stop": {"stdout": js({"decision": "block", "reason": "MARK_AGAIN"})}},
    "steps": [{"text": "Answer %d." % i} for i in range(1, 13)],
    "cli_timeout": 60,
}

# ---------------------------------------------------------------- S7
def _ss(beh):
    return {
        "settings": settings(SessionStart=[group(None, cmd("ss"))]),
        "behaviors": {"ss": beh},
        "steps": [DONE],
    }


SCENARIOS["S7"] = {
    "title": "SessionStart context",
    "variants": {
        "plain_stdout": _ss({"stdout": "MARK_SS_PLAIN session ctx\n"}),
        "json_additional_context": _ss({"stdout": js({"hookSpecificOutput": {
            "hookEventName": "SessionStart", "additionalContext": "MARK_SS_JSON ctx"}})}),
        "exit2": _ss({"stderr": "MARK_SS_EXIT2\n", "exit": 2}),
        "matcher_startup": {
            "desc": "SessionStart matchers: startup / resume / clear / compact",
            "settings": settings(SessionStart=[group("startup", cmd("ss_startup")), group("resume", cmd("ss_resume")),
                                               group("clear", cmd("ss_clear")), group("compact", cmd("ss_compact"))]),
            "steps": [DONE],
        },
    },
}

# ---------------------------------------------------------------- S12
def _plugin_setup(ctx):
    pd = os.path.join(ctx["RUN"], "plugin")
    os.makedirs(os.path.join(pd, ".claude-plugin"), exist_ok=True)
    os.makedirs(os.path.join(pd, "hooks"), exist_ok=True)
    with open(os.path.join(pd, ".claude-plugin", "plugin.json"), "w") as f:
        json.dump({"name": "capplug", "version": "0.0.1", "description": "capture plugin"}, f)
    with open(os.path.join(pd, "hooks", "hooks.json"), "w") as f:
        json.dump({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command":
            "bash \"${CLAUDE_PLUGIN_ROOT}/../hooks/hook.sh\" plug \"${CLAUDE_PLUGIN_ROOT}\" '${CLAUDE_PLUGIN_ROOT}' "
            "\"${CLAUDE_PROJECT_DIR}\" '${CLAUDE_PROJECT_DIR}' \"$CLAUDE_PLUGIN_DATA\" '${CLAUDE_PLUGIN_DATA}'"}]}]}}, f)


SCENARIOS["S12"] = {
    "title": "${CLAUDE_PROJECT_DIR} / ${CLAUDE_PLUGIN_ROOT} in command strings",
    "variants": {
        "project_dir": {
            "desc": "double-quoted, single-quoted and bare forms; single quotes reveal CLI-side substitution",
            "settings": lambda ctx: {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command":
                "bash \"${CLAUDE_PROJECT_DIR}/../hooks/hook.sh\" proj \"${CLAUDE_PROJECT_DIR}\" '${CLAUDE_PROJECT_DIR}' "
                "$CLAUDE_PROJECT_DIR '$CLAUDE_PROJECT_DIR' \"$0\" \"$BASH_VERSION\" \"$SHELL\""}]}]}},
            "steps": BASH_STEPS,
        },
        "plugin_root_bare_in_settings": {
            "desc": "$CLAUDE_PLUGIN_ROOT (no braces) used in a settings.json hook",
            "settings": lambda ctx: {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command":
                "bash \"${CLAUDE_PROJECT_DIR}/../hooks/hook.sh\" projroot_bare \"$CLAUDE_PLUGIN_ROOT\""}]}]}},
            "steps": BASH_STEPS,
        },
        "plugin_root_in_settings": {
            "desc": "${CLAUDE_PLUGIN_ROOT} used in a settings.json (non-plugin) hook",
            "settings": lambda ctx: {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command":
                "bash \"${CLAUDE_PROJECT_DIR}/../hooks/hook.sh\" projroot \"${CLAUDE_PLUGIN_ROOT}\""}]}]}},
            "steps": BASH_STEPS,
        },
        "plugin_root": {
            "desc": "plugin loaded with --plugin-dir; its hooks.json uses ${CLAUDE_PLUGIN_ROOT}",
            "settings": {"hooks": {}},
            "setup": _plugin_setup,
            "steps": BASH_STEPS,
        },
        "cwd_after_cd": {
            "desc": "model runs 'cd sub' in Bash; next hook's cwd and CLAUDE_PROJECT_DIR",
            "settings": settings(PreToolUse=[group(None, cmd("pre"))], PostToolUse=[group(None, cmd("post"))],
                                 CwdChanged=[group(None, cmd("cwdchanged"))]),
            "setup": lambda ctx: os.makedirs(os.path.join(ctx["PROJ"], "sub"), exist_ok=True),
            "steps": [{"tool_use": {"name": "Bash", "input": {"command": "cd sub && pwd", "description": "cd"}}},
                      {"tool_use": {"name": "Bash", "input": {"command": "pwd", "description": "pwd"}}}, DONE],
        },
    },
}
SCENARIOS["S12"]["variants"]["plugin_root"]["extra_args"] = lambda ctx: ["--plugin-dir", os.path.join(ctx["RUN"], "plugin")]


# ---------------------------------------------------------------- S20: hook environment passthrough
# Extra variables in the CLI's launch env: which ones reach hooks (and the Bash tool) unchanged?
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

SCENARIOS["S20"] = {
    "title": "hook environment passthrough: extra launch variables (OTEL_*, tokens, NODE_OPTIONS, empty var)",
    "variants": {
        "env_passthrough": {
            "desc": "CLI launched with 14 extra variables (OTEL_*, *_TOKEN, *_API_KEY, DATABASE_URL, *_PAT, *_PASSWD, "
                    "SENTRY_DSN, SLACK_WEBHOOK_URL, MARK_PLAIN, NODE_OPTIONS, CLAUDE_CODE_USE_BEDROCK='' (empty), "
                    "PYTHONPATH). SessionStart, UserPromptSubmit, PreToolUse(Bash), PostToolUse(Bash) and Stop hooks "
                    "dump their full env; the Bash tool dumps its own env (env -0 > tool_env.env0).",
            "settings": settings(SessionStart=[group(None, cmd("ss"))],
                                 UserPromptSubmit=[group(None, cmd("ups"))],
                                 PreToolUse=[group("Bash", cmd("pre"))],
                                 PostToolUse=[group("Bash", cmd("post"))],
                                 Stop=[group(None, cmd("stop"))]),
            "env": PASSTHROUGH_ENV,
            "collect_files": ["proj/tool_env.env0", "proj/tool_env.txt"],
            "steps": [{"tool_use": {"name": "Bash", "input": {"command": TOOL_ENV_CMD,
                                                              "description": "Dump the tool environment"}}}, DONE],
        },
    },
}


# ---------------------------------------------------------------- S21: context size cap
def big_text(prefix, total=50000, tail=" MARK_BIGCTX_TAIL_END"):
    """Exactly `total` characters: prefix, then 'word ' repeated, then tail (padding 'x' if needed)."""
    fill = total - len(prefix) - len(tail)
    return prefix + "word " * (fill // 5) + "x" * (fill % 5) + tail


BIG_UPS_PLAIN = big_text("MARK_BIGCTX_UPS_PLAIN ")
BIG_UPS_JSON = big_text("MARK_BIGCTX_UPS_JSON ")
BIG_SS_JSON = big_text("MARK_BIGCTX_SS_JSON ")
BIG_SS_PLAIN = big_text("MARK_BIGCTX_SS_PLAIN ")
BIG_POST_JSON = big_text("MARK_BIGCTX_POST_JSON ")


def _ctx_variant(desc, event, beh, steps=None, matcher=None):
    groups = {event: [group(matcher, cmd("big"))]}
    if event != "Stop":
        groups["Stop"] = [group(None, cmd("stop"))]
    return {"desc": desc, "settings": settings(**groups), "behaviors": {"big": beh},
            "prompt": "MARK_PROMPT do it", "steps": steps or [DONE]}


SCENARIOS["S21"] = {
    "title": "context size cap: 50,000-character hook context (plain stdout and additionalContext)",
    "variants": {
        "ups_plain_50k": _ctx_variant(
            "UserPromptSubmit prints 50,000 chars of plain text (+ '\\n') on stdout, exit 0",
            "UserPromptSubmit", {"stdout": BIG_UPS_PLAIN + "\n"}),
        "ups_json_50k": _ctx_variant(
            "UserPromptSubmit JSON hookSpecificOutput.additionalContext of 50,000 chars, exit 0",
            "UserPromptSubmit", {"stdout": js({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                                                      "additionalContext": BIG_UPS_JSON}})}),
        "ss_json_50k": _ctx_variant(
            "SessionStart JSON hookSpecificOutput.additionalContext of 50,000 chars, exit 0",
            "SessionStart", {"stdout": js({"hookSpecificOutput": {"hookEventName": "SessionStart",
                                                                  "additionalContext": BIG_SS_JSON}})}),
        "ss_plain_50k": _ctx_variant(
            "SessionStart prints 50,000 chars of plain text (+ '\\n') on stdout, exit 0",
            "SessionStart", {"stdout": BIG_SS_PLAIN + "\n"}),
        "post_json_50k": _ctx_variant(
            "PostToolUse (matcher Bash) JSON hookSpecificOutput.additionalContext of 50,000 chars, exit 0; "
            "Bash 'echo hi'", "PostToolUse",
            {"stdout": js({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": BIG_POST_JSON}})},
            steps=BASH_STEPS, matcher="Bash"),
    },
}


# ---------------------------------------------------------------- S22: huge decision output
HUGE_PAD = "pad " * 275000  # 1,100,000 chars
HUGE_REASON = "MARK_HUGE_DENY_HEAD " + HUGE_PAD + "MARK_HUGE_DENY_TAIL"

SCENARIOS["S22"] = {
    "title": "huge decision output: PreToolUse deny JSON of ~1.1 MB",
    "variants": {
        "deny_1mb": {
            "desc": "PreToolUse (matcher Bash) prints a valid deny JSON whose permissionDecisionReason is ~1.1 MB "
                    "('MARK_HUGE_DENY_HEAD ' + 'pad ' x 275000 + 'MARK_HUGE_DENY_TAIL'), exit 0. Bash is allowed; "
                    "the command creates made_by_bash.txt.",
            "settings": settings(PreToolUse=[group("Bash", cmd("pre"))], PostToolUse=[group("Bash", cmd("post"))],
                                 Stop=[group(None, cmd("stop"))]),
            "behaviors": {"pre": {"stdout": _hso(permissionDecision="deny", permissionDecisionReason=HUGE_REASON)}},
            "allowed_tools": "Bash,Read",
            "collect_files": ["proj/made_by_bash.txt"],
            "steps": BASH_W_STEPS,
        },
    },
}


# S21 boundary variants: where exactly is the cut, in what unit, and how the preview is cut.
def _ups_json(text):
    return {"stdout": js({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": text}})}


BIG_10000 = big_text("MARK_BIGCTX_EXACT10000 ", total=10000)
BIG_10001 = big_text("MARK_BIGCTX_EXACT10001 ", total=10001)
# 'é' is 2 bytes in UTF-8 but 1 JS char: 6,000 chars / 12,000+ bytes
BIG_MULTIBYTE = "MARK_BIGCTX_EACUTE " + "\u00e9" * 9000 + " MARK_END"
# U+1F600 is 4 bytes in UTF-8, 2 UTF-16 code units (JS length 2): 5,100 emoji = 10,200 JS chars
BIG_EMOJI = "MARK_BIGCTX_EMOJI " + "\U0001F600" * 5100 + " MARK_END"
# 100-char lines: the preview is cut at the last newline before 2,000 chars (if that is past 1,000)
BIG_LINES = "MARK_BIGCTX_LINES\n" + "".join("line %04d %s\n" % (i, "y" * 89) for i in range(500)) + "MARK_END"
# one newline at position ~500 only: before half the preview size, so the preview is cut at 2,000
BIG_EARLY_NL = "MARK_BIGCTX_EARLYNL " + "q" * 480 + "\n" + big_text("", total=20000)

SCENARIOS["S21"]["variants"].update({
    "ups_json_10000": _ctx_variant("UserPromptSubmit additionalContext of exactly 10,000 chars", "UserPromptSubmit",
                                   _ups_json(BIG_10000)),
    "ups_json_10001": _ctx_variant("UserPromptSubmit additionalContext of exactly 10,001 chars", "UserPromptSubmit",
                                   _ups_json(BIG_10001)),
    "ups_plain_10000_padded": _ctx_variant(
        "UserPromptSubmit plain stdout: 10,000 chars followed by '\\n\\n   \\n' (the cut is measured after trim?)",
        "UserPromptSubmit", {"stdout": BIG_10000 + "\n\n   \n"}),
    "ups_plain_10001": _ctx_variant("UserPromptSubmit plain stdout: 10,001 chars + '\\n'", "UserPromptSubmit",
                                    {"stdout": BIG_10001 + "\n"}),
    "ups_json_multibyte": _ctx_variant(
        "additionalContext of %d chars ('\\u00e9' x 9000, %d UTF-8 bytes): counted in chars or bytes?"
        % (len(BIG_MULTIBYTE), len(BIG_MULTIBYTE.encode())), "UserPromptSubmit", _ups_json(BIG_MULTIBYTE)),
    "ups_json_emoji": _ctx_variant(
        "additionalContext of %d code points / %d UTF-16 units (U+1F600 x 5100): counted in UTF-16 units?"
        % (len(BIG_EMOJI), len(BIG_EMOJI.encode("utf-16-le")) // 2), "UserPromptSubmit", _ups_json(BIG_EMOJI)),
    "ups_json_lines": _ctx_variant("additionalContext of %d chars in 100-char lines: where is the preview cut?"
                                   % len(BIG_LINES), "UserPromptSubmit", _ups_json(BIG_LINES)),
    "ups_json_early_newline": _ctx_variant("additionalContext of 20,500 chars with one newline at index 500",
                                           "UserPromptSubmit", _ups_json(BIG_EARLY_NL)),
})

# persisting fails: the session's tool-results path is a regular file, so the save fails (ENOTDIR)
FIXED_SESSION = "5e55e55e-0000-4000-8000-000000000021"


def _block_tool_results(ctx):
    import re as _re
    slug = _re.sub(r"[^A-Za-z0-9]", "-", ctx["PROJ"])
    d = os.path.join(ctx["RUN"], "home", ".claude", "projects", slug, FIXED_SESSION)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "tool-results"), "w") as f:
        f.write("not a folder\n")


SCENARIOS["S21"]["variants"]["ups_json_persist_fails"] = dict(
    _ctx_variant("UserPromptSubmit additionalContext of 50,000 chars while the session's tool-results folder "
                 "cannot be made (a regular file is in its place; --session-id fixes the path)",
                 "UserPromptSubmit", _ups_json(BIG_UPS_JSON)),
    setup=_block_tool_results, extra_args=["--session-id", FIXED_SESSION])
