#!/usr/bin/env python3
"""Run scripted Codex CLI hook scenarios against the local mock model server.

Usage: python3 runner.py [SCENARIO_PREFIX ...]     (default: all scenarios; run_all.sh wraps this
in a loopback-only network namespace)
Writes captures/<scenario>.json.  Work dirs live under $CODEX_PROBE_DIR, by default
<system temp dir>/codex-hooks-probe/.
Everything talks to 127.0.0.1 only.
"""
import glob
import hashlib
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from scenarios import SCENARIOS, ALL_EVENTS
from observations import O as OBSERVED

HERE = os.path.dirname(os.path.abspath(__file__))
HOOK = os.path.join(HERE, "hook.sh")
# the native binary of the platform package npm installed (e.g. codex-linux-x64), run directly
CODEX = (sorted(glob.glob(os.path.join(HERE, "node_modules", "@openai", "codex-*", "vendor", "*", "bin", "codex")))
         or [os.path.join(HERE, "node_modules", "@openai", "codex-linux-x64", "vendor", "x86_64-unknown-linux-musl",
                          "bin", "codex")])[0]
WORK = os.environ.get("CODEX_PROBE_DIR") or os.path.join(tempfile.gettempdir(), "codex-hooks-probe")
CAPTURES = os.path.join(HERE, "captures")
PY = sys.executable


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def hook_command(cap, label, extra=""):
    return "%s %s %s%s" % (shlex.quote(HOOK), shlex.quote(cap), shlex.quote(label),
                           (" " + extra) if extra else "")


def build_hooks(case, cap):
    """case['hooks'] : {Event: [ {matcher?, hooks:[{label, timeout?, extra?, raw?}]} ]}"""
    out = {}
    for ev, groups in case["hooks"].items():
        gl = []
        for g in groups:
            hl = []
            for h in g["hooks"]:
                cmd = h["raw"] if "raw" in h else hook_command(cap, h["label"], h.get("extra", ""))
                d = {"type": "command", "command": cmd}
                if "timeout" in h:
                    d["timeout"] = h["timeout"]
                d.update(h.get("json_extra", {}))
                hl.append(d)
            gd = {}
            if "matcher" in g:
                gd["matcher"] = g["matcher"]
            gd["hooks"] = hl
            gl.append(gd)
        out[ev] = gl
    return {"hooks": out}


def toml_str(s):
    return json.dumps(s)


def hooks_to_toml(hooks):
    lines = []
    for ev, groups in hooks["hooks"].items():
        for g in groups:
            lines.append("[[hooks.%s]]" % ev)
            if "matcher" in g:
                lines.append("matcher = %s" % toml_str(g["matcher"]))
            for h in g["hooks"]:
                lines.append("[[hooks.%s.hooks]]" % ev)
                for k, v in h.items():
                    lines.append("%s = %s" % (k, json.dumps(v)))
            lines.append("")
    return "\n".join(lines)


def truncate_item(it, limit=1500):
    s = json.dumps(it)
    if len(s) <= limit:
        return it
    it = json.loads(s)
    for c in it.get("content", []) or []:
        t = c.get("text")
        if isinstance(t, str) and len(t) > limit:
            c["text"] = t[:300] + "...[truncated %d chars]" % len(t)
    if isinstance(it.get("output"), str) and len(it["output"]) > limit:
        it["output"] = it["output"][:limit] + "...[truncated]"
    return it


