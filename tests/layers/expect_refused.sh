#!/bin/sh
# tests/layers/expect_refused.sh BUILD_DIR - builds the two layer probes
# (tests/layers/*.c): the one that includes downward must build, the one
# that includes upward must not, for want of the header it names.
set -u
build=${1:?usage: expect_refused.sh BUILD_DIR}
if ! out=$(cmake --build "$build" --target layer_probe_downward 2>&1); then
    printf '%s\n' "$out"
    echo "layers: the control (judge including core's log.h) did not build"
    exit 1
fi
if out=$(cmake --build "$build" --target layer_probe_upward 2>&1); then
    printf '%s\n' "$out"
    echo "layers: core including the store's store.h BUILT: the layers are not enforced"
    exit 1
fi
# gcc: "store.h: No such file or directory"; clang: "'store.h' file not found"
if ! printf '%s\n' "$out" | grep -Eq "store\.h(: No such file|' file not found)"; then
    printf '%s\n' "$out"
    echo "layers: the upward probe failed, but not for want of store.h"
    exit 1
fi
echo "layers: core/ cannot include store.h (refused by the build); judge/ can include core's log.h"
