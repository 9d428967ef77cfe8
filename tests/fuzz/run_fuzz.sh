#!/bin/sh
# run_fuzz.sh HARNESS SEEDS WORKDIR SECONDS DICT - one bounded libFuzzer run,
# for ctest (tests/fuzz/CMakeLists.txt).  The seed corpus is only read: new
# inputs go to WORKDIR/corpus, emptied first so every run starts from the
# seeds alone, and a failing input to WORKDIR-artifacts/.  Every seed is run
# first (a reproducer kept in SEEDS as crash-* fails at once until fixed),
# then the fuzzer mutates for SECONDS.  Exits non-zero on a crash, leak,
# sanitizer report, slow input (-timeout) or RSS over 1 GiB.
set -eu
harness=$1 seeds=$2 work=$3 seconds=$4 dict=$5
rm -rf "$work" "$work-artifacts"
mkdir -p "$work/corpus" "$work-artifacts"
exec "$harness" -max_total_time="$seconds" -rss_limit_mb=1024 -timeout=10 \
  -dict="$dict" -print_final_stats=1 \
  -artifact_prefix="$work-artifacts/" "$work/corpus" "$seeds"
