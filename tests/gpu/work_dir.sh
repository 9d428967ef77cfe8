# work_dir.sh - sourced by the ctest GPU checks (perf_check.sh,
# deep_check.sh) with keep set to the folder the caller was asked to keep
# its files in (empty: none): sets work to that folder, made if missing,
# or to a temporary one removed when the script exits.
if [ -n "$keep" ]; then
  work=$keep
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
