#!/usr/bin/env bash
# bench/http/run.sh [BUILD_DIR] - gpubenchd's HTTP path against two
# references on the same machine, in the same run, alternating:
#   bare   libmicrohttpd with gpubenchd's own flags and options (bare_mhd.c)
#          answering the same bytes as a constant body;
#   nginx  serving those bytes as a static file.
# URLs: GET /runs/ID of a real H200 run (imported from examples/) and
# GET /runs?limit=50 (--test-benchmarks: the export holds test_fault and
# test_hang runs).  wrk -t2 -c64, keep-alive, ROUNDS rounds of DURATION
# each, the median round reported.  Then CPU_ROUNDS (3) rounds of each
# server's own CPU time a request (cpu_measure, common.sh), gpubenchd and
# the bare reference alternating, the median reported: on a shared machine
# the steadier figure.  Loopback only; everything it starts it stops.
# Needs wrk and nginx (Debian packages wrk, nginx-light).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/bench/http/common.sh"
bench_setup http "${1:-build}"

# gpubenchd with real runs in it, and a few made by the test double.
pd=$(port)
"$build/bin/gpubenchd" --listen 127.0.0.1:$pd --db "$dir/gpubench.db" \
  --worker "$build/tests/gpubench-fake-worker" --rate-limit 0 --test-benchmarks \
  >"$dir/daemon.log" 2>&1 &
pids+=($!)
daemon_pid=$!
wait_http "http://127.0.0.1:$pd/healthz"
curl -fs -H 'Content-Type: application/x-ndjson' --data-binary @"$top/examples/h200x2_daemon/runs.ndjson" "http://127.0.0.1:$pd/runs/import" >/dev/null
for _ in $(seq 20); do
  curl -fs -H 'Content-Type: application/json' -d '{"benchmark":"smem_stride"}' "http://127.0.0.1:$pd/runs?wait=10" >/dev/null
done
id=$(curl -fs "http://127.0.0.1:$pd/runs?benchmark=smem_stride&device=NVIDIA%20H200&status=done&limit=1" |
     python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
curl -fs "http://127.0.0.1:$pd/runs/$id" >"$dir/run.json"
curl -fs "http://127.0.0.1:$pd/runs?limit=50" >"$dir/list.json"

# The references, answering the same bytes.
pb1=$(port); pb2=$(port); pn=$(port)
"$build/bench/gpubench-bare-mhd" $pb1 "$dir/run.json" >/dev/null 2>&1 & pids+=($!)
bare_run_pid=$!
"$build/bench/gpubench-bare-mhd" $pb2 "$dir/list.json" >/dev/null 2>&1 & pids+=($!)
bare_list_pid=$!
cat >"$dir/nginx.conf" <<CONF
worker_processes $(nproc);
pid $dir/nginx.pid;
error_log $dir/nginx-error.log;
daemon on;
events { worker_connections 1024; }
http {
  access_log off;
  keepalive_requests 1000000;
  default_type application/json;
  client_body_temp_path $dir; proxy_temp_path $dir; fastcgi_temp_path $dir;
  uwsgi_temp_path $dir; scgi_temp_path $dir;
  server {
    listen 127.0.0.1:$pn;
    root $dir;
    location = /run { try_files /run.json =404; }
    location = /list { try_files /list.json =404; }
  }
}
CONF
nginx -c "$dir/nginx.conf" -p "$dir"
wait_http "http://127.0.0.1:$pb1/"; wait_http "http://127.0.0.1:$pn/run"

# Same bytes everywhere, or the comparison means nothing.
cmp <(curl -fs "http://127.0.0.1:$pd/runs/$id") <(curl -fs "http://127.0.0.1:$pb1/x")
cmp <(curl -fs "http://127.0.0.1:$pd/runs/$id") <(curl -fs "http://127.0.0.1:$pn/run")

rss() { awk '/VmRSS/ {print $2}' /proc/$daemon_pid/status; }
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $(date -u +%Y-%m-%dT%H:%MZ)"
echo "run body $(wc -c <"$dir/run.json") bytes, list body $(wc -c <"$dir/list.json") bytes; wrk -t$threads -c$conns -d$duration, $rounds rounds"
echo "gpubenchd RSS before: $(rss) kB; load average $(cut -d' ' -f1-3 /proc/loadavg)"
results=$dir/results.txt
for r in $(seq "$rounds"); do
  measure "run:gpubenchd" "http://127.0.0.1:$pd/runs/$id" >>"$results"
  measure "run:bare" "http://127.0.0.1:$pb1/runs/$id" >>"$results"
  measure "run:nginx" "http://127.0.0.1:$pn/run" >>"$results"
  measure "list:gpubenchd" "http://127.0.0.1:$pd/runs?limit=50" >>"$results"
  measure "list:bare" "http://127.0.0.1:$pb2/runs?limit=50" >>"$results"
  measure "list:nginx" "http://127.0.0.1:$pn/list" >>"$results"
done
echo "gpubenchd RSS after: $(rss) kB; load average $(cut -d' ' -f1-3 /proc/loadavg)"
cpu=$dir/cpu.txt
for r in $(seq "${CPU_ROUNDS:-3}"); do
  cpu_measure "run:gpubenchd" "$daemon_pid" "http://127.0.0.1:$pd/runs/$id" >>"$cpu"
  cpu_measure "run:bare" "$bare_run_pid" "http://127.0.0.1:$pb1/runs/$id" >>"$cpu"
  cpu_measure "list:gpubenchd" "$daemon_pid" "http://127.0.0.1:$pd/runs?limit=50" >>"$cpu"
  cpu_measure "list:bare" "$bare_list_pid" "http://127.0.0.1:$pb2/runs?limit=50" >>"$cpu"
done
echo "after the CPU rounds: load average $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" "$cpu" <<'PY'
import os, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, rps, p50, p99, errs = line.split()
    rows.setdefault(name, []).append((float(rps), float(p50), float(p99), int(errs)))
def med(name, i):
    return statistics.median(x[i] for x in rows[name])
print("%-16s %10s %9s %9s %7s   %s" % ("target", "req/s", "p50 ms", "p99 ms", "errors", "req/s ratio to bare, nginx"))
for url in ("run", "list"):
    for who in ("gpubenchd", "bare", "nginx"):
        n = "%s:%s" % (url, who)
        ratio = "%.2f, %.2f" % (med(n, 0) / med(url + ":bare", 0), med(n, 0) / med(url + ":nginx", 0))
        print("%-16s %10.0f %9.3f %9.3f %7d   %s" % (n, med(n, 0), med(n, 1), med(n, 2),
                                                 sum(x[3] for x in rows[n]), ratio))
cpu = {}
if os.path.exists(sys.argv[2]):
    for line in open(sys.argv[2]):
        name, us, n = line.split()
        cpu.setdefault(name, []).append(float(us))
if cpu:
    print("CPU a request (wrk -t1 -c8), each round's us, the median, bare/gpubenchd:")
    for url in ("run", "list"):
        d, b = cpu[url + ":gpubenchd"], cpu[url + ":bare"]
        print("%-5s gpubenchd %s -> %.2f us; bare %s -> %.2f us; ratio %.2f" % (
            url, " ".join("%.2f" % x for x in d), statistics.median(d),
            " ".join("%.2f" % x for x in b), statistics.median(b),
            statistics.median(b) / statistics.median(d)))
PY
