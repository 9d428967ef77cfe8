#!/usr/bin/env bash
# daemon_canary_check.sh BUILD_DIR - issue 24 on a real GPU, as a lab runs
# it: gpubenchd with `--canary health@24h`, started while another process
# (gpubench-load) keeps the card busy, so the canary is deferred and says
# why; once the load ends and the card has been quiet for --canary-idle,
# the health suite runs as the canary, each health run is judged against
# the card model's floors (checks), and `gpubench check` answers for the
# node (exit status, first line, --textfile).  Meanwhile
# `gpubench-worker watch` records two minutes of what the card reports
# through NVML between runs (the stand-in NVML's fixture).
# On a node of several GPUs only GPU 0 is kept busy: the others' canaries
# run after --canary-idle, the node's p2p canary once GPU 0 is quiet too.
# Run from the repository root on the lent machine; LIBS is a folder of
# shared libraries for gpubenchd, the worker and the client only.  Writes
# at most 8 files to $OUT; prints a summary last.  It changes no setting of
# the card.
set -u
build=${1:-build}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
port=${PORT:-18558}
base="http://127.0.0.1:$port"
dir=$(mktemp -d)
db=$dir/gpubench.db
log=$out/canary_log.txt
: >"$log"
say() { echo "$*" | tee -a "$log"; }
idle=${CANARY_IDLE:-60s}
load_s=${LOAD_S:-75}

nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id,power.limit,clocks.max.sm \
    --format=csv | tee -a "$log"
# Two minutes of NVML readings of GPU 0, load and canary included.
LD_LIBRARY_PATH=${LIBS:-} "$build/bin/gpubench-worker" watch --device 0 --seconds 120 \
    --interval 1 >"$out/h200_watch_readings.ndjson" 2>"$dir/watch.err" &
watch_pid=$!
"$build/bin/gpubench-load" --device 0 --seconds "$load_s" >"$dir/load.txt" 2>&1 &
load_pid=$!
sleep 3
say "gpubench-load: $(head -1 "$dir/load.txt")"
LD_LIBRARY_PATH=${LIBS:-} "$build/bin/gpubenchd" --listen "127.0.0.1:$port" --db "$db" \
    --run-timeout 240 --watch-interval 5 --canary health@24h --canary-idle "$idle" \
    >"$out/daemon.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
    curl -fs "$base/healthz" >/dev/null 2>&1 && break
    sleep 0.2
done
t0=$(date +%s)
: >"$dir/canaries_seen.ndjson"
# While the load runs: the canary is deferred, saying why.
while kill -0 "$load_pid" 2>/dev/null; do
    curl -s "$base/canaries" >>"$dir/canaries_seen.ndjson"; echo >>"$dir/canaries_seen.ndjson"
    sleep 5
done
say "load ended after $(( $(date +%s) - t0 )) s of daemon time"
curl -s "$base/canaries" >"$dir/canaries_after_load.json"
# Then: quiet for $idle, every card's canary (and on a node of several
# GPUs the node's p2p canary, once every card is quiet) to its end.
for _ in $(seq 1 480); do
    curl -s "$base/canaries" | python3 -c '
import json, sys
c = json.load(sys.stdin)
entries = [k for card in c["cards"] for k in card["canaries"]] + c.get("node", [])
ended = all(k["last_run"] and k["last_run"]["outcome"] not in ("queued", "running")
            for k in entries)
sys.exit(0 if entries and ended else 1)' && break
    sleep 1
done
say "canary suite ended $(( $(date +%s) - t0 )) s after the daemon started"
curl -s "$base/canaries" >"$dir/canaries_end.json"
curl -s "$base/runs.ndjson?label=canary" >"$out/canary_runs.ndjson"
curl -s "$base/cards" >"$dir/cards.json"
curl -s "$base/coverage?max_age=24h" >"$dir/coverage.json"
uuid=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["cards"]; print(c[0]["uuid"] if c else "")' "$dir/cards.json")
curl -s "$base/cards/$uuid" >"$dir/card.json"
curl -s "$base/cards/$uuid/events" >"$dir/events.json"
mkdir -p "$dir/textfile"
LD_LIBRARY_PATH=${LIBS:-} "$build/bin/gpubench" --url "$base" check --textfile "$dir/textfile" \
    >"$dir/check.txt" 2>&1
echo "gpubench check exit status $?" >>"$dir/check.txt"
curl -s "$base/metrics" | grep -E '^gpubench_(card|coverage|canar|node)' >"$dir/metrics.txt"
# A canary run as `gpubench show` prints it (validity, verdicts, rows, checks).
first=$(python3 -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(next((x["id"] for x in r if x["benchmark"] == "hbm_bandwidth"), ""))' "$out/canary_runs.ndjson")
LD_LIBRARY_PATH=${LIBS:-} "$build/bin/gpubench" --url "$base" show "$first" >"$dir/show.txt" 2>&1
wait "$watch_pid"
kill "$pid"; wait "$pid"
python3 - "$dir" "$out" <<'PYEOF' | tee -a "$log"
import json, os, sys
d, out = sys.argv[1], sys.argv[2]
seen = [json.loads(l) for l in open(os.path.join(d, "canaries_seen.ndjson")) if l.strip()]
for c in seen:
    for card in c.get("cards", []):
        for k in card.get("canaries", []):
            print("while loaded: GPU %s %s deferred %s: %s" % (card.get("index"), k.get("benchmark"),
                  (k.get("deferred") or {}).get("count"), (k.get("deferred") or {}).get("reason")))
print("canaries at the end:", open(os.path.join(d, "canaries_end.json")).read()[:2500])
runs = [json.loads(l) for l in open(os.path.join(out, "canary_runs.ndjson")) if l.strip()]
for r in sorted(runs, key=lambda r: r.get("started_at") or ""):
    v = r.get("validity") or {}
    print("GPU %s %-15s %-9s %s label=%s valid=%s" % (r["device"]["index"], r["benchmark"], r["status"],
          (r.get("started_at") or "")[11:19], r.get("label"), v.get("valid")))
    for c in r.get("checks") or []:
        print("   %-22s %9.2f %-8s floor %9s pass=%s" % (c["row"], c["value"], c["unit"],
              "%.2f" % c["floor"] if c.get("floor") is not None else "none", c["pass"]))
print("card:", open(os.path.join(d, "card.json")).read()[:3000])
print("coverage:", open(os.path.join(d, "coverage.json")).read()[:2000])
print("events:", open(os.path.join(d, "events.json")).read()[:1500])
print(open(os.path.join(d, "check.txt")).read())
print("gpubench show:\n" + open(os.path.join(d, "show.txt")).read())
for f in os.listdir(os.path.join(d, "textfile")):
    print("textfile", f, ":\n" + open(os.path.join(d, "textfile", f)).read())
print(open(os.path.join(d, "metrics.txt")).read()[:3000])
n = sum(1 for _ in open(os.path.join(out, "h200_watch_readings.ndjson")))
print("watch readings recorded:", n)
PYEOF
cp "$dir/canaries_seen.ndjson" "$out/canaries_seen.txt"
ls -la "$out"
