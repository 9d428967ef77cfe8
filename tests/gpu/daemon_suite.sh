# daemon_suite.sh - sourced by the GPU checks that run a suite through
# gpubenchd (daemon_health_check.sh, daemon_deep_check.sh), with build, out,
# name (the files' prefix: health, deep), port and timeout set.  Starts the
# daemon on a fresh database (pid), writes the card and the suites to
# $out/${name}_log.txt (say appends to it), and defines run_suite SUITE
# LABEL MAXWAIT_S: posts the suite on every GPU, waits until no run of its
# batch is queued or running, says the wall time and saves the batch as
# $out/${name}_runs.ndjson (batch is set).
base="http://127.0.0.1:$port"
db=$(mktemp -d)/gpubench.db
log=$out/${name}_log.txt
: >"$log"
say() { echo "$*" | tee -a "$log"; }

LD_LIBRARY_PATH=${LIBS:-} "$build/bin/gpubenchd" --listen "127.0.0.1:$port" --db "$db" \
    --run-timeout "$timeout" >"$out/daemon.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
    curl -fs "$base/healthz" >/dev/null 2>&1 && break
    sleep 0.2
done
nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id,clocks.sm,temperature.gpu,power.draw --format=csv | tee -a "$log"
curl -s "$base/benchmarks" | python3 -c 'import json,sys; b=json.load(sys.stdin); print("suites:", json.dumps(b.get("suites")))' | tee -a "$log"

run_suite() {
    local t0 t1 left
    t0=$(date +%s.%N)
    curl -s -H 'Content-Type: application/json' \
        -d "{\"benchmark\":\"$1\",\"device\":\"all\",\"label\":\"$2\"}" "$base/runs" \
        >"$out/${name}_post.json"
    batch=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["batch"])' "$out/${name}_post.json")
    say "batch $batch"
    for _ in $(seq 1 "$3"); do
        left=$(curl -s "$base/runs?batch=$batch&limit=500" | python3 -c '
import json, sys
print(sum(r["status"] in ("queued", "running") for r in json.load(sys.stdin)["runs"]))')
        [ "$left" = 0 ] && break
        sleep 1
    done
    t1=$(date +%s.%N)
    say "suite wall time: $(python3 -c "print('%.1f s' % ($t1 - $t0))")"
    curl -s "$base/runs.ndjson?batch=$batch" >"$out/${name}_runs.ndjson"
}
