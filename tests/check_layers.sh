#!/bin/sh
# tests/check_layers.sh SOURCE_DIR [LAYER=LIBRARY.a ...] - the layers'
# order (docs/STYLE.md), read from the code rather than trusted to the
# include paths alone:
#   1. every #include "..." is a bare file name (no / and no ..: a path
#      would resolve beside the including file, past the include
#      directories) and names a header of its own folder or of a folder
#      below it (and a NAME_internal.h of its own folder only):
#        common < server/core < server/store < server/judge < server/exec
#               < server/runs < server/http < server (main.c, options)
#        common < kernels < worker;   common < client
#   2. every header's include guard names its folder (GPUBENCH_CORE_LOG_H)
#   3. (with LAYER=LIBRARY.a arguments, lowest first) no library calls or
#      reads a symbol that only a library above it defines: a declaration
#      written by hand, or a function pointer's target named directly,
#      passes the include paths but not this.
# Exits 0 when both hold, 1 naming each place that goes up.
set -u
top=${1:?usage: check_layers.sh SOURCE_DIR [LAYER=LIB.a ...]}
shift
cd "$top" || exit 1

# rank FOLDER: a folder's place in the order; "" for one outside it.
rank() {
    case $1 in
    common) echo 0 ;;
    server/core) echo 1 ;;
    server/store) echo 2 ;;
    server/judge) echo 3 ;;
    server/exec) echo 4 ;;
    server/runs) echo 5 ;;
    server/http) echo 6 ;;
    server) echo 7 ;;
    kernels) echo 11 ;;
    worker) echo 12 ;;
    client) echo 21 ;;
    *) echo "" ;;
    esac
}

# allowed FROM TO: 0 when folder FROM may include a header of folder TO.
allowed() {
    [ "$1" = "$2" ] && return 0
    [ "$2" = common ] && return 0
    rf=$(rank "$1")
    rt=$(rank "$2")
    [ -n "$rf" ] && [ -n "$rt" ] || return 1
    # the daemon's chain, and the worker's, are separate: each may only
    # look down its own
    if [ "$rf" -lt 10 ] && [ "$rt" -lt 10 ]; then [ "$rt" -lt "$rf" ]; return; fi
    if [ "$rf" -ge 10 ] && [ "$rf" -lt 20 ] && [ "$rt" -ge 10 ] && [ "$rt" -lt 20 ]; then
        [ "$rt" -lt "$rf" ]
        return
    fi
    return 1
}

folders="common server/core server/store server/judge server/exec server/runs server/http server kernels worker client"
# Where each header lives: "name folder" lines.
index=$(for d in $folders; do
    find "$d" -maxdepth 1 \( -name '*.h' -o -name '*.cuh' -o -name '*.h.in' \) |
        sed "s|^$d/\(.*\)|\1 $d|; s|\.h\.in |.h |"
done)

bad=0
for d in $folders; do
    for f in $(find "$d" -maxdepth 1 \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) | sort); do
        for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
            # Every project include is a bare name, found through the
            # layer's include directories: a path ("../runs/runs.h",
            # "sub/x.h") would resolve beside the including file and pass
            # the include directories by, so it is refused whatever it names.
            case $h in
            */* | *..*)
                echo "check_layers: $f includes \"$h\": an include is a bare file name (no / and no ..)"
                bad=1
                continue
                ;;
            esac
            [ -f "$d/$h" ] && continue
            where=$(printf '%s\n' "$index" | awk -v h="$h" '$1 == h { print $2; exit }')
            if [ -z "$where" ]; then
                echo "check_layers: $f includes \"$h\", which is in none of the layers' folders"
                bad=1
            elif [ "${h%_internal.h}" != "$h" ] && [ "$where" != "$d" ]; then
                echo "check_layers: $f includes \"$h\": a folder's _internal.h is its own"
                bad=1
            elif ! allowed "$d" "$where"; then
                echo "check_layers: $f includes \"$h\" of $where/: an include that goes up (or across)"
                bad=1
            fi
        done
    done
done

# The include guards say where a header lives: GPUBENCH_<FOLDER>_<NAME>_H
# (server/core/log.h: GPUBENCH_CORE_LOG_H; server/options.h:
# GPUBENCH_SERVER_OPTIONS_H), so a header moved without its guard shows.
for d in $folders; do
    tag=$(echo "${d#server/}" | tr 'a-z/' 'A-Z_')
    for f in $(find "$d" -maxdepth 1 \( -name '*.h' -o -name '*.cuh' \) | sort); do
        want=GPUBENCH_${tag}_$(basename "$f" | tr 'a-z.' 'A-Z_')
        if ! grep -q "^#ifndef $want\$" "$f"; then
            echo "check_layers: $f: its include guard is not $want (the folder it lives in)"
            bad=1
        fi
    done
done

# The symbols: each library's undefined names against the defined names of
# every library after it in the argument list.
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
i=0
for arg in "$@"; do
    i=$((i + 1))
    name=${arg%%=*}
    lib=${arg#*=}
    if [ ! -f "$lib" ]; then
        echo "check_layers: $lib ($name) is not built"
        bad=1
        continue
    fi
    echo "$name" >"$tmp/name.$i"
    nm -g --defined-only "$lib" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/def.$i"
    nm -g --undefined-only "$lib" 2>/dev/null | awk '{ print $NF }' | sort -u >"$tmp/undef.$i"
done
n=$i
i=1
while [ "$i" -le "$n" ]; do
    j=$((i + 1))
    while [ "$j" -le "$n" ]; do
        if [ -f "$tmp/undef.$i" ] && [ -f "$tmp/def.$j" ]; then
            for sym in $(comm -12 "$tmp/undef.$i" "$tmp/def.$j"); do
                echo "check_layers: $(cat "$tmp/name.$i") uses $sym, which $(cat "$tmp/name.$j") (above it) defines: a call that goes up"
                bad=1
            done
        fi
        j=$((j + 1))
    done
    i=$((i + 1))
done

if [ "$bad" = 0 ]; then
    echo "check_layers: every include and every symbol goes down ($# libraries checked)"
fi
exit "$bad"
