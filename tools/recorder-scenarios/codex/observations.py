"""Hand-written description of the observed outcome per case name (codex-cli 0.171.0).
runner.py copies these into captures/<scenario>.json as case["observed_outcome"]."""

O = {}

# C1
O["C1a_all_events_hooks_json"] = (
    "Of 14 configured event names, 8 fired in this single-turn exec run, in this order: SessionStart, "
    "UserPromptSubmit, PreModelRequest, PreToolUse, PostToolUse, PreModelRequest, Stop, SessionEnd. "
    "(PermissionRequest, PreCompact, PostCompact, SubagentStart, SubagentStop, StopFailure and Interrupt were "
    "accepted in hooks.json without a warning, but nothing triggered them.) "
    "stdin is compact JSON with no trailing newline; key order is fixed (see the stdin fields). tool_name is 'Bash' "
    "for the exec_command tool; tool_input={\"command\":\"echo hi\"}; tool_response is a plain string (the "
    "aggregated output). Hook argv tokens '${CODEX_HOME}' '${PLUGIN_ROOT}' '${CLAUDE_PROJECT_DIR}' reached the "
    "hook literally, so Codex does no ${...} substitution for user hooks. The command runs via $SHELL -lc "
    "(login shell: PATH is reset by /etc/profile); cwd = session cwd. The env is inherited from the codex process "
    "(PROBE_PARENT_MARKER present), and Codex adds no variables of its own (only PWD/SHLVL/_ from bash; PATH "
    "changed by the login profile).")
O["C1b_config_toml_hooks"] = "Same hooks as [[hooks.<Event>]] / [[hooks.<Event>.hooks]] tables in config.toml: they fire the same way, with identical payloads."
O["C1c_no_trust_bypass"] = ("Without --dangerously-bypass-hook-trust, NO hook ran, and nothing was printed about it. "
                            "User hooks need a persisted trust entry (hook state trusted_hash) or the bypass flag.")
O["C1d_resume"] = ("First run SessionStart source='startup'; `exec resume --last` gives SessionStart source='resume', with the same session_id. "
                   "Each run ends with SessionEnd {reason:'other'}. SessionEnd has no model/permission_mode/turn_id.")
O["C1e_project_hooks_json"] = ("<proj>/.codex/hooks.json is ignored unless the project is trusted (stderr warning 'Untrusted project-local "
                               "configuration is disabled'). With `--trust` (this capture) the project hooks fire normally.")
O["C1k_exec_extra_args"] = ("exec_command with workdir=/tmp, yield_time_ms, max_output_tokens: tool_input is still only {\"command\":\"pwd\"} "
                            "(the other args are dropped). The payload 'cwd' field becomes the tool's workdir '/tmp', while the hook PROCESS "
                            "still runs in the session cwd (<proj>). An earlier variant that added 'justification' without sandbox_permissions "
                            "made the tool call fail after PreToolUse had already fired (PostToolUse did not fire).")
O["C1f_multiline_prompt"] = "The prompt is JSON-escaped only as serde_json does it: \\n, \\\", \\\\. Non-ASCII (é, ☃) stays raw UTF-8; <, >, & are not escaped."
O["C1g_tool_failing_cmd"] = "For a failing command (exit 3), PostToolUse still fires; tool_response is the raw combined output string 'err\\nout\\n'. There is no exit-code field."
O["C1h_perm_workspace_write_never"] = "-s workspace-write: permission_mode is still 'bypassPermissions'. exec forces approval_policy=never."
O["C1i_perm_readonly_onrequest"] = "-s read-only -c approval_policy=on-request: exec still runs with approval_policy=never, and permission_mode='bypassPermissions'. PermissionRequest never fired."
O["C1j_perm_default"] = "No flags: read-only sandbox, approval never, permission_mode='bypassPermissions'. In codex exec, every run seen had permission_mode bypassPermissions."

