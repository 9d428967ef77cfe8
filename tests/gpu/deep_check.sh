#!/usr/bin/env bash
# deep_check.sh WORKER - the ctest GPU check of issue 32's deep checks
# (label gpu): known_answer (10 s, every kind), memtest (its defaults: 90%
# of free memory, four patterns) and soak (20 s, both loads) through the
# real command line, then deep_check.py asserts on what came back (see
# there for each bound and why).  Skipped (exit 77, saying why) where no
# GPU is found.  DEEP_CHECK_OUT=DIR keeps the JSON there.
set -u
worker=${1:?usage: deep_check.sh WORKER}
here=$(cd "$(dirname "$0")" && pwd)
keep=${DEEP_CHECK_OUT:-}
. "$here/work_dir.sh"

. "$here/need_gpu.sh"

runs=("known_answer {\"seconds\":10}" "memtest {}" "soak {\"seconds\":20}")
for run in "${runs[@]}"; do
  bench=${run%% *}
  params=${run#* }
  start=$(date +%s.%N)
  if ! "$worker" run "$bench" "$params" --json --device 0 >"$work/$bench.json" 2>"$work/$bench.err"; then
    echo "FAIL: $bench $params: the run failed:"
    cat "$work/$bench.json" "$work/$bench.err"
    exit 1
  fi
  end=$(date +%s.%N)
  echo "ran $bench $params in $(python3 -c "print('%.1f s' % ($end - $start))")"
done
python3 "$here/deep_check.py" "$work/known_answer.json" "$work/memtest.json" "$work/soak.json"
