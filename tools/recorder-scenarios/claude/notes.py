"""Human-written descriptions of what was observed, keyed "S<n>" (copied into captures/S<n>*.json as
observed_summary) or "S<n>/<variant>" (copied into that variant as observed). run_all.py copies them at
record time; `python3 run_all.py --notes-only` re-copies them into existing captures. Written from
Claude Code 2.1.197 with its default model claude-opus-4-8[1m] (placement differences of the
claude-sonnet-4-5 pass, captures/*_sonnet45.json, are noted where they matter).
<CMD> below stands for the hook's command string exactly as written in settings.json."""

NOTES = {
    # ------------------------------------------------------------------ S1
    "S1": "Hooks run via `/bin/sh -c <CMD>` (sh is the parent; its own process group and session), cwd = session cwd, "
          "stdin = one compact JSON object + '\\n' on a socket (not a pipe), stdout/stderr are sockets. Events that "
          "fired in -p mode: SessionStart, UserPromptSubmit, PreToolUse, SubagentStart, SubagentStop, PostToolUse, "
          "PostToolUseFailure, PostToolBatch, MessageDisplay, Stop, SessionEnd. Never fired here: Notification, "
          "PermissionRequest, PermissionDenied, PreCompact, PostCompact, Setup, StopFailure, etc. Env added by the CLI: "
          "CLAUDECODE=1, CLAUDE_PROJECT_DIR, CLAUDE_CODE_ENTRYPOINT=sdk-cli, CLAUDE_CODE_SESSION_ID, "
          "CLAUDE_CODE_CHILD_SESSION=1, AI_AGENT=claude-code_2-1-197_harness, COREPACK_ENABLE_AUTO_PIN=0, "
          "NoDefaultCurrentDirectoryInExePath=1, CLAUDE_EFFORT (tool/Stop events only), CLAUDE_ENV_FILE (SessionStart "
          "only). The whole launch env (incl. ANTHROPIC_* vars) is inherited.",
    "S1/all_events": "Order: SessionStart(source=startup) -> UserPromptSubmit -> PreToolUse(tool_name 'Agent' although "
                     "the model called 'Task') -> SubagentStart -> SubagentStop -> PostToolUse(Agent) -> PostToolBatch "
                     "(tool_name 'Task') -> PreToolUse(Bash) -> PostToolUse -> PostToolBatch -> PreToolUse(Bash ls) -> "
                     "PostToolUseFailure (error='Exit code 2\\n<stderr>') -> PostToolBatch -> MessageDisplay -> Stop "
                     "(stop_hook_active=false, last_assistant_message) -> SessionEnd(reason='other'). All sequential "
                     "(one hook per event). stdin always ends with exactly one '\\n'.",
    "S1/bash_only": "Same as all_events without the subagent/failure parts.",
    "S1/permission_needed": "Bash not allowed and not read-only: the CLI refused it without any PermissionRequest / "
                            "PermissionDenied / Notification hook firing; PostToolUse did not fire, PostToolBatch did.",
    # ------------------------------------------------------------------ S2
    "S2": "PreToolUse exit 2: tool not run; the model gets tool_result is_error=true with content "
          "'PreToolUse:Bash hook error: [<CMD>]: <stderr verbatim, trailing newline kept>'. stdout (even JSON) ignored.",
    "S2/exit2": "tool_result content = 'PreToolUse:Bash hook error: [bash .../hook.sh pre]: blocked by policy\\n'. "
                "Run continues; result lists the call in permission_denials.",
    "S2/exit2_stdout_and_stderr": "stdout ignored; only stderr in the tool_result.",
    "S2/exit2_json_stdout": "JSON allow on stdout ignored because exit code is 2; blocked with stderr.",
    # ------------------------------------------------------------------ S3
    "S3": "permissionDecision deny -> tool_result is_error=true, content = permissionDecisionReason verbatim (no prefix). "
          "ask in -p mode (no one to ask) -> same as deny, content = reason, even when an allow rule covers the tool. "
          "allow -> tool runs even though not in allowedTools. Legacy {decision:block} == deny (reason verbatim); "
          "{decision:approve} == allow. JSON is honoured with exit code 1 too (deny_exit1). hookEventName mismatch -> "
          "whole JSON rejected (hook error, non-blocking) and the tool runs.",
    "S3/control_no_output": "Baseline: Bash 'touch ...' not pre-allowed in -p: the CLI's own denial text reaches the "
                            "model; no Permission* hooks fire.",
    "S3/allow_updated_input": "updatedInput replaced the whole tool input; PostToolUse sees the new input; model sees "
                              "the new output. The assistant message in history keeps the ORIGINAL input.",
    "S3/allow_additional_context": "PreToolUse additionalContext goes into the next request as a text block after the "
                                   "tool_result in the same user message: '<system-reminder>\\nPreToolUse:Bash hook "
                                   "additional context: MARK_PRE_CTX extra\\n</system-reminder>'.",
    "S3/wrong_event_name": "hook_response stderr: \"Failed to run: Hook returned incorrect event name: expected "
                           "'PreToolUse' but got 'PostToolUse'. Full stdout: {...pretty JSON...}\", exit_code 1, "
                           "outcome error; the deny is NOT applied.",
    # ------------------------------------------------------------------ S4
    "S4": "UserPromptSubmit: exit-0 plain stdout and JSON additionalContext both become model context; with the "
          "default model they are appended to the mid-conversation role:'system' message as "
          "'\\n\\nUserPromptSubmit hook success: <stdout with trailing newline trimmed>' or "
          "'\\n\\nUserPromptSubmit hook additional context: <ctx>'; with claude-sonnet-4-5 (no mid-conversation-system "
          "beta) as a user text block '<system-reminder>\\nUserPromptSubmit hook success: ...\\n</system-reminder>\\n' "
          "placed before the prompt text. exit 2 / decision:block -> no model request at all.",
    "S4/exit2": "No request sent. stream-json system/informational (level warning, prevent_continuation true) and result "
                "text: 'UserPromptSubmit operation blocked by hook:\\n[<CMD>]: <stderr incl. its \\n>\\n\\n\\nOriginal "
                "prompt: <prompt>'. CLI exit code 0, subtype success, num_turns 0. Stop hook not run.",
    "S4/decision_block": "No request sent. Result text: 'UserPromptSubmit operation blocked by hook:\\n<reason>\\n\\n"
                         "Original prompt: <prompt>'.",
    "S4/exit1_stderr": "Non-blocking: nothing reaches the model; prompt processed normally.",
    "S4/system_message": "systemMessage is not sent to the model.",
    # ------------------------------------------------------------------ S5
    "S5": "PostToolUse results go into the next request as extra text blocks AFTER the tool_result block in the same "
          "user message (tool_result itself unchanged, is_error false). exit 2: '<system-reminder>\\nPostToolUse:Bash "
          "hook blocking error from command: \"<CMD>\": [<CMD>]: <stderr>\\n</system-reminder>' (stderr newline kept, "
          "so '\\n\\n</system-reminder>'). decision:block: '<system-reminder>\\nPostToolUse:Bash hook blocking error "
          "from command: \"<CMD>\": <reason>\\n</system-reminder>'. additionalContext: '<system-reminder>\\n"
          "PostToolUse:Bash hook additional context: <ctx>\\n</system-reminder>'. Plain stdout, exit 1, "
          "updatedMCPToolOutput (non-MCP tool): nothing reaches the model. Same text and placement with claude-sonnet-4-5. "
          "Quirk: when several of these blocks are merged into one user message, some (not all) get one extra "
          "trailing '\\n' after '</system-reminder>'; the exact bytes are in the captures.",
    # ------------------------------------------------------------------ S6
    "S6": "Stop {decision:block, reason} -> the CLI appends a user message 'Stop hook feedback:\\n<reason>' and sends a "
          "new request; the next Stop input has stop_hook_active=true. exit 2 -> 'Stop hook feedback:\\n[<CMD>]: "
          "<stderr>'. exit 1 / plain stdout -> ignored, turn ends. continue:false -> ends, terminal_reason "
          "stop_hook_prevented. Consecutive blocks are capped at 8 (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP): the 9th block is "
          "overridden and the turn ends (result '').",
    # ------------------------------------------------------------------ S7
    "S7": "SessionStart input {session_id, transcript_path, cwd, hook_event_name, source:'startup'} (no permission_mode). "
          "Plain stdout -> 'SessionStart:startup hook success: <stdout trimmed>'; JSON -> 'SessionStart hook additional "
          "context: <ctx>'. Default model: PREPENDED to the mid-conversation system message followed by '\\n\\n'. "
          "claude-sonnet-4-5: first text block of the first user message, '<system-reminder>\\nSessionStart:startup "
          "hook success: <stdout trimmed>\\n</system-reminder>', before the agent/skills/date reminders and the prompt. "
          "exit 2 -> ignored (nothing to the model). Only the 'startup' matcher fired.",
    # ------------------------------------------------------------------ S12
    "S12": "The CLI does NOT substitute ${CLAUDE_PROJECT_DIR} / ${CLAUDE_PLUGIN_ROOT} / ${CLAUDE_PLUGIN_DATA} in the "
           "command string: it runs `/bin/sh -c <CMD>` verbatim and the shell expands them from the environment "
           "(single-quoted forms stay literal). $0 is /bin/sh (dash) even with SHELL=/bin/bash. A settings.json hook "
           "whose command contains the literal text '${CLAUDE_PLUGIN_ROOT}' is NOT run: hook_response exit_code 1, "
           "stderr 'Failed to run: Hook command references ${CLAUDE_PLUGIN_ROOT} but the hook is not associated with a "
           "plugin. ...'; the bare '$CLAUDE_PLUGIN_ROOT' form is not detected (expands to ''). Plugin hooks get env "
           "CLAUDE_PLUGIN_ROOT=<plugin dir> and CLAUDE_PLUGIN_DATA=<HOME>/.claude/plugins/data/<name>-inline. "
           "After the model runs `cd sub`, later hooks run with cwd=sub and stdin cwd=sub (already in that command's "
           "PostToolUse), CLAUDE_PROJECT_DIR unchanged, and a CwdChanged hook fires with old_cwd/new_cwd.",
}

