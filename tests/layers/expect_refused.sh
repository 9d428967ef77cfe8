#!/bin/sh
# tests/layers/expect_refused.sh BUILD_DIR SOURCE_DIR - builds the two layer
# probes (tests/layers/*.c): the one that includes downward must build, the
# one that includes upward must not, for want of the header it names.
# Then the includes the compiler accepts but the layers do not: a path
# ("../runs/runs.h" from server/store/ resolves beside the file, past the
# include directories; "sub/x.h" reaches a subfolder).  Each is planted in
# a store file of a copy of the tree, and tests/check_layers.sh must refuse
# the copy, where it passes the same copy unplanted.
set -u
build=${1:?usage: expect_refused.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: expect_refused.sh BUILD_DIR SOURCE_DIR}
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

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# fresh_copy: the folders check_layers.sh reads, copied into $tmp/tree.
fresh_copy() {
    rm -rf "$tmp/tree" && mkdir "$tmp/tree" &&
        (cd "$src" && cp -R common server kernels worker client "$tmp/tree/")
}
fresh_copy || exit 1
if ! out=$(sh "$src/tests/check_layers.sh" "$tmp/tree" 2>&1); then
    printf '%s\n' "$out"
    echo "layers: check_layers.sh refused the copy of the tree before anything was planted"
    exit 1
fi

# expect_path_refused INCLUDE: plants #include "INCLUDE" in the copy's
# server/store/store.c; check_layers.sh must refuse it by name.
expect_path_refused() {
    echo "#include \"$1\"" >>"$tmp/tree/server/store/store.c"
    if out=$(sh "$src/tests/check_layers.sh" "$tmp/tree" 2>&1); then
        printf '%s\n' "$out"
        echo "layers: check_layers.sh PASSED server/store/store.c including \"$1\""
        exit 1
    fi
    if ! printf '%s\n' "$out" | grep -Fq "store.c includes \"$1\": an include is a bare file name"; then
        printf '%s\n' "$out"
        echo "layers: check_layers.sh failed, but not for store.c's \"$1\""
        exit 1
    fi
}
# the runs layer's header, reached upward through the parent folder
expect_path_refused ../runs/runs.h
# a header that exists, in a subfolder of the store's own folder
fresh_copy || exit 1
mkdir "$tmp/tree/server/store/sub" &&
    printf '#ifndef GPUBENCH_STORE_SUB_PLANTED_H\n#define GPUBENCH_STORE_SUB_PLANTED_H\n#endif\n' \
        >"$tmp/tree/server/store/sub/planted.h" || exit 1
expect_path_refused sub/planted.h
echo "layers: check_layers.sh refuses store.c including \"../runs/runs.h\" and \"sub/planted.h\""
