#!/usr/bin/env bash
# h200_check.sh [WORKER] - the whole GPU check of issue 3, for the lent H200
# (or any GPU): run from the repository root, e.g.
#   OUT=/tmp/h200 tests/gpu/h200_check.sh build-gpu/bin/gpubench-worker
#
# Records the card (nvidia-smi, read only: nothing here changes a clock,
# a power limit or persistence mode), runs every benchmark through the
# worker's real command line, twice where the targets ask for repeatability,
# checks the targets (check_results.py, mode h200), cross-checks the
# conflict degrees with Nsight Compute's bank-conflict counters where ncu
# can read them, and runs the ctest GPU check (protocol, sticky error).
# Writes at most 8 files to $OUT: the run JSON (result + meta), checks.json
# and log.txt (everything printed).
. "$(dirname "$0")/check_common.sh"

section "card, as found ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
uname -a
nvidia-smi || true
nvidia-smi -q -d CLOCK,PERFORMANCE,POWER,TEMPERATURE,ECC 2>/dev/null | head -120 || true
"$worker" --version
"$worker" --list

section "smem_stride, the targets' strides, twice"
strides='{"strides":[1,2,4,8,16,32,33,64,65]}'
run_json smem_stride "$strides" smem_stride_1.json
run_json smem_stride "$strides" smem_stride_2.json

section "smem_pattern: the seed's tx*2%32 (a broadcast) and 32 words in one bank"
run_json smem_pattern '{}' smem_pattern.json
run_json smem_pattern "{\"words\":[$(seq -s, 0 32 992)]}" smem_pattern_conflict.json

section "transpose 8192, twice"
run_json transpose '{}' transpose_1.json
run_json transpose '{}' transpose_2.json

section "the same as people see them"
"$worker" run smem_stride '{"strides":[1,2,4,32,33]}'
"$worker" run transpose '{"n":8192}'

section "diagnostic: 32 warps per SM (stride 1024 makes the array 127 KB)"
"$worker" run smem_stride '{"strides":[1,1024],"samples":10}'

section "diagnostic: transpose 16384 (4x the bytes a launch: launch gaps weigh less)"
"$worker" run transpose '{"n":16384,"samples":10}'

section "targets"
python3 "$here/check_results.py" results h200 "$out/smem_stride_1.json" "$out/smem_stride_2.json" \
  "$out/smem_pattern.json" "$out/smem_pattern_conflict.json" \
  "$out/transpose_1.json" "$out/transpose_2.json" --write "$out/checks.json"
targets=$?

section "Nsight Compute: bank conflicts and wavefronts per smem_read launch"
if command -v ncu >/dev/null; then
  # The last launches are the timed samples, taken in turns: strides
  # 1, 2, 4, 32, 33, 1, 2, ...; expect wavefronts = shared loads x degree.
  timeout 240 ncu --clock-control none -k regex:smem_read \
    --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed_op_shared_ld.sum \
    "$worker" run smem_stride '{"strides":[1,2,4,32,33],"samples":3,"min_sample_ms":5}' \
    2>&1 | grep -E 'l1tex__|smsp__' | tail -45
else
  echo "ncu not found"
fi

section "ctest GPU check (protocol, sticky error)"
"$here/gpu_check.sh" "$worker"
ctest_rc=$?
section "done: targets rc=$targets, gpu_check rc=$ctest_rc"
exit $(( targets || ctest_rc ))