# C2
O["C2a_exit2_stderr"] = "Blocked: the tool did not run and PostToolUse did not fire. The model sees function_call_output 'Command blocked by PreToolUse hook: <stderr trimmed>. Command: <command>'. The turn continues."
O["C2b_exit2_no_stderr"] = "Exit 2 with empty stderr does NOT block (fail-open): the tool ran. The binary's message for this is 'PreToolUse hook exited with code 2 but did not write a blocking reason to stderr'."
O["C2c_json_decision_block"] = "{decision:block, reason} on exit 0 blocks. Output: 'Command blocked by PreToolUse hook: json block reason. Command: echo hi'."
O["C2d_pd_deny"] = "hookSpecificOutput.permissionDecision=deny + reason blocks, with the same output format, using the permissionDecisionReason."
O["C2e_pd_allow"] = "permissionDecision=allow: the tool runs normally; nothing visible changes."
O["C2f_pd_ask"] = "permissionDecision=ask is unsupported and ignored (fail-open): the tool ran. The binary has the string 'PreToolUse hook returned unsupported permissionDecision:ask'."
O["C2g_decision_approve"] = "decision=approve is unsupported and ignored: the tool ran."
O["C2h_pd_deny_no_reason"] = "deny without permissionDecisionReason is treated as invalid and ignored (fail-open): the tool ran."
O["C2i_allow_updated_input"] = ("allow + updatedInput {command:'echo rewritten'} REWRITES the command: 'echo rewritten' was executed, and "
                               "PostToolUse tool_input shows the rewritten command. The model's history still shows the original function_call arguments.")
O["C2j_continue_false"] = "continue:false (+stopReason) on PreToolUse is unsupported and ignored: the tool ran and the turn went on."
O["C2k_plain_stdout"] = "Plain stdout on exit 0 is ignored: the tool ran and nothing was injected."
O["C2l_exit1_stderr"] = "Exit 1 is a non-blocking error: the tool ran and the stderr was not shown to the model."
O["C2m_exit2_plus_json"] = "Exit 2 takes precedence over stdout JSON (allow): blocked, with the stderr as the reason."
O["C2n_systemMessage"] = "systemMessage alone: the tool ran; nothing went to the model (in exec)."
O["C2o_pd_deny_wrong_event_name"] = "hookEventName mismatch (PostToolUse) is not checked: the deny was still honored."
O["C2p_additional_context"] = ("PreToolUse additionalContext is injected as a developer message placed between the function_call and "
                               "its function_call_output in the next request. The tool ran.")
O["C2q_updated_input_no_allow"] = "updatedInput without permissionDecision:allow is ignored (invalid output): the original command ran."
O["C2r_allow_updated_input_cmd_key"] = ("allow + updatedInput with key 'cmd' (not 'command'): the tool call FAILS, and function_call_output = "
                                        "'hook returned updatedInput without string field `command`'. The command did not run.")
O["C2s_stderr_only_exit0"] = "stderr on exit 0 is ignored."
O["C2t_json_trailing_newline_block"] = "JSON followed by '\\n' is parsed fine (whitespace tolerated): blocked."
O["C2u_deny_plus_additional_context"] = "deny + additionalContext: blocked, and the developer message 'deny ctx' is placed before the function_call_output."

# C3
O["C3a_ss_plain_stdout"] = ("SessionStart plain stdout (trimmed) becomes a separate developer message placed after the environment_context "
                            "user message and before the user prompt.")
O["C3b_ss_json_additional"] = "SessionStart hookSpecificOutput.additionalContext: a developer message at the same position as plain stdout."
O["C3c_ups_plain_stdout"] = "UserPromptSubmit plain stdout becomes a developer message placed right AFTER the user prompt message."
O["C3d_ups_json_additional"] = "UserPromptSubmit additionalContext: a developer message after the user prompt."
O["C3e_ups_decision_block"] = ("UPS {decision:block,reason}: no model request at all. The turn completes empty (turn.started/turn.completed, "
                               "0 tokens), codex exits 0, the reason is not printed in --json output, and the prompt is not saved to thread history. Stop did not fire.")
