#!/usr/bin/env bash
# tests/package/test_deb_chroot.sh BUILD_DIR - the .deb installed into a
# clean Debian 12 root and its daemon started there as the packaged unit says
# (issue 38).  Plain chroot, no podman:
#   1. cpack -G DEB in BUILD_DIR;
#   2. a fresh bookworm minbase root (scripts/debian_root.sh: debootstrap,
#      or its cached tarball), and in it `apt-get install ./gpubench_*.deb`
#      from the Debian mirror: the package's Depends must pull every library
#      it needs, and its postinst runs (user gpubench, /etc/gpubench/tls);
#   3. gpubenchd.service read from the installed files: ExecStart's command
#      line run in the root as User=/Group= (setpriv, with the user's groups),
#      in WorkingDirectory=, with StateDirectory= made as systemd would, in a
#      network namespace of its own (so the unit's port is free): /healthz;
#   4. the same with README's TLS drop-in (--web-config
#      /etc/gpubench/web-config.yml, the key root:gpubench 0640 in
#      /etc/gpubench/tls): /healthz over TLS.
# Not systemd itself (the unit's sandboxing options are not applied; the
# package test runs systemd-analyze verify on the unit).
# Exit 0 passed, 1 failed, 77 skipped, saying why: not root, no debootstrap
# (and no cached root), no cpack, chroot, unshare or setpriv, or the Debian
# mirror out of reach.
set -euo pipefail
build=$(cd "${1:?usage: test_deb_chroot.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
mirror=${GPUBENCH_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${GPUBENCH_DEBOOTSTRAP_CACHE-/var/cache/gpubench/bookworm-minbase.tar}
t0=$SECONDS
say() { echo "deb_chroot: [$((SECONDS - t0)) s] $*"; }
skip() {
  echo "SKIPPED LOUDLY: the .deb was NOT installed into a clean Debian 12 root: $*"
  exit 77
}

[ "$(id -u)" = 0 ] || skip "this needs root (chroot, mounts, a network namespace)"
for tool in cpack dpkg-deb chroot unshare setpriv curl openssl ip; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed"
done
if ! command -v debootstrap >/dev/null 2>&1 && [ ! -f "$cache" ]; then
  skip "debootstrap is not installed (apt-get install debootstrap) and no root is cached"
fi
curl -fsS -m 30 -o /dev/null "$mirror/dists/bookworm/InRelease" ||
  skip "the Debian mirror $mirror cannot be reached (the package's dependencies come from it)"

tmp=$(mktemp -d /tmp/gpubench-debroot.XXXXXX)
pid_file=$tmp/daemon.pid
cleanup() {
  # the daemon dies with its namespace's bash; the mounts with the namespace
  rm -rf --one-file-system "$tmp"
}
trap cleanup EXIT

say "cpack -G DEB"
cpack -G DEB -B "$tmp/pkg" --config "$build/CPackConfig.cmake" >"$tmp/cpack.log" 2>&1 ||
  { cat "$tmp/cpack.log"; echo "FAILED: cpack"; exit 1; }
deb=$(ls "$tmp"/pkg/*.deb)
say "$(basename "$deb"): $(dpkg-deb -f "$deb" Depends)"

root=$tmp/root
"$top/scripts/debian_root.sh" "$root"
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp "$deb" "$root/tmp/"
say "apt-get install ./$(basename "$deb") in the clean root"
# A mount namespace of its own: /proc and /dev go when it ends.
if ! unshare --mount --propagation private bash -c '
    set -e
    mount -t proc proc "$1/proc"
    mount --bind /dev "$1/dev"
    chroot "$1" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
      sh -c "apt-get update -qq && apt-get install -y -q --no-install-recommends /tmp/$2"
  ' - "$root" "$(basename "$deb")" >"$tmp/apt.log" 2>&1; then
  tail -n 40 "$tmp/apt.log"
  echo "FAILED: the .deb did not install into a clean Debian 12 root (above)"
  exit 1
fi
grep -E '^(Setting up|Unpacking) ' "$tmp/apt.log" | sed 's/^/  /' | grep -E 'gpubench|lib(microhttpd|cjson|sqlite|nettle|curl|gnutls|yaml)|adduser' || true

# What the postinst made.
chroot "$root" getent passwd gpubench >/dev/null || { echo "FAILED: the postinst made no user gpubench"; exit 1; }
tls_dir=$(chroot "$root" stat -c '%U:%G %a' /etc/gpubench/tls)
[ "$tls_dir" = "root:gpubench 750" ] || { echo "FAILED: /etc/gpubench/tls is $tls_dir"; exit 1; }
say "postinst: user gpubench ($(chroot "$root" id gpubench)), /etc/gpubench/tls $tls_dir"

# The unit, as installed.
unit=$(chroot "$root" dpkg -L gpubench | grep '/gpubenchd\.service$' | head -n 1)
[ -n "$unit" ] || { echo "FAILED: the package installs no gpubenchd.service"; exit 1; }
key() { sed -n "s/^$1=//p" "$root$unit" | tail -n 1; }
exec_start=$(key ExecStart)
exec_start=${exec_start#[-@+!:]}
user=$(key User); group=$(key Group); workdir=$(key WorkingDirectory)
state=$(key StateDirectory); state_mode=$(key StateDirectoryMode)
say "$unit: ExecStart=$exec_start (User=$user Group=$group StateDirectory=$state)"
[ -n "$exec_start" ] && [ -n "$user" ] || { echo "FAILED: no ExecStart= or User= in $unit"; exit 1; }
# StateDirectory= as systemd makes it: /var/lib/NAME, the unit's user's.
if [ -n "$state" ]; then
  mkdir -p "$root/var/lib/$state"
  chroot "$root" chown "$user:${group:-$user}" "/var/lib/$state"
  chmod "${state_mode:-0755}" "$root/var/lib/$state"
fi

# README's TLS setup: the files in /etc/gpubench, the key the daemon's alone.
"$top/scripts/make_tls_config.sh" "$tmp/tls-config"
cp "$tmp/tls-config/tls/"* "$root/etc/gpubench/tls/"
cp "$tmp/tls-config/web-config.yml" "$root/etc/gpubench/web-config.yml"
chroot "$root" sh -c 'chown root:gpubench /etc/gpubench/tls/server.key && chmod 0640 /etc/gpubench/tls/server.key && chmod 0644 /etc/gpubench/web-config.yml'

# run_unit SCHEME EXTRA-ARGS: ExecStart (plus the drop-in's arguments) in the
# root, in a network and mount namespace of its own; asks /healthz where its
# log says it listens, then stops it with SIGTERM (exit status 0 expected).
run_unit() {
  local scheme=$1 extra=$2
  say "starting, in the root, as $user: $exec_start $extra"
  unshare --net --mount --propagation private --fork bash -s -- \
    "$root" "$user" "${group:-$user}" "${workdir:-/}" "$exec_start $extra" "$scheme" \
    "$tmp/tls-config/tls/ca.crt" <<'INNER'
set -euo pipefail
root=$1 user=$2 group=$3 workdir=$4 cmdline=$5 scheme=$6 ca=$7
ip link set lo up
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
log=$root/tmp/gpubenchd.log
# shellcheck disable=SC2086  # the unit's command line, split as systemd would (no quotes in it)
chroot "$root" setpriv --reuid="$user" --regid="$group" --init-groups \
  env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$workdir" \
  sh -c 'cd "$1" && shift && exec "$@"' - "$workdir" $cmdline >"$log" 2>&1 &
pid=$!
url=
for _ in $(seq 100); do
  url=$(sed -n "s|.*listening on \($scheme://[^ ]*\).*|\1|p" "$log" | head -n 1)
  [ -n "$url" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$url" ]; then cat "$log"; echo "FAILED: the daemon never said it listens ($scheme)"; exit 1; fi
url=${url%/}
url=${url/127.0.0.1/localhost}
ok=
for _ in $(seq 50); do
  if health=$(curl -fsS --cacert "$ca" "$url/healthz" 2>&1); then ok=1; break; fi
  sleep 0.1
done
[ -n "$ok" ] || { cat "$log"; echo "FAILED: no /healthz from $url: $health"; exit 1; }
echo "  $url/healthz: $health"
# numbers: the host's names for them are not the root's
who=$(ps -o uid=,gid=,supgid= -p "$pid" | awk '{$1=$1; print}')
want=$(chroot "$root" id -u "$user")
echo "  runs as (uid gid groups): $who; in the root: $(chroot "$root" id "$user")"
[ "${who%% *}" = "$want" ] || { echo "FAILED: the daemon runs as uid ${who%% *}, not $user ($want)"; exit 1; }
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
[ "$status" = 0 ] || { cat "$log"; echo "FAILED: gpubenchd exited $status on SIGTERM"; exit 1; }
INNER
}

run_unit http ""
run_unit https "--web-config /etc/gpubench/web-config.yml"
say "OK: the .deb installs into a clean Debian 12 root, and its unit's command line serves /healthz there, over HTTP and over TLS"
