#!/usr/bin/env bash
# daemon_check.sh [BUILD_DIR] - gpubenchd end to end on real GPUs, as a user
# drives it: start the daemon with the test-only benchmarks, post runs with
# curl on every GPU, show it surviving a faulting and a hanging kernel with
# the next run succeeding, compare the cards, and stop it with SIGTERM.
# Run from the repository root on the lent machine, e.g.
#   OUT=/tmp/d tests/gpu/daemon_check.sh build-gpu
# Writes at most 8 files to $OUT; prints a summary last.  Changes nothing
# on the card (no clocks, power limits or modes).  LIBS, if set, is a
# folder of shared libraries for gpubenchd and the worker only (the lent
# machine lacks libmicrohttpd and cJSON), so that curl keeps its own.
set -u
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
port=${PORT:-18555}
base="http://127.0.0.1:$port"
db=$(mktemp -d)/gpubench.db

LD_LIBRARY_PATH=${LIBS:-${LD_LIBRARY_PATH:-}} "$build/bin/gpubenchd" --listen "127.0.0.1:$port" --db "$db" --test-benchmarks \
    --run-timeout 240 >"$out/daemon.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
  curl -fs "$base/healthz" >/dev/null 2>&1 && break
  sleep 0.2
done
curl -s "$base/healthz"; echo

post() {  # BODY [WAIT]
  curl -s -H 'Content-Type: application/json' -d "$1" "$base/runs?wait=${2:-300}"
}
{
  echo '{"devices_before":'; curl -s "$base/devices"; echo ','
  echo '"stride_all":'
  post '{"benchmark":"smem_stride","device":"all","params":{"strides":[1,2,4,8,16,32,33,64,65]},"label":"daemon-check"}'
  echo ',"transpose_all":'
  post '{"benchmark":"transpose","device":"all","label":"daemon-check"}'
  echo ',"pattern":'
  post '{"benchmark":"smem_pattern","label":"daemon-check"}'
  echo ',"fault":'
  post '{"benchmark":"test_fault","label":"daemon-check"}' 60
  echo ',"after_fault":'
  post '{"benchmark":"smem_stride","params":{"strides":[1,32]},"label":"daemon-check"}'
  echo ',"hang":'
  post '{"benchmark":"test_hang","timeout_s":5,"label":"daemon-check"}' 60
  echo ',"after_hang":'
  post '{"benchmark":"smem_stride","params":{"strides":[1,32]},"label":"daemon-check"}'
  echo ',"compare_stride":'; curl -s "$base/compare?benchmark=smem_stride&label=daemon-check"
  echo ',"compare_transpose":'; curl -s "$base/compare?benchmark=transpose"
  echo ',"devices_after":'; curl -s "$base/devices"
  echo '}'
} >"$out/daemon_check.json"
curl -s "$base/runs.csv?label=daemon-check" >"$out/runs.csv"
curl -s "$base/runs.ndjson" >"$out/runs.ndjson"

kill -TERM "$pid"
wait "$pid"
echo "gpubenchd exit status after SIGTERM: $?"

echo "==== the worker's own table (no daemon) ===="
LD_LIBRARY_PATH=${LIBS:-${LD_LIBRARY_PATH:-}} "$build/bin/gpubench-worker" run smem_stride '{"strides":[1,2,4,32,33]}' 2>/dev/null
LD_LIBRARY_PATH=${LIBS:-${LD_LIBRARY_PATH:-}} "$build/bin/gpubench-worker" run transpose '{"n":8192}' 2>/dev/null

python3 "$here/daemon_summary.py" "$out/daemon_check.json" | tee "$out/summary.txt"
