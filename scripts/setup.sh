#!/usr/bin/env bash
# scripts/setup.sh start|test|build - everything a fresh Debian or Ubuntu
# machine needs, then one of:
#   start  build and run gpubenchd in the foreground with its defaults
#          (127.0.0.1:8080, ./gpubench.db); extra arguments go to gpubenchd
#   test   build and run the whole test suite (ctest); GPU tests are
#          skipped, saying why, where no GPU is found.  First a second
#          build, build-asan/ (clang, AddressSanitizer and
#          UndefinedBehaviorSanitizer, no CUDA), runs the unit and API tests
#          and a short run of each libFuzzer harness (tests/fuzz/); if they
#          fail the command fails.  GPUBENCH_SANITIZE=0 skips that pass.
#          The last line is the summary of the main build's ctest.
#   build  only install what is missing and build
# It installs Debian packages only when something is missing (with sudo
# when not root).  CUDA is not a Debian package here: where nvcc is found
# (PATH or /usr/local/cuda) the worker gets its kernels, otherwise it builds
# without them and the daemon reports no GPU, with that reason.
set -euo pipefail

cmd=${1:-}
case "$cmd" in
  start|test|build) shift ;;
  *) echo "usage: scripts/setup.sh start|test|build [gpubenchd options]" >&2; exit 2 ;;
esac

top=$(cd "$(dirname "$0")/.." && pwd)
build=${GPUBENCH_BUILD_DIR:-$top/build}
packages=(build-essential cmake pkg-config libmicrohttpd-dev libcjson-dev
          libsqlite3-dev nettle-dev libcurl4-openssl-dev python3 curl sqlite3
          libjs-chart.js)
# The browser test drives Debian's Chromium; only the tests need it, and
# the sanitizer build and the fuzzers need clang with its runtimes.
sanitize=${GPUBENCH_SANITIZE:-1}
[ "$cmd" = test ] && packages+=(chromium)
[ "$cmd" = test ] && [ "$sanitize" != 0 ] && packages+=(clang libclang-rt-dev)

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

case "$cmd" in
  build) ;;
  start)
    echo "setup: starting gpubenchd (Ctrl-C stops it)"
    exec "$build/bin/gpubenchd" "$@" ;;
  test)
    if [ "$sanitize" != 0 ]; then
      asan=${GPUBENCH_ASAN_BUILD_DIR:-$top/build-asan}
      # A folder configured with another compiler cannot be switched to clang.
      if [ -f "$asan/CMakeCache.txt" ] &&
         ! grep -q '^CMAKE_C_COMPILER:[A-Z]*=.*clang' "$asan/CMakeCache.txt"; then
        rm -rf "$asan/CMakeCache.txt" "$asan/CMakeFiles"
      fi
      echo "setup: sanitizer build ($asan): ASan + UBSan, clang, no CUDA"
      CC=clang cmake -S "$top" -B "$asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DGPUBENCH_ASAN=ON -DGPUBENCH_UBSAN=ON -DGPUBENCH_WITH_CUDA=OFF \
        -DGPUBENCH_FUZZ=ON >/dev/null
      cmake --build "$asan" -j "$(nproc)"
      # unit, api (fleet included) and fuzz; the browser, GPU and
      # durability tests run once, in the main build below.
      if ! (cd "$asan" && ctest --output-on-failure --timeout 600 -LE 'browser|gpu|durability'); then
        echo "setup: the tests failed under the sanitizers (see above)" >&2
        exit 1
      fi
    fi
    # Say before the tests, not only in ctest's list, why GPU tests skip.
    if ! "$build/bin/gpubench-worker" --list | grep -q '"uuid"'; then
      echo "setup: NO GPU FOUND, so the tests labelled gpu will be SKIPPED:"
      "$build/bin/gpubench-worker" --list | sed 's/^/setup:   /'
    fi
    cd "$build"
    exec ctest --output-on-failure --timeout 600 ;;
esac