def read_hooks(cap, launch_env):
    res = []
    d = os.path.join(cap, "hooks")
    if not os.path.isdir(d):
        return res
    ids = sorted({f.rsplit(".", 1)[0] for f in os.listdir(d)},
                 key=lambda x: float(x.split("-")[0]))
    for i in ids:
        p = os.path.join(d, i)
        raw = open(p + ".stdin", "rb").read()
        try:
            txt = raw.decode("utf-8")
        except UnicodeDecodeError:
            txt = raw.decode("latin-1")
        try:
            parsed = json.loads(txt)
        except Exception:
            parsed = None
        meta = {}
        for line in open(p + ".meta").read().splitlines():
            if "=" in line:
                k, v = line.split("=", 1)
                meta[k] = v
        env = {}
        for kv in open(p + ".env0", "rb").read().split(b"\0"):
            if kv and b"=" in kv:
                k, v = kv.decode("utf-8", "replace").split("=", 1)
                env[k] = v
        argv = [a.decode("utf-8", "replace") for a in open(p + ".argv0", "rb").read().split(b"\0")[:-1]]
        added = {}
        for k, v in env.items():
            if k in ("PATH", "HOME") and launch_env.get(k) != v:
                added[k] = "<changed; value omitted>"
            elif k in ("PATH", "HOME"):
                continue
            elif launch_env.get(k) != v:
                added[k] = v
        removed = sorted(k for k in launch_env if k not in env)
        res.append({
            "label": meta.get("label"),
            "hook_event_name": (parsed or {}).get("hook_event_name"),
            "stdin": txt,
            "stdin_trailing_newline": raw.endswith(b"\n"),
            "stdin_bytes": len(raw),
            "stdin_parsed": parsed,
            "argv": argv,
            "cwd": meta.get("pwd"),
            "env_names": sorted(env.keys()),
            "env": {k: env[k] for k in sorted(env)},
            "env_added_or_changed_vs_codex_launch_env": added,
            "env_removed_vs_codex_launch_env": removed,
            "t_start": float(meta.get("t_start", 0)),
            "t_end": float(meta["t_end"]) if "t_end" in meta else None,
            "exit": int(meta["exit"]) if "exit" in meta else None,
            "parent_cmd": meta.get("parent_cmd"),
        })
    return res


