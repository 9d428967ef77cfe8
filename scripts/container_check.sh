#!/usr/bin/env bash
# scripts/container_check.sh - builds the Dockerfile for real with podman
# (Debian's), where NVIDIA's CUDA images cannot be pulled: the base is a
# Debian 12 root made with debootstrap (scripts/debian_root.sh, from the
# Debian mirror; kept as a tarball in /var/cache/gpubench) and imported as a
# local image; the same Dockerfile steps then run on it (no CUDA: the worker
# reports no GPU and why).  Both stages install what packaging/dependencies
# lists, so the build proves the -dev packages are enough for CMake.  Then:
#   - the image started plain: /healthz, /openapi.json and /devices answer,
#     and the daemon runs as user gpubench;
#   - the image started with --web-config (a throwaway CA and certificate,
#     scripts/make_tls_config.sh, mounted at /etc/gpubench): /healthz over
#     TLS, checked against that CA, so libyaml (the config) and GnuTLS (the
#     handshake) are there at run time, not only at build time.
# Needs root, podman, debootstrap, runc, openssl and curl
# (apt-get install podman debootstrap runc); ~1 GB under /var/lib/containers.
# Measured on 2 shared cores: about 5 minutes with only the debootstrap
# tarball kept (the packages of both stages and the compile), 1 to 2 more
# for debootstrap, under 4 with the base image and the package layers kept.
#   scripts/container_check.sh [WORKDIR]   (default /tmp/gpubench-container)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/tmp/gpubench-container}
podman=(podman --storage-driver vfs)
# crun refuses a host with hybrid cgroups (v1 and v2 at once); runc copes.
if command -v runc >/dev/null 2>&1; then podman+=(--runtime runc); fi
mkdir -p "$work"
t0=$SECONDS
phase() { echo "container_check: [$((SECONDS - t0)) s] $*"; }

if ! "${podman[@]}" image exists localhost/gpubench-base:bookworm; then
  rm -rf "$work/rootfs"
  "$top/scripts/debian_root.sh" "$work/rootfs"
  phase "importing it as localhost/gpubench-base:bookworm"
  tar -C "$work/rootfs" -c . | "${podman[@]}" import - localhost/gpubench-base:bookworm >/dev/null
  rm -rf "$work/rootfs"
else
  phase "base image localhost/gpubench-base:bookworm already there"
fi

phase "building the Dockerfile on it"
"${podman[@]}" build --isolation chroot --format docker -t localhost/gpubench:check \
  --build-arg BUILD_IMAGE=localhost/gpubench-base:bookworm \
  --build-arg RUN_IMAGE=localhost/gpubench-base:bookworm \
  -f "$top/Dockerfile" "$top" >"$work/build.log" 2>&1 || {
    tail -n 60 "$work/build.log"
    echo "container_check: FAILED: the image did not build (the whole log: $work/build.log)" >&2
    exit 1
  }
phase "built localhost/gpubench:check"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
cids=()
# At the end: the containers, and the images no tag leads to any more (with
# the vfs driver each is a whole copy of its root: GBs after a few runs; the
# layers of this build stay, as the next build's cache).
cleanup() {
  for c in "${cids[@]}"; do "${podman[@]}" rm -f "$c" >/dev/null 2>&1 || true; done
  "${podman[@]}" image prune -f >/dev/null 2>&1 || true
}
trap cleanup EXIT
# start NAME ARGS...: the image on the host's loopback, its id in $cid.
# Limits within the host's (a VM's may be under the runtime's defaults); no
# health-check timer (that needs systemd).
start() {
  cid=$("${podman[@]}" run -d --network host --no-healthcheck \
          --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 "$@" localhost/gpubench:check \
          "${daemon_args[@]}")
  cids+=("$cid")
}
# wait_for URL CURL-ARGS...: the daemon's answer, or its log and a failure
wait_for() {
  local url=$1
  shift
  for _ in $(seq 100); do
    curl -fsS "$@" "$url" >/dev/null 2>&1 && return 0
    if [ "$("${podman[@]}" inspect -f '{{.State.Running}}' "$cid")" != true ]; then break; fi
    sleep 0.2
  done
  "${podman[@]}" logs "$cid" >&2 || true
  echo "container_check: FAILED: no answer from $url (the daemon's log above)" >&2
  exit 1
}

port=$(free_port)
phase "starting it on http://127.0.0.1:$port"
daemon_args=(--listen "127.0.0.1:$port" --allow-unauthenticated)
start
wait_for "http://127.0.0.1:$port/healthz"
curl -fsS "http://127.0.0.1:$port/healthz"
echo
curl -fsS "http://127.0.0.1:$port/openapi.json" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("openapi", d["openapi"], len(d["paths"]), "paths")'
curl -fsS "http://127.0.0.1:$port/devices"
echo
user=$("${podman[@]}" exec "$cid" id -un)
[ "$user" = gpubench ] || { echo "container_check: FAILED: the daemon runs as $user" >&2; exit 1; }
echo "runs as: $("${podman[@]}" exec "$cid" id)"
"${podman[@]}" exec "$cid" sh -c 'ldd /opt/gpubench/bin/gpubenchd' | grep -E 'gnutls|yaml|microhttpd'

# Over TLS: the web config and its certificate mounted read-only.
rm -rf "$work/etc-gpubench"
"$top/scripts/make_tls_config.sh" "$work/etc-gpubench"
tport=$(free_port)
phase "starting it with --web-config on https://127.0.0.1:$tport"
daemon_args=(--listen "127.0.0.1:$tport" --allow-unauthenticated
             --web-config /etc/gpubench/web-config.yml)
start -v "$work/etc-gpubench:/etc/gpubench:ro"
wait_for "https://localhost:$tport/healthz" --cacert "$work/etc-gpubench/tls/ca.crt"
health=$(curl -fsS --cacert "$work/etc-gpubench/tls/ca.crt" "https://localhost:$tport/healthz")
echo "$health"
python3 - "$health" "$work/etc-gpubench/tls/server.crt" <<'PY'
import json, subprocess, sys
h = json.loads(sys.argv[1])
serial = subprocess.run(["openssl", "x509", "-noout", "-serial", "-in", sys.argv[2]],
                        capture_output=True, text=True, check=True).stdout.split("=")[1].strip()
tls = h.get("tls") or {}
assert int(tls.get("certificate_serial") or "-1", 16) == int(serial, 16), (tls, serial)
print("over TLS: /healthz names the mounted certificate (serial %s)" % serial)
PY
if curl -fsS -o /dev/null "http://127.0.0.1:$tport/healthz" 2>/dev/null; then
  echo "container_check: FAILED: plain HTTP answered on the TLS port" >&2
  exit 1
fi
phase "OK"