O["C3f_ups_exit2_stderr"] = "UPS exit 2 + stderr: same as block. No model request, Stop does not fire, exit code 0."
O["C3g_ups_continue_false"] = "UPS continue:false + stopReason: same as block (no model request)."
O["C3h_ss_exit2_stderr"] = "SessionStart exit 2 is ignored (not blocking) and its stderr is not injected; the session proceeds."
O["C3i_ss_continue_false"] = "SessionStart continue:false: the turn ends with no model request; UserPromptSubmit and Stop do not fire."
O["C3j_ups_plain_multiline_trailing_ws"] = "Plain stdout is trimmed as a whole ('\\n\\n  line A\\nline B  \\n\\n' -> 'line A\\nline B')."
O["C3k_ups_json_with_trailing_newline_and_plain_json_no_hso"] = "Stdout that parses as JSON ({systemMessage}) is not used as plain-text context: nothing is injected."
O["C3l_ss_plain_stdout_exit1"] = "SessionStart exit 1 with stdout: the stdout is NOT injected (only exit 0 output counts)."
O["C3m_ups_block_then_resume"] = "The blocked prompt 'the secret prompt' never reaches the model, not even after resume: the next request contains only 'normal prompt'."
O["C3n_ups_large_additional_context"] = ("A ~40 KB additionalContext is truncated to about 10 KB: 'Warning: truncated output (original token count: 10002)\\n"
                                         "Total output lines: 1\\n\\n<head>…N tokens truncated…<tail>\\n\\nFull hook output saved to: <system temp dir>/hook_outputs/<thread_id>/<uuid>.txt'.")

# C4
O["C4a_decision_block"] = ("PostToolUse {decision:block,reason}: the command had already run. Its output is REPLACED by the reason in "
                           "function_call_output ('post block reason'); the model never sees 'hi'. The turn continues.")
O["C4b_exit2_stderr"] = "PostToolUse exit 2 + stderr: the output is replaced by the stderr text; the turn continues."
O["C4c_additional_context"] = "PostToolUse additionalContext: a developer message between the function_call and the function_call_output; the output is unchanged."
O["C4d_plain_stdout"] = "PostToolUse plain stdout is ignored."
O["C4e_continue_false"] = "PostToolUse continue:false + stopReason: the output is replaced by the stopReason, and the model WAS sampled again (the turn did not stop in exec)."
O["C4f_block_plus_context"] = "block + additionalContext: a developer message 'post ctx 2' comes before the function_call_output, which is replaced by 'post block reason 2'."
O["C4g_updated_mcp_output"] = "updatedMCPToolOutput on a non-MCP tool is ignored: the output is unchanged."
O["C4h_exit1_stderr"] = "PostToolUse exit 1 is ignored: the output is unchanged."

# C5
O["C5a_block_once"] = ("Stop {decision:block,reason} makes the turn continue: the next request appends a USER message "
                       "'<hook_prompt hook_run_id=\"stop:<n>:<hooks.json path>\">REASON</hook_prompt>'. The next Stop has "
                       "stop_hook_active=true and last_assistant_message=the new answer, in the same turn_id.")
O["C5b_exit2_once"] = "Stop exit 2 + stderr acts like block: the stderr becomes the hook_prompt text."
O["C5c_continue_false"] = "Stop continue:false: the turn ends (no extra request)."
O["C5d_block_4_times"] = "Blocking 4 times gave 4 continuations (5 model requests). No loop cap was seen; stop_hook_active stays true after the first."
O["C5e_plain_stdout"] = "Stop plain stdout is ignored and the turn ends."
O["C5f_block_no_reason"] = "decision:block without a reason is invalid and ignored: the turn ends."

# C20-C22 (env passthrough, huge decisions, context cap)
O["C20a_env_passthrough"] = (
    "Hooks get codex's launch env unchanged: every extra variable (OTEL_*, GITHUB_TOKEN, MY_API_KEY, DATABASE_URL, GITLAB_PAT, "
    "DB_PASSWD, SENTRY_DSN, SLACK_WEBHOOK_URL, MARK_PLAIN, NODE_OPTIONS, PYTHONPATH, the empty CLAUDE_CODE_USE_BEDROCK, "
    "and MOCK_API_KEY, the provider key) reaches SessionStart, UserPromptSubmit, PreToolUse, PostToolUse and Stop hooks. "
    "Nothing is dropped; Codex adds no variable. The one change: PATH gets '<codex package>/vendor/<target>/codex-path:' "
    "prepended (PWD, SHLVL, _ come from bash). The exec_command tool also gets every variable (nothing scrubbed), with "
    "PATH = codex-path + the login profile's PATH, and adds CODEX_APPLY_PATCH_PRESERVE_LINE_ENDINGS=1, CODEX_CI=1, "
    "CODEX_SESSION_ID=CODEX_THREAD_ID=<thread id>, CODEX_TOOL_CALL_ID=call_1, CODEX_VERSION=0.171.0, COLORTERM='', "
    "GH_PAGER=cat, GIT_PAGER=cat, LC_ALL=C.UTF-8, LC_CTYPE=C.UTF-8, NO_COLOR=1, PAGER=cat.")