def run_case(case):
    name = case["name"]
    base = os.path.join(WORK, name)
    shutil.rmtree(base, ignore_errors=True)
    home = os.path.join(base, "codex_home")
    proj = os.path.join(base, "proj")
    cap = os.path.join(base, "cap")
    log = os.path.join(base, "mock")
    fakehome = os.path.join(base, "userhome")
    for d in (home, proj, cap, log, fakehome, os.path.join(cap, "behave")):
        os.makedirs(d, exist_ok=True)
    for label, snippet in case.get("behave", {}).items():
        with open(os.path.join(cap, "behave", label), "w") as f:
            f.write(snippet + "\n")
    port = free_port()
    hooks = build_hooks(case, cap)
    cfg = ['model = "mock-model"', 'model_provider = "mock"',
           'check_for_update_on_startup = false', '']
    cfg += case.get("config_top", [])
    cfg += ['[model_providers.mock]', 'name = "mock"',
            'base_url = "http://127.0.0.1:%d/v1"' % port,
            'env_key = "MOCK_API_KEY"', 'wire_api = "responses"', '']
    cfg += case.get("config_extra", [])
    where = case.get("hooks_in", "json")
    if where == "json":
        json.dump(hooks, open(os.path.join(home, "hooks.json"), "w"), indent=1)
    elif where == "toml":
        cfg.append(hooks_to_toml(hooks))
    elif where == "project":
        os.makedirs(os.path.join(proj, ".codex"), exist_ok=True)
        json.dump(hooks, open(os.path.join(proj, ".codex", "hooks.json"), "w"), indent=1)
    cfg_text = "\n".join(cfg) + "\n"
    open(os.path.join(home, "config.toml"), "w").write(cfg_text)
    for rel, content in case.get("proj_files", {}).items():
        p = os.path.join(proj, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "w").write(content)
    script_path = os.path.join(base, "script.json")
    json.dump(case["script"], open(script_path, "w"))
    mock = subprocess.Popen([PY, os.path.join(HERE, "mock_server.py"), str(port), script_path, log])
    for _ in range(50):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    launch_env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": fakehome,
        "CODEX_HOME": home,
        "MOCK_API_KEY": "dummy-key",
        "SHELL": "/bin/bash",
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "PROBE_PARENT_MARKER": "inherited-from-codex-parent",
    }
    launch_env.update(case.get("env", {}))
    runs = []
    invocations = case.get("invocations") or [{"args": case.get("args"), "prompt": case.get("prompt", "run the probe")}]
    for inv in invocations:
        argv = [CODEX, "exec", "--json", "--skip-git-repo-check"]
        argv += case.get("perm_args", ["--dangerously-bypass-approvals-and-sandbox"])
        if case.get("bypass_trust", True):
            argv.append("--dangerously-bypass-hook-trust")
        argv += inv.get("args") or []
        if inv.get("prompt") is not None:
            argv.append(inv["prompt"])
        t0 = time.time()
        try:
            p = subprocess.run(argv, cwd=proj, env=launch_env, stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=case.get("timeout", 120))
            rc, out, err = p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
        except subprocess.TimeoutExpired as e:
            rc, out, err = "TIMEOUT", (e.stdout or b"").decode("utf-8", "replace"), (e.stderr or b"").decode("utf-8", "replace")
        events = []
        for line in out.splitlines():
            try:
                events.append(json.loads(line))
            except Exception:
                events.append({"_raw": line})
        runs.append({"argv": [os.path.basename(argv[0])] + argv[1:], "exit_code": rc,
                     "wall_s": round(time.time() - t0, 3), "stdout_events": events,
                     "stderr": "\n".join(l for l in err.splitlines()
                                         if "could not create PATH aliases" not in l)})
    mock.terminate()
    mock.wait()
    reqs = []
    for f in sorted(os.listdir(log)):
        if f.startswith("req-"):
            r = json.load(open(os.path.join(log, f)))
            b = r.get("body") or {}
            reqs.append({"n": r["n"], "t": r["t"], "method": r["method"], "path": r["path"],
                         "tools": [t.get("name") or t.get("type") for t in b.get("tools", []) or []],
                         "input": [it if (case.get("untruncated_inputs") and k >= 3) else truncate_item(it)
                                   for k, it in enumerate(b.get("input", []) or [])]})
    # model requests: strip common prefix (the first 3 boilerplate items) for readability
    answers = []
    ap = os.path.join(log, "answers.jsonl")
    if os.path.exists(ap):
        answers = [json.loads(l) for l in open(ap)]
    hooks_seen = read_hooks(cap, launch_env)
    rollout_hook_lines = []
    sess = os.path.join(home, "sessions")
    for root, _, files in os.walk(sess):
        for f in files:
            for line in open(os.path.join(root, f)):
                if "hook" in line.lower() and '"role":"developer"' not in line:
                    try:
                        j = json.loads(line)
                    except Exception:
                        continue
                    s = json.dumps(j)
                    if len(s) > 3000:
                        continue
                    rollout_hook_lines.append(j)
    collected = {}
    for rel in case.get("collect_files", []):
        fp = os.path.join(base, rel)
        if not os.path.exists(fp):
            collected[rel] = None
            continue
        data = open(fp, "rb").read()
        if rel.endswith(".env0"):
            envd = {}
            for kv in data.split(b"\0"):
                if b"=" in kv:
                    k, v = kv.decode("utf-8", "replace").split("=", 1)
                    envd[k] = v
            collected[rel] = {"env": dict(sorted(envd.items())),
                              "removed_vs_codex_launch_env": sorted(k for k in launch_env if k not in envd),
                              "added_vs_codex_launch_env": sorted(k for k in envd if k not in launch_env),
                              "changed_vs_codex_launch_env": sorted(k for k in envd if k in launch_env
                                                                    and launch_env[k] != envd[k])}
        else:
            collected[rel] = data[:200000].decode("utf-8", "replace")
    saved = []
    threads = {e.get("thread_id") for r in runs for e in r["stdout_events"] if e.get("type") == "thread.started"}
    for tid in sorted(t for t in threads if t):
        for fp in sorted(glob.glob(os.path.join(tempfile.gettempdir(), "hook_outputs", tid, "*"))
                         + glob.glob(os.path.join(home, "hook_outputs", tid, "*"))):
            data = open(fp, "rb").read()
            saved.append({"path": fp, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
                          "mode": oct(os.stat(fp).st_mode & 0o777), "text": data.decode("utf-8", "replace")})
    return {
        "case": name,
        "collected_files": collected,
        "saved_hook_output_files": saved,
        "purpose": case.get("purpose", ""),
        "hooks_config_location": {"json": "$CODEX_HOME/hooks.json", "toml": "$CODEX_HOME/config.toml [hooks]",
                                  "project": "<project>/.codex/hooks.json"}[where],
        "hooks_config": hooks,
        "config_toml": cfg_text,
        "behaviors": case.get("behave", {}),
        "mock_script": case["script"],
        "codex_launch_env": {k: (v if k not in ("PATH", "HOME") else "<omitted>") for k, v in launch_env.items()},
        "codex_runs": runs,
        "hook_invocations": hooks_seen,
        "hook_invocation_order": [(h["label"], h["hook_event_name"], h["exit"]) for h in hooks_seen],
        "model_requests": reqs,
        "mock_answers": answers,
        "rollout_hook_related_lines": rollout_hook_lines[:40],
    }


