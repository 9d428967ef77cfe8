#!/usr/bin/env bash
# daemon_deep_check.sh BUILD_DIR - the deep suite (health_deep: known_answer,
# memtest, soak, then the health members) through gpubenchd on every GPU, as a
# lab's weekly canary runs it:
#   curl -H 'Content-Type: application/json' -d '{"benchmark":"health_deep","device":"all"}' .../runs
# then every run of the batch to its end, the suite's wall time, each run's
# status, validity and failed checks, the card's coverage and
# `gpubench check`.  Run from the repository root on the lent machine; LIBS
# is a folder of shared libraries for gpubenchd, the worker and the client.
# Writes at most 6 files to $OUT; it changes no setting of the card.
set -u
build=${1:-build}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
port=${PORT:-18558}
base="http://127.0.0.1:$port"
db=$(mktemp -d)/gpubench.db
log=$out/deep_log.txt
: >"$log"
say() { echo "$*" | tee -a "$log"; }

LD_LIBRARY_PATH=${LIBS:-} "$build/bin/gpubenchd" --listen "127.0.0.1:$port" --db "$db" \
    --run-timeout 600 >"$out/daemon.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
    curl -fs "$base/healthz" >/dev/null 2>&1 && break
    sleep 0.2
done
nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id,clocks.sm,temperature.gpu,power.draw --format=csv | tee -a "$log"
curl -s "$base/benchmarks" | python3 -c 'import json,sys; b=json.load(sys.stdin); print("suites:", json.dumps(b.get("suites")))' | tee -a "$log"
t0=$(date +%s.%N)
curl -s -H 'Content-Type: application/json' -d '{"benchmark":"health_deep","device":"all","label":"weekly"}' "$base/runs" >"$out/deep_post.json"
batch=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["batch"])' "$out/deep_post.json")
say "batch $batch"
for _ in $(seq 1 900); do
    left=$(curl -s "$base/runs?batch=$batch&limit=500" | python3 -c '
import json, sys
print(sum(r["status"] in ("queued", "running") for r in json.load(sys.stdin)["runs"]))')
    [ "$left" = 0 ] && break
    sleep 1
done
t1=$(date +%s.%N)
say "suite wall time: $(python3 -c "print('%.1f s' % ($t1 - $t0))")"
curl -s "$base/runs.ndjson?batch=$batch" >"$out/deep_runs.ndjson"
python3 - "$out/deep_runs.ndjson" <<'PY' | tee -a "$log"
import json, sys
from datetime import datetime
t = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
for r in sorted((json.loads(l) for l in open(sys.argv[1]) if l.strip()), key=lambda r: r["started_at"] or ""):
    took = t(r["finished_at"]) - t(r["started_at"]) if r.get("started_at") and r.get("finished_at") else float("nan")
    v = r.get("validity") or {}
    failed = [c["row"] for c in (r.get("checks") or []) if not c.get("pass")]
    print("%-15s %-6s %5.1f s valid=%s reasons=%s failed_checks=%s" % (r["benchmark"], r["status"], took,
          v.get("valid"), [x.get("code") for x in v.get("reasons", [])], failed))
    s = (r.get("results") or {}).get("summary") or {}
    if r["benchmark"] == "known_answer":
        print("   mismatches", s.get("mismatches"), "sms", s.get("sms_covered"), "/", s.get("sm_count"))
    if r["benchmark"] == "memtest":
        print("   errors", s.get("errors"), "share_of_memory", s.get("share_of_memory"), "memcpy GB/s", s.get("memcpy_gbps"),
              [(x["label"], round(x.get("value") or 0), x.get("share_of_memcpy")) for x in r["results"]["rows"]])
    if r["benchmark"] == "soak":
        print("   sustained", s.get("sustained_share"), "max temp", s.get("max_temperature_c"), "slowdown at",
              s.get("first_slowdown_s"), s.get("first_slowdown_reason"), "power_capped", s.get("power_capped"))
PY
curl -s "$base/coverage" >"$out/coverage.json"
LD_LIBRARY_PATH=${LIBS:-} "$build/bin/gpubench" --url "$base" check 2>&1 | tee -a "$log"
say "check exit: ${PIPESTATUS[0]}"
kill -TERM "$pid"
wait "$pid"
say "daemon exit: $?"
