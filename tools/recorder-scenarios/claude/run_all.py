#!/usr/bin/env python3
"""Run the real Claude Code CLI offline against mock_api.py and capture hook ground truth.

usage: python3 run_all.py [--one-pass] [SCENARIO ...]   e.g.  python3 run_all.py S2 S3
       python3 run_all.py --notes-only
Without --one-pass (and without CC_MODEL set) it runs two passes: the CLI's default model, then
--model claude-sonnet-4-5 (captures/<S>_sonnet45.json).
Everything runs inside a fresh network namespace (unshare -n) whose only interface is
loopback, so nothing can leave the machine (set CC_CAPTURE_NO_FALLBACK=1 to refuse to run
without one). Results: captures/<scenario>.json; scratch folders: $CC_RUNS_DIR
(default <system temp dir>/cc_runs).
"""
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mock_api  # noqa: E402
from scenarios import SCENARIOS  # noqa: E402

CLI = os.path.join(HERE, "node_modules", ".bin", "claude")
# Scratch folder for the per-variant runs; CC_RUNS_DIR overrides the default <system temp dir>/cc_runs.
RUNS = os.environ.get("CC_RUNS_DIR") or os.path.join(tempfile.gettempdir(), "cc_runs")
CAPS = os.path.join(HERE, "captures")
SECRET_ENV = {"ANTHROPIC_API_KEY", "PATH", "HOME"}


def ensure_netns():
    if os.environ.get("CC_CAPTURE_IN_NETNS") == "1":
        subprocess.run(["ip", "link", "set", "lo", "up"], check=False)
        return
    if shutil.which("unshare") and subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0:
        env = dict(os.environ, CC_CAPTURE_IN_NETNS="1")
        r = subprocess.run(["unshare", "-n", sys.executable, os.path.abspath(__file__), "--one-pass"] + sys.argv[1:], env=env)
        sys.exit(r.returncode)
    if os.environ.get("CC_CAPTURE_NO_FALLBACK"):
        sys.exit("unshare -n is not available (it needs root or user namespaces); CC_CAPTURE_NO_FALLBACK is set")
    print("unshare -n is not available; running without a private network namespace (loopback only by config)")
    os.environ["CC_CAPTURE_IN_NETNS"] = "0"


def cli_version():
    try:
        return subprocess.run([CLI, "--version"], capture_output=True, text=True, timeout=60,
                              env={"PATH": os.environ["PATH"], "HOME": os.path.join(RUNS, "_vhome")}).stdout.strip()
    except Exception as e:  # pragma: no cover
        return "unknown (%s)" % e


