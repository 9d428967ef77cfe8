# check_common.sh - what the whole-card GPU checks share; sourced, not run,
# by h200_check.sh and h200_counters_check.sh with the worker as $1.  Sets
# worker, here, out (OUT, or a new temporary folder), sends everything
# printed to $out/log.txt as well, and defines section and run_json.
set -u
worker=${1:-${WORKER:-build-gpu/bin/gpubench-worker}}
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
exec > >(tee -a "$out/log.txt") 2>&1

section() { printf '\n==== %s ====\n' "$*"; }
run_json() {  # NAME PARAMS FILE
  "$worker" run "$1" "$2" --json >"$out/$3" || echo "RUN FAILED: $1 $2 (rc $?)"
}
