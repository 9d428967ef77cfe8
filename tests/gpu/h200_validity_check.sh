#!/bin/sh
# h200_validity_check.sh WORKER LOAD [LIBDIR] - the device check of issue 13
# (worker side), run on a lent H200 with the worker called directly:
#  (a) smem_stride 1..65 and [1, 32] on the idle card: ratio_cycles;
#  (b) with gpubench-load on the card: quiet=check lists the load's pid,
#      quiet=wait with a short quiet_wait_s times out, --serve says why it
#      waits in its progress lines, and quiet=wait outlasts a short load
#      and then runs;
#  (c) precision 0.002 on smem_stride within 200 samples.
# Everything lands in $OUT/validity.tar (JSON, NVML quiet traces, log).
# It changes no setting of the card.
set -u
W=$1 L=$2 LIBS=${3:-}
R=$(mktemp -d)
run() {  # run NAME PARAMS [extra env] -> $R/NAME.json, stderr in $R/NAME.err
    name=$1 params=$2
    shift 2
    env LD_LIBRARY_PATH="$LIBS" GPUBENCH_WATCH_TRACE="$R/trace_$name.txt" "$@" \
        "$W" run smem_stride "$params" --json >"$R/$name.json" 2>"$R/$name.err"
    echo "$name: exit $?"
}
nvidia-smi --query-gpu=name,driver_version,pci.bus_id,clocks.sm,clocks.mem,temperature.gpu,power.draw,utilization.gpu --format=csv >"$R/card.csv" 2>&1
cat "$R/card.csv"
run h200_validity_strides '{"strides":[1,2,4,8,16,32,33,64,65]}'
run h200_validity_1_32 '{"strides":[1,32]}'
run h200_validity_precision '{"strides":[1,2,4,8,16,32,33,64,65],"precision":0.002}'

"$L" --seconds 40 >"$R/load1.txt" 2>&1 &
LOAD=$!
echo "load pid $LOAD"
sleep 3
run h200_validity_contended_check '{"strides":[1,32],"quiet":"check"}'
run h200_validity_contended_timeout '{"strides":[1,32],"quiet":"wait","quiet_wait_s":3}'
printf '%s\n' '{"id":"serve-1","benchmark":"smem_stride","params":{"strides":[1,32],"quiet_wait_s":2}}' |
    env LD_LIBRARY_PATH="$LIBS" "$W" --serve --device 0 >"$R/h200_validity_serve.ndjson" 2>"$R/serve.err"
echo "serve: exit $?"
kill "$LOAD" 2>/dev/null
wait "$LOAD"
sleep 2
"$L" --seconds 8 >"$R/load2.txt" 2>&1 &
LOAD2=$!
echo "load 2 pid $LOAD2"
sleep 2
run h200_validity_wait_then_run '{"strides":[1,32],"quiet":"wait","quiet_wait_s":60}'
wait "$LOAD2"
run h200_validity_idle_after '{"strides":[1,32],"quiet":"wait"}'
# transpose rows carry the memory clock; the human table reads the watch
env LD_LIBRARY_PATH="$LIBS" "$W" run transpose '{"n":4096}' --json >"$R/h200_validity_transpose.json" 2>"$R/transpose.err"
echo "transpose: exit $?"
env LD_LIBRARY_PATH="$LIBS" "$W" run smem_stride '{"strides":[1,32],"quiet":"check"}' >"$R/table.txt" 2>&1
cat "$R/table.txt"
cat "$R"/load*.txt
python3 - "$R" <<'PY'
import json, math, sys, os
R = sys.argv[1]
def load(n):
    try:
        return json.load(open(os.path.join(R, n + ".json")))
    except Exception as e:
        print(n, "unreadable:", e); return None
for n in ["h200_validity_strides", "h200_validity_1_32", "h200_validity_precision"]:
    d = load(n)
    if not d: continue
    print(n, "max_ratio_error (cycles)", d["result"]["summary"]["max_ratio_error"],
          "time", d["result"]["summary"]["max_ratio_error_time"])
    for r in d["result"]["rows"]:
        g = math.gcd(int(r["stride"]), 32)
        print("  stride %3d ratio %.4f ratio_cycles %.4f (%+.2f%%) clk %.0f mem %s n %d ci [%.4f %.4f] %s" % (
            r["stride"], r["ratio"], r["ratio_cycles"], 100 * (r["ratio_cycles"] / g - 1),
            r["sm_clock_mhz_measured"], r.get("mem_clock_mhz"), r["sample_count"],
            r["ci_low_ms"], r["ci_high_ms"],
            ("half %.5f reached %s" % (r["ci_half_width"], r["precision_reached"])) if "ci_half_width" in r else ""))
    print("  watch", json.dumps(d["meta"]["watch"]))
d = load("h200_validity_transpose")
if d:
    for r in d["result"]["rows"]:
        print("  transpose", r["variant"], "mem_clock_mhz", r.get("mem_clock_mhz"),
              "throttle", r.get("throttle_reasons"), "ci", r["ci_low_ms"], r["ci_high_ms"])
for n in ["h200_validity_contended_check", "h200_validity_contended_timeout",
          "h200_validity_wait_then_run", "h200_validity_idle_after"]:
    d = load(n)
    if d:
        print(n, "ratio_cycles", [round(r["ratio_cycles"], 3) for r in d["result"]["rows"]],
              "watch", json.dumps(d["meta"]["watch"]))
PY
grep -h "message" "$R/h200_validity_serve.ndjson" | head -5
grep -h "waiting" "$R"/*.err | sort | uniq -c | head -10
cp "$0" "$R/" 2>/dev/null
tar -C "$R" -cf "$OUT/validity.tar" .
