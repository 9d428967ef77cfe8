#!/usr/bin/env bash
# scripts/setup.sh start|test|build - everything a fresh Debian or Ubuntu
# machine needs, then one of:
#   start  build and run gpubenchd in the foreground with its defaults
#          (127.0.0.1:8080, ./gpubench.db); extra arguments go to gpubenchd
#   test   build and run the whole test suite (ctest); GPU tests are
#          skipped, saying why, where no GPU is found.  First a second
#          build, build-asan/ (clang, AddressSanitizer and
#          UndefinedBehaviorSanitizer, no CUDA), runs the unit and API tests
#          and a short run of each libFuzzer harness (tests/fuzz/), and a
#          third, build-tsan/ (clang, ThreadSanitizer, no CUDA), the unit
#          and API tests; if they fail the command fails.
#          GPUBENCH_SANITIZE=0 skips both passes.
#          Each ctest runs its tests side by side, one a core (-j nproc):
#          every test has its own temporary folder and its daemons listen
#          on port 0 (tests/api/harness.py).
#          The last line repeats the summary of the main build's ctest
#          ("N% tests passed, M tests failed out of T") with its status.
#   build  only install what is missing and build
#   packages start|test|build
#          print the Debian packages that command needs, one a line, and
#          exit (tests/package/test_dependency_lists.py reads them)
# It installs Debian packages only when something is missing (with sudo
# when not root).  CUDA is not a Debian package here: where nvcc is found
# (PATH or /usr/local/cuda) the worker gets its kernels, otherwise it builds
# without them and the daemon reports no GPU, with that reason.
set -euo pipefail

cmd=${1:-}
list_only=0
if [ "$cmd" = packages ]; then list_only=1; cmd=${2:-}; shift; fi
case "$cmd" in
  start|test|build) shift ;;
  *) echo "usage: scripts/setup.sh start|test|build [gpubenchd options]" >&2
     echo "       scripts/setup.sh packages start|test|build" >&2; exit 2 ;;
esac

top=$(cd "$(dirname "$0")/.." && pwd)
build=${GPUBENCH_BUILD_DIR:-$top/build}
# The libraries' -dev packages are packaging/dependencies' (the one list,
# which the Dockerfile and the .deb read too), through scripts/packages.sh.
libs=$("$top/scripts/packages.sh" build)
read -r -d '' -a lib_packages <<<"$libs" || true
((${#lib_packages[@]})) || { echo "setup: scripts/packages.sh build listed nothing" >&2; exit 1; }
packages=(build-essential cmake pkg-config "${lib_packages[@]}"
          python3 curl sqlite3
          libjs-chart.js)
# The browser test drives Debian's Chromium and the style check
# clang-format; the API tests validate every answer against api/openapi.json
# with python3-jsonschema, and the Prometheus test runs Debian's prometheus
# (promtool inside); only the tests need them, and
# the sanitizer build and the fuzzers need clang with its runtimes.
sanitize=${GPUBENCH_SANITIZE:-1}
[ "$cmd" = test ] && packages+=(chromium clang-format python3-jsonschema prometheus)
[ "$cmd" = test ] && [ "$sanitize" != 0 ] && packages+=(clang libclang-rt-dev)
if [ "$list_only" = 1 ]; then printf '%s\n' "${packages[@]}"; exit 0; fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

cmake_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
if [ -n "${GPUBENCH_CMAKE_ARGS:-}" ]; then
  read -r -a extra <<<"$GPUBENCH_CMAKE_ARGS"
  cmake_args+=("${extra[@]}")
fi
cmake -S "$top" -B "$build" "${cmake_args[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)"

# sanitizer_pass DIR WHAT CTEST_FLAG LABELS CMAKE_ARGS...: a second build
# in DIR with clang and no CUDA; non-zero when the selected tests fail.
sanitizer_pass() {
  local dir=$1 what=$2 flag=$3 labels=$4
  shift 4
  # A folder configured with another compiler cannot be switched to clang.
  if [ -f "$dir/CMakeCache.txt" ] &&
     ! grep -q '^CMAKE_C_COMPILER:[A-Z]*=.*clang' "$dir/CMakeCache.txt"; then
    rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
  fi
  echo "setup: sanitizer build ($dir): $what, clang, no CUDA"
  CC=clang cmake -S "$top" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGPUBENCH_WITH_CUDA=OFF "$@" >/dev/null || return 1
  cmake --build "$dir" -j "$(nproc)" || return 1
  if ! (cd "$dir" && ctest --output-on-failure --timeout 600 -j "$(nproc)" "$flag" "$labels"); then
    echo "setup: the tests failed under $what (see above)" >&2
    return 1
  fi
}

case "$cmd" in
  build) ;;
  start)
    echo "setup: the client is $build/bin/gpubench ('gpubench --help' lists its commands)"
    echo "setup: starting gpubenchd (Ctrl-C stops it)"
    exec "$build/bin/gpubenchd" "$@" ;;
  test)
    if [ "$sanitize" != 0 ]; then
      # unit, api (fleet included) and fuzz; the browser, GPU,
      # durability, lint and container tests run once, in the main build
      # below.
      sanitizer_pass "${GPUBENCH_ASAN_BUILD_DIR:-$top/build-asan}" \
        "ASan + UBSan" -LE 'browser|gpu|durability|lint|container' \
        -DGPUBENCH_ASAN=ON -DGPUBENCH_UBSAN=ON -DGPUBENCH_FUZZ=ON || exit 1
      # Data races: the daemon's threads (HTTP pool, GPU runners, peers,
      # the wait timer) under the unit and API tests.  The first report
      # stops the process that met it; reports go to files too, so that one
      # from a daemon whose exit status a test did not look at still fails
      # the pass.
      tsan=${GPUBENCH_TSAN_BUILD_DIR:-$top/build-tsan}
      mkdir -p "$tsan/tsan-reports"
      rm -f "$tsan"/tsan-reports/report.*
      failed=0
      TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$top/tests/tsan.supp log_path=$tsan/tsan-reports/report" \
        sanitizer_pass "$tsan" "ThreadSanitizer" -L 'unit|api' \
        -DGPUBENCH_TSAN=ON -DGPUBENCH_FUZZ=OFF || failed=1
      if ls "$tsan"/tsan-reports/report.* >/dev/null 2>&1; then
        cat "$tsan"/tsan-reports/report.* >&2
        echo "setup: ThreadSanitizer reported the races above" >&2
        failed=1
      fi
      [ "$failed" = 0 ] || exit 1
    fi
    # Say before the tests, not only in ctest's list, why GPU tests skip.
    if ! "$build/bin/gpubench-worker" --list | grep -q '"uuid"'; then
      echo "setup: NO GPU FOUND, so the tests labelled gpu will be SKIPPED:"
      "$build/bin/gpubench-worker" --list | sed 's/^/setup:   /'
    fi
    cd "$build"
    # ctest ends with its time and the lists of tests skipped or failed,
    # not with its summary: say the summary again, last, with the status.
    status=0
    ctest --output-on-failure --timeout 600 -j "$(nproc)" | tee ctest-last.log || status=$?
    # ctest shows a skipped test as "Skipped" only: say why, from the lines
    # the tests printed (SKIPPED ...), before the summary.
    grep -h 'SKIPPED' Testing/Temporary/LastTest.log 2>/dev/null | sort -u |
      sed 's/^/setup: /' || true
    summary=$(grep -E '^[0-9]+% tests passed' ctest-last.log | tail -n 1 || true)
    echo "setup: ${summary:-ctest printed no summary} (ctest exit status $status)"
    exit "$status" ;;
esac
