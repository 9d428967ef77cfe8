#!/usr/bin/env bash
# tests/package/test_container.sh WORKDIR - scripts/container_check.sh as a
# ctest (label container, issue 38): the Dockerfile built with podman on a
# Debian 12 base and started plain and with --web-config.  First it finds out
# whether podman can run a container here at all: a one-file image (the
# host's /usr/bin/true and the libraries it loads) imported and run the way
# the check runs its image.  Exit 0 passed, 1 failed, 77 skipped, saying
# exactly why: not root, podman, debootstrap, runc, openssl or curl missing
# (.ci/run installs them; a failed install there leads here), podman unable
# to run a container (no user namespaces, overlay, cgroups: its own words),
# or the Debian mirror out of reach.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-/tmp/gpubench-container}
mirror=${GPUBENCH_DEBIAN_MIRROR:-http://deb.debian.org/debian}
skip() {
  echo "SKIPPED LOUDLY: the container was NOT built or started (scripts/container_check.sh): $*"
  exit 77
}

[ "$(id -u)" = 0 ] || skip "this needs root (podman with the vfs driver, debootstrap)"
for tool in podman debootstrap runc openssl curl python3; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed (apt-get install podman debootstrap runc)"
done
podman=(podman --storage-driver vfs --runtime runc)
if ! info=$("${podman[@]}" info 2>&1); then
  skip "podman cannot start here: $(echo "$info" | tail -n 3 | tr '\n' ' ')"
fi

# Can it run a container?  The smallest image there is: /usr/bin/true.
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
mkdir -p "$probe/root/usr/bin"
cp /usr/bin/true "$probe/root/usr/bin/"
for lib in $(ldd /usr/bin/true | grep -o '/[^ ]*'); do
  mkdir -p "$probe/root$(dirname "$lib")"
  cp -L "$lib" "$probe/root$lib"
done
if ! out=$(tar -C "$probe/root" -c . | "${podman[@]}" import - localhost/gpubench-probe:true 2>&1); then
  skip "podman cannot import an image here: $(echo "$out" | tail -n 3 | tr '\n' ' ')"
fi
if ! out=$("${podman[@]}" run --rm --network host --no-healthcheck \
             --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 \
             localhost/gpubench-probe:true /usr/bin/true 2>&1); then
  "${podman[@]}" rmi -f localhost/gpubench-probe:true >/dev/null 2>&1 || true
  skip "podman cannot run a container here (no user namespaces, overlay or cgroups?): $(echo "$out" | tail -n 3 | tr '\n' ' ')"
fi
"${podman[@]}" rmi -f localhost/gpubench-probe:true >/dev/null 2>&1 || true
echo "test_container: podman runs containers here ($(podman --version), runc, vfs)"

curl -fsS -m 30 -o /dev/null "$mirror/dists/bookworm/InRelease" ||
  skip "the Debian mirror $mirror cannot be reached (debootstrap and the image's packages come from it)"

start=$SECONDS
"$top/scripts/container_check.sh" "$work"
echo "test_container: the container check took $((SECONDS - start)) s"
