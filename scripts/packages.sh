#!/bin/sh
# scripts/packages.sh build|run [debian|ubuntu] - the Debian/Ubuntu package
# names of the libraries gpubench builds against, one a line, read from
# packaging/dependencies (the one list; beside this script, or in
# GPUBENCH_DEPENDENCIES).
#   build  the -dev packages (the same names on Debian 12 and Ubuntu 24.04)
#   run    the runtime libraries; their names differ (Ubuntu 24.04's t64),
#          so the distribution is the second argument, or else ID (then
#          ID_LIKE) of /etc/os-release (GPUBENCH_OS_RELEASE names another)
# POSIX sh: the Dockerfile runs it on bare base images.
set -eu
here=$(dirname "$0")
deps=${GPUBENCH_DEPENDENCIES:-}
if [ -z "$deps" ]; then
  for f in "$here/../packaging/dependencies" "$here/dependencies"; do
    if [ -f "$f" ]; then deps=$f; break; fi
  done
fi
[ -n "$deps" ] && [ -f "$deps" ] || { echo "packages.sh: no packaging/dependencies" >&2; exit 1; }
case "${1:-}" in
  build) col=2 ;;
  run)
    distro=${2:-}
    if [ -z "$distro" ]; then
      osr=${GPUBENCH_OS_RELEASE:-/etc/os-release}
      [ -f "$osr" ] || osr=/usr/lib/os-release
      distro=$(. "$osr"; echo "${ID:-} ${ID_LIKE:-}")
    fi
    case " $distro " in
      *" ubuntu "*) col=4 ;;
      *" debian "*) col=3 ;;
      *) echo "packages.sh: neither Debian nor Ubuntu ($distro): which runtime names?" >&2; exit 1 ;;
    esac ;;
  *) echo "usage: scripts/packages.sh build|run [debian|ubuntu]" >&2; exit 2 ;;
esac
awk -v c="$col" '!/^[[:space:]]*(#|$)/ { if (NF != 4) { print "packages.sh: bad line: " $0 > "/dev/stderr"; bad = 1; exit 1 } print $c }
                 END { exit bad }' "$deps"