# ------------------------------------------------------------------ S20-S22 (added with the env / size recordings)
NOTES.update({
    "S20": "Hook env = the CLI's launch env minus every OTEL_* variable, plus the CLI's own variables. Secrets are NOT "
           "scrubbed by default (GITHUB_TOKEN, *_API_KEY, DATABASE_URL, *_PAT, *_PASSWD, SENTRY_DSN, "
           "SLACK_WEBHOOK_URL, ANTHROPIC_API_KEY all reach hooks and the Bash tool unchanged); NODE_OPTIONS, "
           "PYTHONPATH and the empty CLAUDE_CODE_USE_BEDROCK='' pass unchanged (the empty one stays present and empty). "
           "PATH and HOME unchanged.",
    "S20/env_passthrough": "Dropped for hooks AND the Bash tool: OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, "
                           "OTEL_RESOURCE_ATTRIBUTES (the CLI deletes every OTEL_* name, and CLAUDE_CODE_OTEL_DIAG_STDERR, "
                           "from subprocess envs). Nothing changed. Added for every hook: AI_AGENT=claude-code_2-1-197_harness, "
                           "CLAUDECODE=1, CLAUDE_CODE_CHILD_SESSION=1, CLAUDE_CODE_ENTRYPOINT=sdk-cli, CLAUDE_CODE_SESSION_ID="
                           "<session id>, CLAUDE_PROJECT_DIR=<project>, COREPACK_ENABLE_AUTO_PIN=0, "
                           "NoDefaultCurrentDirectoryInExePath=1; SessionStart also CLAUDE_ENV_FILE=<HOME>/.claude/session-env/"
                           "<session id>/sessionstart-hook-0.sh; PreToolUse, PostToolUse and Stop also CLAUDE_EFFORT=high "
                           "(UserPromptSubmit and SessionStart do not get it). (PWD, SHLVL=1 and _ come from the shells.) "
                           "The Bash tool's env: same passthrough and the same OTEL_* removal, plus AI_AGENT=claude-code_2-1-197_agent "
                           "(not _harness), CLAUDECODE=1, CLAUDE_CODE_CHILD_SESSION=1, CLAUDE_CODE_ENTRYPOINT=sdk-cli, "
                           "CLAUDE_CODE_EXECPATH=<path of the claude executable>, CLAUDE_CODE_SESSION_ID, CLAUDE_EFFORT=high, "
                           "COREPACK_ENABLE_AUTO_PIN=0, GIT_EDITOR=true, NoDefaultCurrentDirectoryInExePath=1; no "
                           "CLAUDE_PROJECT_DIR. (CLAUDE_CODE_SUBPROCESS_ENV_SCRUB=1, the opt-in secret scrub, could not be "
                           "recorded: without bubblewrap the CLI exits 1 with 'error: bubblewrap is required for subprocess env "
                           "scrubbing and isolation. ...'.)",
    "S21": "Hook text (plain stdout of an exit-0 hook after trim(), additionalContext, systemMessage, initialUserMessage) "
           "longer than 10,000 UTF-16 code units is NOT sent: it is saved whole to "
           "<HOME>/.claude/projects/<slug>/<session id>/tool-results/hook-<id>-<kind>.txt and replaced by "
           "'<persisted-output>\\nOutput too large (<size>). Full output saved to: <path>\\n\\nPreview (first 2KB):\\n"
           "<first 2000 units, or up to the last newline if that is past index 1000>\\n...\\n</persisted-output>'. "
           "<size> = length/1024 with one decimal and a trailing .0 dropped + 'KB' (50,000 -> 48.8KB). "
           "Up to 10,000 units the text is kept whole. If the save fails, the text is cut at 10,000 units and "
           "'\\n\\n[Hook <kind> truncated at 10000 chars — persist-to-disk failed: <error>]' follows.",
    "S21/ups_plain_50k": "Model sees 'UserPromptSubmit hook success: <persisted-output>...' (preview = first 2,000 chars); "
                         "file hook-<hook_id>-stdout.txt holds the 50,000 trimmed chars (no trailing newline).",
    "S21/ups_json_50k": "Model sees 'UserPromptSubmit hook additional context: <persisted-output>\\nOutput too large (48.8KB). "
                        "Full output saved to: .../tool-results/hook-<uuid>-1-additionalContext.txt\\n\\nPreview (first 2KB):"
                        "\\n<2,000 chars>\\n...\\n</persisted-output>'.",
    "S21/ss_json_50k": "'SessionStart hook additional context: <persisted-output>...' (file hook-<uuid>-1-additionalContext.txt).",
    "S21/ss_plain_50k": "'SessionStart:startup hook success: <persisted-output>...' (file hook-<hook_id>-stdout.txt).",
    "S21/post_json_50k": "A text block after the tool_result: '<system-reminder>\\nPostToolUse:Bash hook additional context: "
                         "<persisted-output>...</persisted-output>\\n</system-reminder>'; file "
                         "hook-<tool_use_id>-1-additionalContext.txt. The tool result itself ('hi') is unchanged.",
    "S21/ups_json_10000": "Exactly 10,000 chars: kept whole, no file.",
    "S21/ups_json_10001": "10,001 chars: persisted ('Output too large (9.8KB)').",
    "S21/ups_plain_10000_padded": "10,000 chars + '\\n\\n   \\n' on stdout: trimmed to 10,000, kept whole.",
    "S21/ups_plain_10001": "10,001 chars + '\\n': persisted; the file holds the 10,001 trimmed chars.",
    "S21/ups_json_multibyte": "9,028 chars / 18,028 UTF-8 bytes: kept whole (the limit counts chars, not bytes).",
    "S21/ups_json_emoji": "5,127 code points = 10,227 UTF-16 units: persisted ('10KB'); the preview is 2,000 UTF-16 units "
                          "(991 emoji after the 18-char prefix).",
    "S21/ups_json_lines": "100-char lines: the preview ends before the newline at index 1917 (1,917 chars), no newline kept.",
    "S21/ups_json_early_newline": "Only newline at index 500 (<= 1000): the preview is the first 2,000 chars (newline inside).",
    "S21/ups_json_persist_fails": "tool-results is a regular file, so the save fails: the model gets the first 10,000 chars, "
                                  "then '\\n\\n[Hook additionalContext truncated at 10000 chars — persist-to-disk failed: "
                                  "ENOTDIR: ENOTDIR: not a directory, open '<path>']'.",
    "S22": "A PreToolUse deny with a 1.1 MB permissionDecisionReason is honoured like a short one.",
    "S22/deny_1mb": "Deny honoured: the Bash command did not run (made_by_bash.txt absent), PostToolUse did not fire. The "
                    "model got tool_result is_error=true whose content is the whole 1,100,039-char reason, unchanged (no "
                    "prefix, no cut, no persisted-output file): the 10,000-char hook-output cap does not apply to "
                    "permissionDecisionReason. The turn went on normally.",
})
