#!/usr/bin/env bash
# record_examples.sh BUILD_DIR - measures again, on the lent GPU machine,
# everything examples/ holds from the daemon: the worker's checks
# (gpu_check.sh, perf_check.sh), the nightly health suite through gpubenchd
# (daemon_health_check.sh), the trust check (daemon_trust_check.sh) and a
# canary deferred by another process, then run (daemon_canary_check.sh), each
# into a folder of its own, then packs them into $OUT/examples.tgz (the
# lent machine gives back at most 8 files).  LIBS as the scripts take it.
# Run from the repository root; it changes no setting of the card.
set -u
build=${1:-build}
out=${OUT:-$(mktemp -d)}
work=$(mktemp -d)
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work/card" "$work/health" "$work/trust" "$work/canary"
nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id,power.limit,clocks.max.sm \
    --format=csv >"$work/card/card.txt" 2>&1
git rev-parse --short HEAD >>"$work/card/card.txt" 2>/dev/null
LD_LIBRARY_PATH=${LIBS:-} "$here/gpu_check.sh" "$build/bin/gpubench-worker" \
    >"$work/card/gpu_check.txt" 2>&1
echo "gpu_check exit status $?" | tee -a "$work/card/gpu_check.txt"
LD_LIBRARY_PATH=${LIBS:-} "$here/perf_check.sh" "$build/bin/gpubench-worker" \
    "$build/bin/gpubench-health-params" "$build/bin/gpubench-judge" \
    >"$work/card/gpu_perf_check.txt" 2>&1
echo "perf_check exit status $?" | tee -a "$work/card/gpu_perf_check.txt"
OUT=$work/health "$here/daemon_health_check.sh" "$build" 2>&1 | tail -40
OUT=$work/trust "$here/daemon_trust_check.sh" "$build" 2>&1 | tail -40
OUT=$work/canary "$here/daemon_canary_check.sh" "$build" 2>&1 | tail -40
tar -C "$work" -czf "$out/examples.tgz" .
ls -la "$out"
