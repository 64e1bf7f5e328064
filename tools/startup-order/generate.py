#!/usr/bin/env python3
"""Regenerates host/startup-order.txt: the functions an idle `dsh serve` runs.

The release `dsh` is linked with that list as lld's `--symbol-ordering-file`
(host/build.rs), which puts those functions first in `.text`, next to each
other. Start-up and idle then touch about 2.5 MB of contiguous text instead
of pages scattered over the whole 21 MB `.text`, and the kernel's fault-around
and large page-cache folios map far less of the binary (issue 15, idle RSS).

What it does: runs `dsh serve` under valgrind's callgrind with every built-in
and the three example `.so` (the `idle_memory` bench's manifest), waits for the
socket, sends one ACP `initialize`, dumps the profile, stops the daemon, and
writes the mangled name of every function of the `dsh` binary that executed
at least one instruction, in address order. Names missing from a later build
are ignored by the linker, so a stale list costs memory, never correctness.

Run after a dependency or compiler upgrade (the mangled names carry hashes):

    cargo build --release -p dsh-host -p dsh-example-policy-gate \\
        -p dsh-example-timeout -p dsh-example-audit
    python3 tools/startup-order/generate.py target/release/dsh host/startup-order.txt

Needs valgrind (callgrind, callgrind_control) and binutils' nm.
"""

import bisect
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time


def manifest(folder, root, libs):
    plugins = [
        {"name": "bash-local"},
        {"name": "tools-fs"},
        {"name": "model-scripted", "config": {"script": f"{root}/config/demo-script.yml"}},
        {"name": "hooks-claude", "config": {"config_path": f"{root}/config/hooks/claude-settings.json"}},
        {"name": "hooks-codex", "config": {"config_path": f"{root}/config/hooks/codex-hooks.json"}},
        {"id": "policy-gate", "path": f"{libs}/libdsh_example_policy_gate.so",
         "config": {"deny": ["rm -rf /"], "tools": ["Bash"]}},
        {"id": "timeout", "path": f"{libs}/libdsh_example_timeout.so", "config": {"millis": 120000}},
        {"id": "audit", "path": f"{libs}/libdsh_example_audit.so", "config": {"path": "audit.jsonl"}},
    ]
    path = os.path.join(folder, "cordis.yml")
    with open(path, "w") as f:
        f.write(f"state_dir: {folder}/state\nsocket: {folder}/dsh.sock\nplugins: {json.dumps(plugins)}\n")
    return path


def profile(dsh, folder, root):
    config = manifest(folder, root, os.path.dirname(os.path.abspath(dsh)))
    out = os.path.join(folder, "callgrind.out")
    sock = os.path.join(folder, "dsh.sock")
    daemon = subprocess.Popen(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-instr=yes",
         "--compress-pos=no", "--compress-strings=no", dsh, "serve", "--config", config],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while not os.path.exists(sock):
            if time.monotonic() > deadline or daemon.poll() is not None:
                sys.exit("dsh serve did not open its socket under valgrind")
            time.sleep(0.2)
        client = socket.socket(socket.AF_UNIX)
        client.settimeout(120)
        client.connect(sock)
        client.sendall((json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                    "params": {"protocolVersion": 1, "clientCapabilities": {}}}) + "\n").encode())
        answer = b""
        while b"\n" not in answer:
            answer += client.recv(65536)
        time.sleep(2)
        subprocess.run(["callgrind_control", "-d", str(daemon.pid)], check=True,
                       stdout=subprocess.DEVNULL, timeout=120)
        deadline = time.monotonic() + 120
        dumps = []
        while not dumps:
            dumps = [f for f in os.listdir(folder) if f.startswith("callgrind.out.") and os.path.getsize(os.path.join(folder, f)) > 0]
            if time.monotonic() > deadline:
                sys.exit("callgrind wrote no dump")
            time.sleep(0.5)
        time.sleep(2)  # let the dump finish writing
        return os.path.join(folder, sorted(dumps)[0])
    finally:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(timeout=60)
        except subprocess.TimeoutExpired:
            daemon.kill()


def executed(dump, binary):
    """Instruction addresses callgrind saw executed in `binary`."""
    binary = os.path.realpath(binary)
    current, seen = None, set()
    for line in open(dump, errors="replace"):
        if line.startswith("ob="):
            current = os.path.realpath(line[3:].strip()) if line[3:].strip() else None
        elif current == binary:
            m = re.match(r"^(0x[0-9a-f]+)\s", line)
            if m:
                seen.add(int(m.group(1), 16))
    return seen


def names(binary, addresses):
    syms = []
    nm = subprocess.run(["nm", "-S", "--defined-only", binary], check=True,
                        capture_output=True, text=True).stdout
    for line in nm.splitlines():
        p = line.split()
        if len(p) == 4 and p[2] in "tTwW":
            syms.append((int(p[0], 16), int(p[1], 16), p[3]))
    syms.sort()
    starts = [s[0] for s in syms]
    hit = {}
    for a in addresses:
        i = bisect.bisect_right(starts, a) - 1
        if i >= 0 and syms[i][0] <= a < syms[i][0] + max(syms[i][1], 1):
            hit[syms[i][2]] = syms[i][0]
    return [n for n, _ in sorted(hit.items(), key=lambda kv: kv[1])]


def main():
    if len(sys.argv) != 3:
        sys.exit(f"usage: {sys.argv[0]} <release dsh> <output>")
    dsh, output = sys.argv[1], sys.argv[2]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with tempfile.TemporaryDirectory() as folder:
        dump = profile(dsh, folder, root)
        found = names(dsh, executed(dump, dsh))
    if len(found) < 100:
        sys.exit(f"only {len(found)} functions seen; is {dsh} the binary that ran?")
    with open(output, "w") as f:
        f.write("\n".join(found) + "\n")
    print(f"{output}: {len(found)} functions")


if __name__ == "__main__":
    main()
