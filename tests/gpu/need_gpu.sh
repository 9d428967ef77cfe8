# need_gpu.sh - sourced by the ctest GPU checks (gpu_check.sh,
# perf_check.sh) with $worker set: asks the worker for its GPUs; with none
# prints why and exits 77, which ctest reports as skipped (never as
# passed).  Sets gpu_count.
list=$("$worker" --list) || { echo "FAIL: $worker --list exited non-zero"; exit 1; }
gpu_count=$(python3 -c 'import json,sys; print(len(json.load(sys.stdin)["devices"]))' <<<"$list")
if [ "$gpu_count" = 0 ]; then
  reason=$(python3 -c 'import json,sys; print(json.load(sys.stdin).get("reason","?"))' <<<"$list")
  echo "SKIPPED: no GPU: $reason"
  exit 77
fi
echo "GPU found: $list"