def write(path, data, mode="w"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as f:
        f.write(data)


def parse_meta(text):
    meta, argv, signals = {}, [], []
    for line in text.splitlines():
        if "=" not in line:
            continue
        k, v = line.split("=", 1)
        if k.startswith("argv["):
            argv.append(v)
        elif k == "signal":
            signals.append(v)
        else:
            meta[k] = v
    return meta, argv, signals


def elide_text(t):
    if isinstance(t, str) and len(t) > 2500 and "MARK" not in t:
        return "<elided %d chars sha256:%s head:%r>" % (len(t), hashlib.sha256(t.encode()).hexdigest()[:16], t[:120])
    return t


def elide_messages(msgs):
    out = []
    for m in msgs:
        m = json.loads(json.dumps(m))
        c = m.get("content")
        if isinstance(c, str):
            m["content"] = elide_text(c)
        elif isinstance(c, list):
            for b in c:
                if b.get("type") == "text":
                    b["text"] = elide_text(b["text"])
        out.append(m)
    return out


def collect_hooks(run, launch_env, t0_ns):
    cap = os.path.join(run, "cap")
    if not os.path.isdir(cap):
        return []
    ids = sorted({f.rsplit(".", 1)[0] for f in os.listdir(cap) if f.endswith(".meta")})
    res = []
    for base in ids:
        label = base.split(".", 1)[0]
        meta, argv, signals = parse_meta(open(os.path.join(cap, base + ".meta")).read())
        raw = open(os.path.join(cap, base + ".stdin"), "rb").read() if os.path.exists(os.path.join(cap, base + ".stdin")) else b""
        envraw = open(os.path.join(cap, base + ".env"), "rb").read()
        env = {}
        for item in envraw.split(b"\0"):
            if b"=" in item:
                k, v = item.split(b"=", 1)
                env[k.decode()] = v.decode(errors="replace")
        txt = raw.decode("utf-8", errors="replace")
        try:
            parsed = json.loads(txt)
        except Exception:
            parsed = None
        rel = lambda k: round((int(meta[k]) - t0_ns) / 1e6, 1) if k in meta else None  # noqa: E731
        sps = [l.split("=", 1)[1] for l in open(os.path.join(cap, base + ".meta")).read().splitlines()
               if l.startswith("sleep_pid=")]
        sp = sps[-1] if sps else None
        sleep_alive = None
        if sp:
            try:
                st = open("/proc/%s/stat" % sp).read().split()
                sleep_alive = st[2] != "Z"
            except Exception:
                sleep_alive = False
        res.append({
            "label": label,
            "sleep_child_alive_when_collected": sleep_alive,
            "event": (parsed or {}).get("hook_event_name"),
            "start_ms": rel("start_ns"), "stdin_read_ms": rel("stdin_read_ns"),
            "end_ms": rel("end_ns"), "slept_ms": rel("slept_ns"),
            "completed": "end_ns" in meta, "signals": signals, "exit_code_chosen": meta.get("exit"),
            "once_skipped": meta.get("once_skip") == "1",
            "argv": argv, "cwd": meta.get("cwd"), "dollar0": meta.get("dollar0"),
            "parent_cmdline": meta.get("parent_cmdline"),
            "fds": {"stdin": meta.get("stdin_fd"), "stdout": meta.get("stdout_fd"), "stderr": meta.get("stderr_fd")},
            "pid": meta.get("pid"), "ppid": meta.get("ppid"), "pgid": meta.get("pgid"), "sid": meta.get("sid"),
            "stdin_text": txt,
            "stdin_trailing_newline": raw.endswith(b"\n"),
            "stdin_len_bytes": len(raw),
            "stdin_b64": base64.b64encode(raw).decode(),
            "stdin_json": parsed,
            "stdin_key_order": list(parsed.keys()) if isinstance(parsed, dict) else None,
            "env": {k: v for k, v in sorted(env.items()) if k not in SECRET_ENV},
            "env_added_vs_cli_launch_env": sorted(k for k in env if k not in launch_env),
            "env_changed_vs_cli_launch_env": sorted(k for k in env if k in launch_env and launch_env[k] != env[k] and k not in SECRET_ENV),
            "env_removed_vs_cli_launch_env": sorted(k for k in launch_env if k not in env),
            "env_PATH": env.get("PATH"),
            "env_HOME": env.get("HOME"),
        })
    res.sort(key=lambda h: h["start_ms"] or 0)
    return res


def strip_cc(x):
    if isinstance(x, dict):
        return {k: strip_cc(v) for k, v in x.items() if k != "cache_control"}
    if isinstance(x, list):
        return [strip_cc(i) for i in x]
    return x


def collect_requests(log_path):
    reqs = []
    if not os.path.exists(log_path):
        return reqs
    prev = None
    for line in open(log_path):
        r = json.loads(line)
        b = r.get("body") if isinstance(r.get("body"), dict) else {}
        entry = {"t": r.get("t"), "method": r["method"], "path": r["path"], "mock_kind": r.get("mock_kind"),
                 "mock_answer": r.get("mock_answer"), "stream": b.get("stream")}
        if "messages" in b:
            msgs = b["messages"]
            entry["n_messages"] = len(msgs)
            entry["tool_names"] = [t.get("name") for t in b.get("tools", [])]
            entry["messages"] = elide_messages(msgs)
            if prev is not None and strip_cc(msgs[:len(prev)]) == strip_cc(prev):
                entry["new_messages_since_previous_request"] = elide_messages(msgs[len(prev):])
            sys_blocks = b.get("system") or []
            if isinstance(sys_blocks, str):
                sys_blocks = [{"type": "text", "text": sys_blocks}]
            entry["system_blocks_with_MARK"] = [s for s in sys_blocks if "MARK" in s.get("text", "")]
            entry["system_sha256"] = hashlib.sha256(json.dumps(sys_blocks).encode()).hexdigest()[:16]
            if r.get("mock_kind", "").startswith("agentic"):
                prev = msgs
        else:
            entry["body"] = b
        reqs.append(entry)
    return reqs


def run_variant(scen, vname, v, version):
    run = os.path.join(RUNS, "%s_%s%s" % (scen, vname, os.environ.get("CC_CAPTURE_SUFFIX", "")))
    shutil.rmtree(run, ignore_errors=True)
    proj = os.path.join(run, "proj")
    home = os.path.join(run, "home")
    os.makedirs(proj)
    os.makedirs(home)
    os.makedirs(os.path.join(run, "hooks"))
    shutil.copy(os.path.join(HERE, "hooks", "hook.sh"), os.path.join(run, "hooks", "hook.sh"))
    os.chmod(os.path.join(run, "hooks", "hook.sh"), 0o755)
    ctx = {"RUN": run, "PROJ": proj, "HOOK": "bash %s/hooks/hook.sh" % run}
    settings = v["settings"](ctx) if callable(v["settings"]) else v["settings"]
    settings_text = json.dumps(settings, indent=2)
    write(os.path.join(proj, ".claude", "settings.json"), settings_text)
    for label, beh in v.get("behaviors", {}).items():
        for k, val in beh.items():
            write(os.path.join(run, "behaviors", "%s.%s" % (label, k)), str(val))
    extra_setup = v.get("setup")
    setup_files = {}
    if extra_setup:
        extra_setup(ctx)
        # keep what setup() wrote (plugin manifests, project files) so the capture is self-contained
        for root, _, files in os.walk(run):
            for fn in files:
                rel = os.path.relpath(os.path.join(root, fn), run)
                if rel.split(os.sep)[0] in ("hooks", "behaviors") or rel == os.path.join("proj", ".claude", "settings.json"):
                    continue
                with open(os.path.join(root, fn), "rb") as f:
                    setup_files[rel] = f.read(65536).decode("utf-8", errors="replace")
    script = {"steps": v.get("steps", []), "default": {"text": "Done (default)."}}
    log_path = os.path.join(run, "requests.jsonl")
    srv, _ = mock_api.start(script, log_path)
    port = srv.server_address[1]
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "LANG": "C.UTF-8",
        "SHELL": "/bin/bash",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:%d" % port,
        "ANTHROPIC_API_KEY": "sk-ant-dummy-offline",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "MARK_LAUNCH_ENV": "visible-to-hooks?",
    }
    env.update(v.get("env", {}))
    prompt = v.get("prompt", "do it")
    args = [CLI, "-p", prompt, "--output-format", "stream-json", "--verbose", "--include-hook-events",
            "--debug-file", os.path.join(run, "debug.txt"),
            "--allowedTools", v.get("allowed_tools", "Bash,Read,Write,Task")]
    extra_args = v.get("extra_args", [])
    args += extra_args(ctx) if callable(extra_args) else extra_args
    if os.environ.get("CC_MODEL"):
        args += ["--model", os.environ["CC_MODEL"]]
    t0 = time.time_ns()
    try:
        p = subprocess.run(args, cwd=proj, env=env, capture_output=True, timeout=v.get("cli_timeout", 150))
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = "timeout", e.stdout or b"", e.stderr or b""
    dur = (time.time_ns() - t0) / 1e6
    hooks_at_exit = collect_hooks(run, env, t0)  # before post_wait: which hooks' sleep children outlived the CLI
    time.sleep(v.get("post_wait", 0.3))
    srv.shutdown()
    srv.server_close()
    write(os.path.join(run, "stdout.jsonl"), out, "wb")
    write(os.path.join(run, "stderr.txt"), err, "wb")
    stream = []
    for line in out.decode(errors="replace").splitlines():
        try:
            o = json.loads(line)
        except Exception:
            o = {"_unparsed": line}
        if o.get("type") == "system" and o.get("subtype") == "init":
            o = {k: o[k] for k in ("type", "subtype", "cwd", "permissionMode", "claude_code_version", "model") if k in o}
            o["_note"] = "init message trimmed"
        stream.append(o)
    dbg = []
    dp = os.path.join(run, "debug.txt")
    if os.path.exists(dp):
        for line in open(dp, errors="replace"):
            if "hook" in line.lower():
                dbg.append(line.rstrip("\n")[:1500])
    collected = {}
    for rel in v.get("collect_files", []):
        fp = os.path.join(run, rel)
        if not os.path.exists(fp):
            collected[rel] = None
            continue
        data = open(fp, "rb").read()
        if rel.endswith(".env0"):
            envd = {}
            for item in data.split(b"\0"):
                if b"=" in item:
                    k, x = item.split(b"=", 1)
                    envd[k.decode()] = x.decode(errors="replace")
            collected[rel] = {"env": {k: x for k, x in sorted(envd.items()) if k != "ANTHROPIC_API_KEY"},
                              "removed_vs_cli_launch_env": sorted(k for k in env if k not in envd),
                              "added_vs_cli_launch_env": sorted(k for k in envd if k not in env),
                              "changed_vs_cli_launch_env": sorted(k for k in envd if k in env and env[k] != envd[k])}
        else:
            collected[rel] = data[:200000].decode("utf-8", errors="replace")
    saved = []
    import glob as _glob
    for fp in sorted(_glob.glob(os.path.join(home, ".claude", "projects", "*", "*", "tool-results", "*"))):
        if os.path.isfile(fp):
            data = open(fp, "rb").read()
            saved.append({"path": fp, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
                          "mode": oct(os.stat(fp).st_mode & 0o777), "text": data.decode("utf-8", errors="replace")})
    return {
        "description": v.get("desc", ""),
        "collected_files": collected,
        "saved_tool_result_files": saved,
        "settings_json": settings,
        "settings_location": ".claude/settings.json in the project dir (cwd)",
        "behaviors": v.get("behaviors", {}),
        "mock_script": script,
        "prompt": prompt,
        "cli_argv": [a if a != CLI else "claude" for a in args],
        "cli_exit_code": rc,
        "cli_duration_ms": round(dur, 1),
        "cli_stderr": err.decode(errors="replace"),
        "run_dir": run,
        "cli_launch_env": {k: x for k, x in env.items() if k not in ("PATH", "ANTHROPIC_API_KEY")},
        "setup_files": setup_files,
        "hook_invocations": collect_hooks(run, env, t0),
        "sleep_children_alive_at_cli_exit": {h["label"]: h["sleep_child_alive_when_collected"]
                                             for h in hooks_at_exit if h["sleep_child_alive_when_collected"] is not None},
        "model_requests": collect_requests(log_path),
        "stream_json": stream,
        "debug_log_hook_lines": dbg[:400],
    }


