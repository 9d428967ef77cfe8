#!/usr/bin/env bash
# bench/store/changes.sh [BUILD_DIR] [COPIES] - the change series (issue 34)
# at a million runs: a base of 8 cards x 1,000 runs made through the import
# path (gpubench-make-db, GB_BENCH_HOSTS=2), copied COPIES times (default
# 125: 1,000 cards, 1,000,000 runs) by replicate.py, then
#   1. every series built from scratch (replay_time.py: the upgrade's replay),
#   2. one card x key's 10,000 runs imported into it with and without their
#      series (gpubench-change-time ... BIG-DB): a run's series cost there,
#   3. --keep-samples 180d and its VACUUM (gpubenchd's first database check),
# and the store deleted.  About 12 GB in ${GPUBENCH_BENCH_DIR:-/tmp}.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
copies=${2:-125}
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=${GPUBENCH_BENCH_DIR:-/tmp}
base=$dir/gpubench-changes-base.db big=$dir/gpubench-changes-big.db
rm -f "$base"* "$big"*
GB_BENCH_HOSTS=2 "$build/bench/gpubench-make-db" "$base" 8000 \
  "$top/examples/h200x2_daemon/runs.ndjson" 2>/dev/null
python3 "$top/bench/store/replicate.py" "$base" "$big" "$copies"
ls -l "$big"
python3 "$top/bench/store/replay_time.py" "$build" "$big"
mkdir -p "$dir/gpubench-change-time"
"$build/bench/gpubench-change-time" "$dir/gpubench-change-time" \
  "$top/examples/h200x2_daemon/runs.ndjson" 10000 "$big" 2>/dev/null
"$build/bin/gpubenchd" --listen 127.0.0.1:0 --db "$big" --keep-samples 180d \
  --db-check-delay 0 --db-check-interval 0 >"$big.keep.log" 2>&1 &
pid=$!
until grep -q -e "--keep-samples:" -e "error" "$big.keep.log"; do sleep 2; done
kill "$pid"; wait "$pid" || true
grep -e "database check" -e "--keep-samples" "$big.keep.log"
rm -rf "$base"* "$big"* "$dir/gpubench-change-time"
