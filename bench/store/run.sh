#!/usr/bin/env bash
# bench/store/run.sh [BUILD_DIR] [COUNT] - makes (once) a database of COUNT
# runs (default 1,000,000) through the import path, then measures it with
# measure.py.  The database is kept at ${GPUBENCH_BENCH_DB:-/tmp/gpubench-COUNT.db}
# (about 11 kB a run: 1M runs are about 11 GB and ten minutes to make).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
count=${2:-1000000}
top=$(cd "$(dirname "$0")/../.." && pwd)
db=${GPUBENCH_BENCH_DB:-/tmp/gpubench-$count.db}
if [ ! -f "$db" ]; then
  "$build/bench/gpubench-make-db" "$db" "$count" "$top/examples/h200x2_daemon/runs.ndjson"
fi
python3 "$top/bench/store/measure.py" "$build" "$db"
