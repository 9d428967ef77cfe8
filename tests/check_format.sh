#!/bin/sh
# tests/check_format.sh SOURCE_DIR - the house style's mechanical half (the
# rest is docs/STYLE.md): every C/CUDA file under server/ common/ kernels/ worker/ client/
# tests/ is as clang-format leaves it with the repository's .clang-format,
# and no line is over 100 columns.
#
# Files written before the style was written down, and not yet reformatted,
# are listed in tests/format_pending.txt and skipped; a listed file that now
# passes fails the check until it is taken off the list, so the list only
# shrinks.  Format a file with:  clang-format -i FILE  (then drop its line).
# Exits 77 (ctest's SKIP_RETURN_CODE), saying why, when clang-format 14
# is not installed.
set -u
top=${1:?usage: check_format.sh SOURCE_DIR}
cd "$top" || exit 1
if ! command -v clang-format >/dev/null 2>&1; then
    echo "check_format: SKIPPED: clang-format is not installed (Debian: apt-get install clang-format)" >&2
    exit 77
fi
# Another major version formats some constructs differently, so the
# check is only meaningful with the one .clang-format was tuned with.
version=$(clang-format --version | sed -n 's/.*version \([0-9]*\).*/\1/p')
if [ "$version" != 14 ]; then
    echo "check_format: SKIPPED: clang-format $version is not 14, the version .clang-format is written for" >&2
    exit 77
fi
pending=tests/format_pending.txt
all=$(find server common kernels worker tests client -name '*.[ch]' -o -name '*.cu' -o -name '*.cuh' | sort)
# One clang-format over every file (a process per file is slow under the
# sanitizer passes' load); the files it complains about, then those with a
# line over 100 columns.
unformatted=$(clang-format --style=file --dry-run $all 2>&1 |
    sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: warning: code should be clang-formatted.*/\1/p' | sort -u)
toolong=$(awk 'length($0) > 100 { print FILENAME; nextfile }' $all | sort -u)
bad=0
checked=0
for f in $all; do
    ok=1
    if printf '%s\n' "$unformatted" "$toolong" | grep -qx "$f"; then
        ok=0
    fi
    if grep -qx "$f" "$pending"; then
        if [ "$ok" = 1 ]; then
            echo "check_format: $f now keeps the style: take it off $pending" >&2
            bad=1
        fi
        continue
    fi
    checked=$((checked + 1))
    if [ "$ok" = 0 ]; then
        echo "check_format: $f is not in the house style (clang-format -i $f):" >&2
        clang-format --style=file --dry-run "$f" 2>&1 | head -20 >&2
        awk -v f="$f" 'length($0) > 100 { print "  " f ":" FNR ": over 100 columns" }' "$f" >&2
        bad=1
    fi
done
echo "check_format: $checked file(s) checked, $(grep -c . "$pending") pending"
exit $bad
