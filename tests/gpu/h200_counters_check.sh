#!/usr/bin/env bash
# h200_counters_check.sh [WORKER] - the GPU check of issue 7 (hardware
# counters), for the lent H200 or any GPU whose driver allows profiling.
# Run from the repository root, e.g.
#   OUT=/tmp/c tests/gpu/h200_counters_check.sh build-gpu/bin/gpubench-worker
#
# Runs the benchmarks with counters: on through the worker's real command
# line and judges them (counters_check.py h200): every row's measured bank
# conflicts within 1% of requests x (degree - 1), tile32 32-way, tile33 and
# the swizzle none, the broadcast none.  Then checks that reading counters
# does not move the timings (the same sweep with counters: off), and the
# unavailable path (no libcupti: auto still succeeds with null counters and
# a reason; on fails, naming it).  Reads the card, changes nothing on it.
# Writes at most 8 files to $OUT.
. "$(dirname "$0")/check_common.sh"

section "card and profiling permission, as found ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv || true
grep -i profiling /proc/driver/nvidia/params || echo "no /proc/driver/nvidia/params"
id -u
ls -l /usr/local/cuda*/lib64/libcupti* /usr/local/cuda*/extras/CUPTI/lib64/libcupti* 2>/dev/null
ldconfig -p | grep -E 'cupti|nvperf' || true

section "counters: on"
run_json smem_stride '{"counters":"on"}' smem_stride.json
run_json smem_pattern '{"counters":"on"}' smem_pattern.json
run_json smem_pattern "{\"words\":[$(seq -s, 0 32 992)],\"counters\":\"on\"}" smem_pattern_conflict.json
run_json transpose '{"counters":"on"}' transpose.json

section "judged"
python3 "$here/counters_check.py" h200 "$out/smem_stride.json" "$out/smem_pattern.json" \
  "$out/smem_pattern_conflict.json" "$out/transpose.json" --write "$out/checks.json"
judged=$?

section "the same as people see them (counters on; strides 64 and 65 too)"
"$worker" run smem_stride '{"strides":[1,2,4,8,16,32,33,64,65],"counters":"on"}'
"$worker" run transpose '{"counters":"on","samples":10}'

section "timings undisturbed: the default sweep again with counters: off"
run_json smem_stride '{"counters":"off"}' smem_stride_off.json
python3 - "$out/smem_stride.json" "$out/smem_stride_off.json" <<'PY'
import json, sys
on, off = (json.load(open(p))["result"]["rows"] for p in sys.argv[1:3])
worst = max(abs(a["median_ms"] / b["median_ms"] - 1) for a, b in zip(on, off))
print("%-5s counters on vs off: medians within 2%%: worst %.2f%%"
      % ("PASS" if worst <= 0.02 else "MISS", 100 * worst))
PY

section "unavailable: no libcupti (GPUBENCH_CUPTI_LIBRARY=/nonexistent)"
GPUBENCH_CUPTI_LIBRARY=/nonexistent/libcupti.so "$worker" run smem_stride \
  '{"strides":[1,32],"samples":3}' --json >"$out/nolib.json"
echo "auto: rc $?; meta.counters:"
python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["meta"]["counters"]; print(json.dumps(m, indent=1))' "$out/nolib.json"
GPUBENCH_CUPTI_LIBRARY=/nonexistent/libcupti.so "$worker" run smem_stride \
  '{"strides":[1,32],"samples":3,"counters":"on"}'
echo "on: rc $? (1 expected: the run fails, saying why)"

section "done: judged rc=$judged"
exit $judged
