#!/usr/bin/env bash
# scripts/container_check.sh - builds the Dockerfile for real with buildah
# or podman (Debian's), where NVIDIA's CUDA images cannot be pulled: the
# base is a Debian 12 root made here with debootstrap (from the Debian
# mirror apt uses) and imported as a local image; the same Dockerfile steps
# then run on it (no CUDA: the worker reports no GPU and why).  Then it
# starts the image and asks the daemon inside for /healthz, /openapi.json
# and /devices.  Needs root, podman and debootstrap
# (apt-get install podman debootstrap runc); several minutes and ~1 GB.
#   scripts/container_check.sh [WORKDIR]   (default /tmp/gpubench-container)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/tmp/gpubench-container}
mirror=${GPUBENCH_DEBIAN_MIRROR:-http://deb.debian.org/debian}
podman=(podman --storage-driver vfs)
# crun refuses a host with hybrid cgroups (v1 and v2 at once); runc copes.
if command -v runc >/dev/null 2>&1; then podman+=(--runtime runc); fi
mkdir -p "$work"

if ! "${podman[@]}" image exists localhost/gpubench-base:bookworm; then
  if [ ! -x "$work/rootfs/bin/sh" ]; then
    echo "container_check: debootstrap bookworm from $mirror"
    debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log"
  fi
  # the image's apt uses the same mirror
  echo "deb $mirror bookworm main" >"$work/rootfs/etc/apt/sources.list"
  tar -C "$work/rootfs" -c . | "${podman[@]}" import - localhost/gpubench-base:bookworm
fi

echo "container_check: building the Dockerfile on it"
"${podman[@]}" build --isolation chroot --format docker -t localhost/gpubench:check \
  --build-arg BUILD_IMAGE=localhost/gpubench-base:bookworm \
  --build-arg RUN_IMAGE=localhost/gpubench-base:bookworm \
  --build-arg RUN_PACKAGES="libmicrohttpd12 libcjson1 libsqlite3-0 libcurl4 libnettle8" \
  -f "$top/Dockerfile" "$top"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
echo "container_check: starting it on 127.0.0.1:$port"
# Limits within the host's (a VM's may be under the runtime's defaults); no
# health-check timer (that needs systemd); the host's loopback.
cid=$("${podman[@]}" run -d --network host --no-healthcheck \
        --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 localhost/gpubench:check \
        --listen "127.0.0.1:$port" --allow-unauthenticated)
trap '"${podman[@]}" rm -f "$cid" >/dev/null' EXIT
for _ in $(seq 50); do
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  sleep 0.2
done
curl -fsS "http://127.0.0.1:$port/healthz"
curl -fsS "http://127.0.0.1:$port/openapi.json" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("openapi", d["openapi"], len(d["paths"]), "paths")'
curl -fsS "http://127.0.0.1:$port/devices"
"${podman[@]}" exec "$cid" id
echo "container_check: OK"
