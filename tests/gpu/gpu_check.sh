#!/usr/bin/env bash
# gpu_check.sh WORKER - the ctest GPU check (label gpu).
#
# Asks the worker for its GPUs; with none it prints why and exits 77, which
# ctest reports as skipped (never as passed).  With a GPU it runs the three
# benchmarks with small parameters through the real command line, checks
# the ratios against the predictions, the verification and the ceiling,
# then the --serve protocol (errors, progress, result) and the sticky-error
# path (an illegal address: reported by name, then the worker exits).
set -u
worker=${1:?usage: gpu_check.sh WORKER}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

. "$here/need_gpu.sh"

status=0
"$worker" run smem_stride '{"strides":[1,2,4,32,33],"samples":5}' --json >"$work/stride.json" || status=1
"$worker" run smem_pattern '{"samples":5}' --json >"$work/pattern.json" || status=1
"$worker" run transpose '{"n":4096,"samples":5}' --json >"$work/transpose.json" || status=1
[ $status = 0 ] || { echo "FAIL: a run failed"; exit 1; }
python3 "$here/check_results.py" results ctest "$work/stride.json" "$work/pattern.json" \
  "$work/transpose.json" || status=1
# Hardware counters where the driver allows them (SKIP with the reason where not).
python3 "$here/counters_check.py" ctest "$work/stride.json" "$work/pattern.json" \
  "$work/transpose.json" || status=1

printf '%s\n' '{"id":"a","benchmark":"nosuch"}' \
  '{"id":"b","benchmark":"smem_stride","params":{"stides":[1]}}' \
  '{"id":"c","benchmark":"smem_stride","params":{"strides":[1,32],"samples":3}}' |
  "$worker" --serve --device 0 >"$work/serve.out" 2>"$work/serve.err"
python3 "$here/check_results.py" serve "$work/serve.out" $? || status=1

printf '%s\n' '{"id":"f","benchmark":"test_fault"}' '{"id":"g","benchmark":"smem_stride"}' |
  "$worker" --serve --device 0 >"$work/fault.out" 2>"$work/fault.err"
python3 "$here/check_results.py" fault "$work/fault.out" $? || status=1
exit $status
