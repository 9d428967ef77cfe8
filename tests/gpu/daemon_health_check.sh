#!/usr/bin/env bash
# daemon_health_check.sh BUILD_DIR - the health suite through gpubenchd on
# every GPU of the node, as a lab runs it every night:
#   curl -H 'Content-Type: application/json' -d '{"benchmark":"health","device":"all"}' .../runs
# then every run of the batch to its end: status, validity, how long each
# took, the suite's wall time per card, and whether the run that needs
# every GPU (p2p_bandwidth) ran alone.  Also the command-line client and a
# markdown report on the real card.
# Run from the repository root on the lent machine; LIBS is a folder of
# shared libraries for gpubenchd, the worker and the client only.  Writes
# at most 8 files to $OUT; prints a summary last.  It changes no setting of
# the card.
set -u
build=${1:-build}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
port=${PORT:-18557}
name=health
timeout=240
. "$(dirname "$0")/daemon_suite.sh"
run_suite health nightly 600
python3 - "$out/health_runs.ndjson" <<'EOF' | tee -a "$log"
import json, sys
from datetime import datetime

def t(s):
    return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()

runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
per_card = {}
for r in sorted(runs, key=lambda r: (r["device"]["index"], r["started_at"] or "")):
    d = r["device"]["index"]
    took = t(r["finished_at"]) - t(r["started_at"]) if r.get("started_at") and r.get("finished_at") else float("nan")
    per_card.setdefault(d, []).append(took)
    v = (r.get("validity") or {})
    codes = ",".join(x["code"] for x in v.get("reasons", []))
    rows = (r.get("results") or {}).get("rows") or []
    shares = [x.get("share_of_peak") for x in rows if isinstance(x.get("share_of_peak"), (int, float))]
    best = ("best share of peak %.1f%%" % (100 * max(shares))) if shares else ""
    err = (r.get("error") or {}).get("code") or ""
    print("GPU %d %-15s %-6s %6.1f s valid=%s %s %s %s" % (d, r["benchmark"], r["status"], took,
          v.get("valid"), codes, best, err))
for d, ts in sorted(per_card.items()):
    print("GPU %d: %d runs, %.1f s of runs" % (d, len(ts), sum(ts)))
p2p = [r for r in runs if r["benchmark"] == "p2p_bandwidth"]
for p in p2p:
    a, b = t(p["started_at"]), t(p["finished_at"])
    overlap = [r["benchmark"] + "@GPU%d" % r["device"]["index"] for r in runs
               if r is not p and r.get("started_at") and r.get("finished_at")
               and t(r["started_at"]) < b and t(r["finished_at"]) > a]
    print("p2p_bandwidth ran alone on the node:", not overlap, overlap)
EOF

say "== the client"
LD_LIBRARY_PATH=${LIBS:-} GPUBENCH_URL=$base "$build/bin/gpubench" run smem_stride --strides 1,2,32,33 --wait 2>&1 | tee -a "$log"
say "client exit status: ${PIPESTATUS[0]}"
id=$(curl -s "$base/runs?benchmark=smem_stride&limit=1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
curl -s "$base/runs/$id.md" | tee -a "$log"
curl -s "$base/metrics" >"$out/metrics.txt"
kill -TERM "$pid"
wait "$pid"
say "gpubenchd exit status after SIGTERM: $?"
