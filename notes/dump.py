import json, sys, os, glob
run = sys.argv[1]
print("=== hooks")
metas = []
for f in glob.glob(run + "/cap/*.stdin"):
    base = f[:-6]
    label = os.path.basename(base).split(".")[0]
    ts = os.path.basename(base).split(".")[1].split("_")[0]
    metas.append((int(ts), label, open(f).read()))
for ts, label, stdin in sorted(metas):
    try:
        j = json.loads(stdin)
    except Exception:
        print(label, stdin[:300]); continue
    keep = {k: v for k, v in j.items() if k not in ("session_id", "transcript_path", "cwd", "permission_mode", "prompt_id")}
    print(label, json.dumps(keep)[:3000])
print("=== requests")
prev = 0
for l in open(run + "/requests.jsonl"):
    r = json.loads(l)
    b = r.get("body", {})
    if not b.get("tools") or "messages" not in b:
        continue
    ms = b["messages"]
    print("---- request", r.get("mock_kind"), "t=", r.get("t"))
    for m in ms[max(prev, 1):]:
        print("  ", json.dumps(m)[:int(os.environ.get("W", "2500"))])
    prev = len(ms)