O["C20b_hook_shell_probe"] = (
    "The hook command runs as argv ['/bin/bash', '-c', <command>]: NOT a login shell (shopt login_shell = off, $- = hBc), "
    "parent = the codex process, PATH = codex-path + the launch PATH (no /etc/profile). The tool command is also "
    "'/bin/bash -c' but with the login profile's PATH.")
O["C20c_hook_shell_probe_sh"] = (
    "With SHELL=/bin/sh in codex's env the hook still ran under /bin/bash -c: the hook shell does not follow $SHELL "
    "(root's passwd shell is /bin/bash here, so bash may come from passwd).")
O["C21a_deny_1mb"] = (
    "Deny honoured: the command did not run (no made_by_bash.txt), PostToolUse did not fire. The hook engine keeps the "
    "whole reason; the function_call_output 'Command blocked by PreToolUse hook: <reason>. Command: <cmd>' (1,100,119 "
    "bytes) is then cut by the generic tool-output truncation: first 6,000 bytes + '…272030 tokens truncated…' + last "
    "6,000 bytes (12,025 chars). No 'Warning' header, no saved file. codex's stderr logged the whole reason once "
    "(ERROR codex_core::tools::router: error=Command blocked by PreToolUse hook: ...).")
_SPILL = ("Hook text over 2,500 approx tokens (approx tokens = ceil(UTF-8 bytes / 4), i.e. over 10,000 bytes) is saved whole "
          "to <temp dir>/hook_outputs/<thread id>/<uuid4>.txt and replaced by 'Warning: truncated output (original token "
          "count: <ceil(bytes/4)>)\\nTotal output lines: <lines>\\n\\n<head>…<ceil(removed bytes/4)> tokens truncated…<tail>"
          "\\n\\nFull hook output saved to: <path>'. Head and tail are 4,938 bytes each here: the byte budget is "
          "(2500 - ceil(len(footer)/4)) * 4 = (2500 - 31) * 4 = 9,876, split in half; the footer '\\n\\nFull hook output "
          "saved to: <path>' was 124 bytes. Cuts fall on char boundaries, not on words or lines.")
O["C22a_post_additional_40k"] = "PostToolUse additionalContext 40,037 bytes: spilled. " + _SPILL
O["C22b_ss_additional_40k"] = "SessionStart additionalContext 40,035 bytes: spilled (same format)."
O["C22c_ss_plain_40k"] = "SessionStart plain stdout 40,041 bytes + newline: trimmed, then spilled (file = 40,041 bytes)."
O["C22d_ups_additional_40k"] = "UserPromptSubmit additionalContext 40,036 bytes: spilled (C3n again, full text recorded)."
O["C22e_ups_plain_40k"] = "UserPromptSubmit plain stdout 40,042 bytes + newline: trimmed, then spilled."
O["C22f_ups_additional_10000_bytes"] = "Exactly 10,000 bytes (2,500 approx tokens): kept whole, no file."
O["C22g_ups_additional_10001_bytes"] = "10,001 bytes (2,501 approx tokens): spilled; '…32 tokens truncated…' (125 bytes removed)."
O["C22h_ups_additional_multibyte"] = ("5,019 chars but 10,019 bytes: spilled, so the limit counts bytes. Head 4,937 bytes "
                                      "(cut back to a char boundary), tail 4,938.")
O["C22i_ups_plain_lines"] = ("401 lines (40,017 bytes after trim): 'Total output lines: 401'; head/tail cut mid-line "
                             "(4,938 bytes each).")
