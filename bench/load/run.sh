#!/usr/bin/env bash
# bench/load/run.sh - drives a real gpubenchd with wrk and reports what it
# stood: requests a second, latency percentiles, answers by status (every
# non-2xx counted), socket errors, and the daemon's memory (VmRSS, VmHWM),
# threads and open files before and after, from /proc/PID/status.
#
# The daemon runs on loopback with a temporary database pre-filled with
# PREFILL finished runs, and the worker's TEST DOUBLE (2 fake GPUs,
# synthetic results: this measures the daemon, not a GPU).  The queue bound
# and the post rate limit are lifted (--max-queue, --rate-limit 0) and the
# connection limits raised above the load, so every post should be a 202;
# a 503/429 would be counted, not hidden.  The connection limits are set to
# 8x the load: libmicrohttpd divides --max-connections among the HTTP
# threads (4), and accept() does not spread connections evenly, so at 2x
# some connections were closed at once (wrk "read" errors; README.md).
# The mix is bench/load/mixed.lua.
#
#   bench/load/run.sh                 # 2 rounds of 60 s, 256 connections, as README.md
#   DURATION=10 CONNECTIONS=64 ROUNDS=1 bench/load/run.sh
# Each round is followed by draining the queue the posts made; memory is
# read before, after each round and after each drain, so growth that is a
# cache filling once shows apart from growth that goes on.
# Needs: wrk (Debian package wrk), curl, a build (GPUBENCH_BUILD_DIR, default
# build/) with bin/gpubenchd and tests/gpubench-fake-worker.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${GPUBENCH_BUILD_DIR:-$top/build}
duration=${DURATION:-60}
conns=${CONNECTIONS:-256}
threads=${THREADS:-$(nproc)}
prefill=${PREFILL:-500}
http_threads=${HTTP_THREADS:-4}
post_pct=${POST_PCT:-10}  # share of POST /runs in the mix, percent
rounds=${ROUNDS:-2}   # load rounds on one daemon: memory must not grow from one to the next

tmp=$(mktemp -d /tmp/gpubench-load.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
base=http://127.0.0.1:$port
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

GPUBENCH_FAKE_GPUS=2 GPUBENCH_FAKE_CONTROL=$tmp/none \
  "$build/bin/gpubenchd" --listen "127.0.0.1:$port" --db "$tmp/load.db" \
  --worker "$build/tests/gpubench-fake-worker" --max-queue 1000000 --rate-limit 0 \
  --max-connections $((conns * 8)) --max-connections-per-ip $((conns * 8)) \
  --http-threads "$http_threads" >"$tmp/daemon.log" 2>&1 &
pid=$!
for _ in $(seq 100); do curl -sf "$base/healthz" >/dev/null && break; sleep 0.1; done

mem() {  # VmRSS, VmHWM (kB), threads, open files of the daemon
  awk '/^VmRSS|^VmHWM|^Threads/ {printf "%s %s ", $1, $2}' "/proc/$pid/status"
  echo "fds: $(ls "/proc/$pid/fd" | wc -l)"
}
queued() { curl -s "$base/runs?status=queued&limit=1" | python3 -c \
  'import json,sys; print(len(json.load(sys.stdin)["runs"]))'; }
drain() {  # until nothing is queued or running (at most 10 min)
  for _ in $(seq 6000); do
    [ "$(curl -s "$base/runs?status=queued&limit=1" | grep -c '"id"')" = 0 ] &&
    [ "$(curl -s "$base/runs?status=running&limit=1" | grep -c '"id"')" = 0 ] && return 0
    sleep 0.1
  done
  echo "load: the queue did not drain" >&2; return 1
}

echo "load: pre-filling $prefill runs"
for i in $(seq "$prefill"); do
  curl -s -H 'Content-Type: application/json' -d '{"benchmark":"smem_stride","params":{"strides":[1,2,32,33],"samples":3},"label":"prefill"}' \
    "$base/runs" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])'
done >"$tmp/ids"
drain
# a short warm-up, so "before" is the daemon at work, not fresh from exec
wrk -t "$threads" -c "$conns" -d 5s -s "$here/mixed.lua" "$base" -- "$tmp/ids" >/dev/null
drain
before=$(mem)
load=$(cut -d' ' -f1-3 /proc/loadavg)
runs_before=$(sqlite3 "$tmp/load.db" 'SELECT count(*) FROM runs')

for round in $(seq "$rounds"); do
  echo "load: round $round of $rounds: wrk -t $threads -c $conns -d ${duration}s -s mixed.lua" \
       "(POST /runs $post_pct%; of the rest GET /runs/ID 4, GET /runs?limit=50 2, GET /healthz 3)"
  wrk -t "$threads" -c "$conns" -d "${duration}s" --timeout 10s --latency \
    -s "$here/mixed.lua" "$base" -- "$tmp/ids" "$post_pct" >"$tmp/wrk.out"
  grep -v '^RESULT' "$tmp/wrk.out"
  after[round]=$(mem)
  left[round]=$(sqlite3 "$tmp/load.db" "SELECT count(*) FROM runs WHERE status IN ('queued','running')")
  t0=$(date +%s)
  drain
  took[round]=$(( $(date +%s) - t0 ))
  drained[round]=$(mem)
  grep '^RESULT' "$tmp/wrk.out" | sed "s/^RESULT /round $round: /" >>"$tmp/results"
done
posted=$(( $(sqlite3 "$tmp/load.db" 'SELECT count(*) FROM runs') - runs_before ))

echo
echo "machine:  $(nproc) CPUs, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(uname -r)"
echo "date:     $(date -u +%Y-%m-%dT%H:%MZ), load average before: $load"
echo "daemon:   --http-threads $http_threads, 2 fake GPUs, $prefill runs pre-filled"
cat "$tmp/results"
echo "stored:   $posted runs posted in all (every 202 a stored run)"
echo "before:   $before"
for round in $(seq "$rounds"); do
  echo "round $round: after the load: ${after[round]}"
  echo "round $round: ${left[round]} runs queued or running at its end, drained in ${took[round]} s: ${drained[round]}"
done
echo "failed:   $(sqlite3 "$tmp/load.db" "SELECT count(*) FROM runs WHERE status='failed'") runs failed"
echo "log:      $(grep -ciE 'error|warn' "$tmp/daemon.log" || true) error or warning lines in the daemon log; the first, by kind:"
grep -iE 'error|warn' "$tmp/daemon.log" | cut -c26-110 | sort | uniq -c | sort -rn | head -5 || true
