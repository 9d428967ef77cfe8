#!/usr/bin/env bash
# perf_check.sh WORKER HEALTH_PARAMS [JUDGE] - the ctest GPU check of issue
# 16's benchmarks (label gpu).
#
# Asks the worker for its GPUs; with none it prints why and exits 77, which
# ctest reports as skipped (never as passed).  With a GPU it runs each of
# gmem_stride, hbm_bandwidth, compute_peak, pcie_bandwidth and
# p2p_bandwidth in its health form (the params the nightly suite uses,
# printed by gpubench-health-params from common/bench_spec.c) through the
# real command line, then perf_check.py asserts on what came back (see
# there for each bound and why).  With JUDGE (gpubench-judge) the daemon's
# verdict on each run is printed too (compute_peak's GEMM rows at the power
# cap should read valid with the power_capped note).  PERF_CHECK_OUT=DIR
# keeps the JSON there.
set -u
worker=${1:?usage: perf_check.sh WORKER HEALTH_PARAMS [JUDGE]}
health_params=${2:?usage: perf_check.sh WORKER HEALTH_PARAMS [JUDGE]}
judge=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
keep=${PERF_CHECK_OUT:-}
. "$here/work_dir.sh"

. "$here/need_gpu.sh"

status=0
files=()
for bench in gmem_stride hbm_bandwidth compute_peak pcie_bandwidth p2p_bandwidth; do
  params=$("$health_params" "$bench") || { echo "FAIL: no health_params for $bench"; exit 1; }
  start=$(date +%s.%N)
  if ! "$worker" run "$bench" "$params" --json --device 0 >"$work/$bench.json" 2>"$work/$bench.err"; then
    echo "FAIL: $bench $params: the run failed:"
    cat "$work/$bench.json" "$work/$bench.err"
    status=1
    continue
  fi
  end=$(date +%s.%N)
  echo "ran $bench $params in $(python3 -c "print('%.1f s' % ($end - $start))")"
  files+=("$work/$bench.json")
done
[ ${#files[@]} -gt 0 ] || exit 1
python3 "$here/perf_check.py" --gpus "$gpu_count" "${files[@]}" || status=1
if [ -n "$judge" ]; then
  echo "the daemon's verdicts (gpubench-judge):"
  "$judge" "${files[@]}" || echo "(a run is not valid: see its verdict above)"
fi
exit $status