def notes_only():
    from notes import NOTES
    for fn in sorted(os.listdir(CAPS)):
        if not fn.endswith(".json"):
            continue
        path = os.path.join(CAPS, fn)
        d = json.load(open(path))
        scen = d["scenario"]
        d["observed_summary"] = NOTES.get(scen, "(see variants)")
        for vname, v in d["variants"].items():
            v["observed"] = NOTES.get("%s/%s" % (scen, vname), "")
        with open(path, "w") as f:
            json.dump(d, f, indent=1, ensure_ascii=False)
            f.write("\n")
    print("notes copied into", CAPS)


SECOND_PASS_MODEL = "claude-sonnet-4-5"


def main():
    if "--notes-only" in sys.argv:
        notes_only()
        return
    one_pass = "--one-pass" in sys.argv
    sys.argv = [a for a in sys.argv if a != "--one-pass"]
    if not os.path.exists(CLI):
        sys.exit("%s not found: run `npm install` in %s first" % (os.path.relpath(CLI), HERE))
    wanted = sys.argv[1:]
    unknown = [w for w in wanted if not any(s == w or s.startswith(w + "_") for s in SCENARIOS)]
    if unknown:
        sys.exit("no such scenario: %s (known: %s)" % (", ".join(unknown), ", ".join(SCENARIOS)))
    if not one_pass and not os.environ.get("CC_MODEL") and os.environ.get("CC_CAPTURE_IN_NETNS") is None:
        # pass 1: CLI default model; pass 2: classic-placement model
        env = dict(os.environ)
        r1 = subprocess.run([sys.executable, os.path.abspath(__file__), "--one-pass"] + sys.argv[1:], env=env).returncode
        env.update(CC_MODEL=SECOND_PASS_MODEL, CC_CAPTURE_SUFFIX="_sonnet45")
        r2 = subprocess.run([sys.executable, os.path.abspath(__file__), "--one-pass"] + sys.argv[1:], env=env).returncode
        sys.exit(r1 or r2)
    ensure_netns()
    os.makedirs(CAPS, exist_ok=True)
    os.makedirs(RUNS, exist_ok=True)
    version = cli_version()
    try:
        from notes import NOTES
    except Exception:
        NOTES = {}
    for scen, spec in SCENARIOS.items():
        if wanted and not any(scen == w or scen.startswith(w + "_") for w in wanted):
            continue
        out = {"scenario": scen, "title": spec["title"], "cli_version": version,
               "network_namespace_isolated": os.environ.get("CC_CAPTURE_IN_NETNS") == "1",
               "observed_summary": NOTES.get(scen, "(see variants)"), "variants": {}}
        only = [x for x in os.environ.get("CC_VARIANTS", "").split(",") if x]
        for vname, v in spec["variants"].items():
            if only and vname not in only:
                continue
            print("[%s/%s] running..." % (scen, vname), flush=True)
            res = run_variant(scen, vname, v, version)
            res["observed"] = NOTES.get("%s/%s" % (scen, vname), "")
            out["variants"][vname] = res
            print("   rc=%s %.0fms hooks=%d requests=%d" % (res["cli_exit_code"], res["cli_duration_ms"],
                                                        len(res["hook_invocations"]), len(res["model_requests"])), flush=True)
        suffix = os.environ.get("CC_CAPTURE_SUFFIX", "")
        out["model_flag"] = os.environ.get("CC_MODEL") or "(CLI default)"
        with open(os.path.join(CAPS, scen + suffix + ".json"), "w") as f:
            json.dump(out, f, indent=1, ensure_ascii=False)
            f.write("\n")


if __name__ == "__main__":
    main()