def summarize(res):
    lines = [res["case"]]
    for r in res["codex_runs"]:
        lines.append("  rc=%s wall=%s" % (r["exit_code"], r["wall_s"]))
        for e in r["stdout_events"]:
            s = json.dumps(e)
            lines.append("   ev " + (s[:300]))
        if r["stderr"].strip():
            lines.append("   stderr: " + r["stderr"].strip()[:500])
    for h in res["hook_invocations"]:
        lines.append("  hook %s %s exit=%s stdin=%s" % (h["label"], h["hook_event_name"], h["exit"], h["stdin"][:200]))
    lines.append("  model requests: %d" % len([r for r in res["model_requests"] if r["method"] == "POST"]))
    return "\n".join(lines)


def main():
    sel = sys.argv[1:]
    if not os.path.exists(CODEX):
        sys.exit("codex binary not found under node_modules/@openai: run `npm install` in %s first" % HERE)
    unknown = [s for s in sel if not any(scen.startswith(s) for scen in SCENARIOS)]
    if unknown:
        sys.exit("no scenario starts with: %s (known: %s)" % (", ".join(unknown), ", ".join(SCENARIOS)))
    os.makedirs(CAPTURES, exist_ok=True)
    for scen, meta in SCENARIOS.items():
        if sel and not any(scen.startswith(s) for s in sel):
            continue
        results = []
        for case in meta["cases"]:
            res = run_case(case)
            res["observed_outcome"] = OBSERVED.get(case["name"], "(not yet described)")
            print(summarize(res), flush=True)
            results.append(res)
        out = {"scenario": scen, "description": meta["description"],
               "network_namespace_isolated": os.environ.get("IN_NETNS") == "1",
               "codex_version": subprocess.run([CODEX, "--version"], capture_output=True,
                                               text=True, env={"PATH": "/usr/bin:/bin", "CODEX_HOME": os.path.join(WORK, "vh"), "HOME": os.path.join(WORK, "vh")}).stdout.strip(),
               "how_to_read": "Per case: hooks_config (what was installed), behaviors (what each hook label did), "
                              "hook_invocations[].stdin (exact bytes Codex wrote, as a JSON string) + stdin_trailing_newline, "
                              "env_added_or_changed_vs_codex_launch_env, codex_runs (--json events), model_requests (bodies sent "
                              "to the mock; boilerplate text truncated), observed_outcome (hand-written from an earlier identical run).",
               "cases": results}
        with open(os.path.join(CAPTURES, scen + ".json"), "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
