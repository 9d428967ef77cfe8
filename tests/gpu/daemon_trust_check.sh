#!/usr/bin/env bash
# daemon_trust_check.sh BUILD_DIR - issues 12 and 13 through gpubenchd on a
# real GPU, as a user drives it with curl:
#  1. runs on the idle card (quiet: wait, the default): stored valid, with
#     every ratio_cycles against gcd(stride, 32);
#  2. runs beside another process's kernels (gpubench-load): quiet=check is
#     stored invalid (contended, with the load's pid); quiet=wait with a
#     short quiet_wait_s is busy_start + contended; quiet=wait while the
#     load ends waits (its progress says why), then runs valid;
#  3. a second daemon on the same database is refused, naming the pid;
#  4. kill -9 of the daemon while its worker is hung in a kernel
#     (test_hang): no worker is left and the card has no process of ours a
#     few seconds later; a new daemon marks the run interrupted and runs
#     the next one.
# Run from the repository root on the lent machine; LIBS is a folder of
# shared libraries for gpubenchd and the worker only (so that curl keeps
# its own).  Writes at most 8 files to $OUT; prints a summary last.  It
# changes no setting of the card.
set -u
build=${1:-build}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
port=${PORT:-18556}
base="http://127.0.0.1:$port"
dir=$(mktemp -d)
db=$dir/gpubench.db
runs=$dir/runs
mkdir -p "$runs"
log=$out/trust_log.txt
: >"$log"
say() { echo "$*" | tee -a "$log"; }

start_daemon() {  # LOGFILE -> $pid
    LD_LIBRARY_PATH=${LIBS:-} "$build/bin/gpubenchd" --listen "127.0.0.1:$port" --db "$db" \
        --test-benchmarks --run-timeout 240 >>"$1" 2>&1 &
    pid=$!
    for _ in $(seq 1 300); do
        curl -fs "$base/healthz" >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    say "daemon did not answer"
    return 1
}
post() {  # NAME BODY [WAIT] -> the run's JSON in $runs/NAME.json
    curl -s -H 'Content-Type: application/json' -d "$2" "$base/runs?wait=${3:-200}" >"$runs/$1.json"
    python3 - "$runs/$1.json" "$1" <<'EOF' | tee -a "$log"
import json, math, sys
r = json.load(open(sys.argv[1]))
v = r.get("validity") or {}
codes = ",".join(x["code"] for x in v.get("reasons", []))
pids = [p.get("pid") for x in v.get("reasons", []) for p in x.get("processes", [])]
line = "%-22s %-9s valid=%s %s %s" % (sys.argv[2], r.get("status"), v.get("valid"), codes,
                                     ("pids=%s" % pids) if pids else "")
rows = ((r.get("results") or {}).get("rows")) or []
worst = 0.0
for row in rows:
    if "ratio_cycles" in row and "stride" in row:
        pred = math.gcd(int(row["stride"]), 32)
        worst = max(worst, abs(row["ratio_cycles"] / pred - 1))
if rows and "ratio_cycles" in rows[0]:
    line += " worst |ratio_cycles/gcd - 1| = %.4f%%" % (100 * worst)
print(line)
EOF
}

start_daemon "$out/daemon.log" || exit 1
nvidia-smi --query-gpu=name,driver_version,pci.bus_id,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee -a "$log"
curl -s "$base/healthz" | tee -a "$log"; echo | tee -a "$log"

say "== 1. idle card"
post idle_strides '{"benchmark":"smem_stride","params":{"strides":[1,2,4,8,16,32,33,64,65]},"label":"trust-check"}'
post idle_1_32 '{"benchmark":"smem_stride","params":{"strides":[1,32]},"label":"trust-check"}'

say "== 2. beside another process's kernels"
"$build/bin/gpubench-load" --seconds 45 >"$dir/load1.txt" 2>&1 &
load=$!
say "load pid $load"
sleep 3
post contended_check '{"benchmark":"smem_stride","params":{"strides":[1,32],"quiet":"check"},"label":"trust-check"}'
post contended_timeout '{"benchmark":"smem_stride","params":{"strides":[1,32],"quiet":"wait","quiet_wait_s":3},"label":"trust-check"}'
kill "$load" 2>/dev/null; wait "$load" 2>/dev/null
sleep 2
"$build/bin/gpubench-load" --seconds 10 >"$dir/load2.txt" 2>&1 &
load=$!
say "load pid $load (10 s)"
sleep 2
curl -s -H 'Content-Type: application/json' -d '{"benchmark":"smem_stride","params":{"strides":[1,32]},"label":"trust-check"}' \
    "$base/runs" >"$dir/waiting.json"
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$dir/waiting.json")
sleep 3
curl -s "$base/runs/$id" | python3 -c 'import json,sys; r=json.load(sys.stdin); print("while waiting:", r["status"], (r.get("progress") or {}).get("message"))' | tee -a "$log"
curl -s "$base/runs/$id?wait=120" >"$runs/waited_then_ran.json"
wait "$load" 2>/dev/null
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); w=r["meta"]["watch"]; print("waited_then_ran", r["status"], "valid=%s" % r["validity"]["valid"], "waited_s=%.1f" % w["quiet"]["waited_s"], "found=%s" % w["quiet"]["found"])' "$runs/waited_then_ran.json" | tee -a "$log"
curl -s "$base/runs?valid=false&label=trust-check" | python3 -c 'import json,sys; print("GET /runs?valid=false:", len(json.load(sys.stdin)["runs"]), "runs")' | tee -a "$log"
curl -s "$base/compare?benchmark=smem_stride&label=trust-check" | python3 -c 'import json,sys; c=json.load(sys.stdin); print("compare excluded_invalid:", c.get("excluded_invalid"))' | tee -a "$log"

say "== 3. a second daemon on the same database"
LD_LIBRARY_PATH=${LIBS:-} timeout 20 "$build/bin/gpubenchd" --listen "127.0.0.1:$((port + 1))" \
    --db "$db" >"$dir/second.log" 2>&1
say "second daemon exit status $? (first is pid $pid):"
tee -a "$log" <"$dir/second.log"

say "== 4. kill -9 with the worker hung in a kernel"
curl -s -H 'Content-Type: application/json' -d '{"benchmark":"test_hang","timeout_s":200}' "$base/runs" >"$dir/hang.json"
hang=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$dir/hang.json")
for _ in $(seq 1 100); do
    st=$(curl -s "$base/runs/$hang" | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])')
    [ "$st" = running ] && break
    sleep 0.2
done
sleep 3
say "hang run $hang: $st; workers before: $(pgrep -f gpubench-worker | tr '\n' ' ')"
nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader | tee -a "$log"
kill -9 "$pid"
sleep 5
left=$(pgrep -f gpubench-worker | tr '\n' ' ')
say "5 s after kill -9: workers left: '${left}'"
say "compute processes on the card: '$(nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader | tr '\n' ' ')'"
start_daemon "$out/daemon2.log" || exit 1
curl -s "$base/runs/$hang" | python3 -c 'import json,sys; r=json.load(sys.stdin); print("hang run after restart:", r["status"], (r.get("error") or {}).get("code"))' | tee -a "$log"
post after_restart '{"benchmark":"smem_stride","params":{"strides":[1,32]},"label":"trust-check"}'
curl -s "$base/runs.ndjson?label=trust-check" >"$out/trust_runs.ndjson"
kill -TERM "$pid"; wait "$pid"
say "gpubenchd exit status after SIGTERM: $?"
tar -C "$runs" -cf "$out/trust_runs.tar" .
