#!/usr/bin/env bash
# scripts/debian_root.sh DEST - a clean Debian 12 root (bookworm, debootstrap
# --variant=minbase, from the mirror in GPUBENCH_DEBIAN_MIRROR, default
# deb.debian.org) in DEST, which must not exist or be empty.  Used by
# scripts/container_check.sh (the podman base image) and by
# tests/package/test_deb_chroot.sh (the .deb installed into it).
#
# debootstrap takes about two minutes, so a tarball of a fresh root is kept
# in GPUBENCH_DEBOOTSTRAP_CACHE (default /var/cache/gpubench/bookworm-minbase.tar;
# empty: no cache) and unpacked instead while it is under 14 days old.  The
# cache is never trusted blindly: one that does not unpack into a root with
# /bin/sh and apt-get is thrown away and debootstrap runs.  Needs root.
set -euo pipefail
dest=${1:?usage: scripts/debian_root.sh DEST}
mirror=${GPUBENCH_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${GPUBENCH_DEBOOTSTRAP_CACHE-/var/cache/gpubench/bookworm-minbase.tar}
mkdir -p "$dest"
[ -z "$(ls -A "$dest")" ] || { echo "debian_root: $dest is not empty" >&2; exit 1; }

usable() { [ -x "$1/bin/sh" ] && [ -x "$1/usr/bin/apt-get" ] && [ -f "$1/etc/debian_version" ]; }

if [ -n "$cache" ]; then
  mkdir -p "$(dirname "$cache")"
  # one debootstrap at a time; the others wait for its tarball
  exec 9>"$cache.lock"
  flock 9
  if [ -f "$cache" ] && [ -n "$(find "$cache" -mtime -14)" ]; then
    if tar -C "$dest" -xpf "$cache" 2>/dev/null && usable "$dest"; then
      echo "debian_root: bookworm from the cache $cache ($(date -r "$cache" -u +%F))"
      exit 0
    fi
    echo "debian_root: the cache $cache is damaged: debootstrap again" >&2
    rm -f "$cache"
    find "$dest" -mindepth 1 -delete
  fi
fi

echo "debian_root: debootstrap --variant=minbase bookworm from $mirror"
log=$(mktemp)
if ! debootstrap --variant=minbase bookworm "$dest" "$mirror" >"$log" 2>&1; then
  tail -n 20 "$log" >&2
  rm -f "$log"
  echo "debian_root: debootstrap failed (above)" >&2
  exit 1
fi
rm -f "$log"
echo "deb $mirror bookworm main" >"$dest/etc/apt/sources.list"
usable "$dest" || { echo "debian_root: debootstrap made no usable root" >&2; exit 1; }
if [ -n "$cache" ]; then
  tar -C "$dest" -cf "$cache.tmp" . && mv "$cache.tmp" "$cache" \
    && echo "debian_root: kept as $cache"
fi
