#!/usr/bin/env bash
# bench/http/run_tls.sh [BUILD_DIR] - gpubenchd over TLS 1.3 (--web-config,
# libmicrohttpd's GnuTLS) against nginx serving the same bytes with the same
# certificate (a P-256 key from a test CA made here) and the same settings
# (TLS 1.3 only, no session tickets or cache on either: every new connection
# is a full handshake), in the same run, alternating:
#   keep-alive  GET /runs/ID of a real H200 run, wrk -t2 -c64 (as run.sh);
#   handshakes  the same with 'Connection: close': new connections a second.
# ROUNDS rounds of DURATION each, the median round reported, with each
# server's CPU time (all its threads or workers) a request.  nginx runs a
# worker a core (NGINX_WORKERS to change it); gpubenchd its 4 HTTP threads
# (DAEMON_ARGS="--http-threads N").  On a loaded machine more threads get
# more of the cores, so the CPU a request is the fairer comparison.  Loopback only;
# everything it starts it stops.  Needs wrk and nginx (Debian packages wrk,
# nginx-light) and openssl.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/bench/http/common.sh"
bench_setup tls "${1:-build}"

# The certificates, with the test suite's own helper.  The export holds
# test_fault and test_hang runs too: --test-benchmarks takes them.
PYTHONPATH="$top/tests/api" python3 -c '
import sys, tls_certs
c = tls_certs.Certs(sys.argv[1])
c.ca("ca")
c.server("server", "ca")
c.web_config("web", "server.crt", "server.key", min_version="TLS13")
' "$dir"
WRK_CURL="--cacert $dir/ca.crt"

pd=$(port)
"$build/bin/gpubenchd" --listen 127.0.0.1:$pd --db "$dir/gpubench.db" --web-config "$dir/web.yml" \
  --worker "$build/tests/gpubench-fake-worker" --rate-limit 0 --test-benchmarks ${DAEMON_ARGS:-} \
  >"$dir/daemon.log" 2>&1 &
pids+=($!)
daemon_pid=$!
base=https://127.0.0.1:$pd
wait_http "$base/healthz"
curl -fs $WRK_CURL -H 'Content-Type: application/x-ndjson' --data-binary @"$top/examples/h200x2_daemon/runs.ndjson" "$base/runs/import" >/dev/null
id=$(curl -fs $WRK_CURL "$base/runs?benchmark=smem_stride&device=NVIDIA%20H200&status=done&limit=1" |
     python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
curl -fs $WRK_CURL "$base/runs/$id" >"$dir/run.json"

pn=$(port)
cat >"$dir/nginx.conf" <<CONF
worker_processes ${NGINX_WORKERS:-$(nproc)};
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
    listen 127.0.0.1:$pn ssl;
    ssl_certificate $dir/server.crt;
    ssl_certificate_key $dir/server.key;
    ssl_protocols TLSv1.3;
    ssl_session_tickets off;
    ssl_session_cache off;
    root $dir;
    location = /run { try_files /run.json =404; }
  }
}
CONF
nginx -c "$dir/nginx.conf" -p "$dir"
wait_http "https://127.0.0.1:$pn/run"
cmp <(curl -fs $WRK_CURL "$base/runs/$id") <(curl -fs $WRK_CURL "https://127.0.0.1:$pn/run")
# Both speak TLS 1.3 with the same certificate.
for p in $pd $pn; do
  openssl s_client -connect 127.0.0.1:$p -tls1_3 -CAfile "$dir/ca.crt" </dev/null 2>/dev/null |
    grep -q "Verify return code: 0" || { echo "port $p: no verified TLS 1.3" >&2; exit 1; }
done

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $(date -u +%Y-%m-%dT%H:%MZ); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "run body $(wc -c <"$dir/run.json") bytes; wrk -t$threads -c$conns -d$duration, $rounds rounds; TLS 1.3, P-256"
# The server's CPU time (user + system, every thread or worker) a request:
# measure's line and then the server's CPU ms a request.
nginx_workers=$(pgrep -P "$(cat "$dir/nginx.pid")" | tr '\n' ' ')
cpu_ticks() { local s=0 p f; for p in "$@"; do f=($(cut -d')' -f2 /proc/$p/stat)); s=$((s + f[11] + f[12])); done; echo $s; }
measure_cpu() { # NAME URL PIDS [wrk options]
  local name=$1 url=$2 pids=$3 c0 c1 line
  c0=$(cpu_ticks $pids)
  line=$(measure "$name" "$url" "${@:4}")
  c1=$(cpu_ticks $pids)
  python3 -c 'import sys; l=sys.argv[1].split(); n=float(l[1])*float(sys.argv[4]);
print(sys.argv[1], "%.3f" % ((int(sys.argv[3])-int(sys.argv[2]))*1000/float(sys.argv[5])/max(n,1)))' \
    "$line" "$c0" "$c1" "${duration%s}" "$(getconf CLK_TCK)"
}
results=$dir/results.txt
for r in $(seq "$rounds"); do
  measure_cpu "keepalive:gpubenchd" "$base/runs/$id" "$daemon_pid" >>"$results"
  measure_cpu "keepalive:nginx" "https://127.0.0.1:$pn/run" "$nginx_workers" >>"$results"
  measure_cpu "handshake:gpubenchd" "$base/runs/$id" "$daemon_pid" -H "Connection: close" >>"$results"
  measure_cpu "handshake:nginx" "https://127.0.0.1:$pn/run" "$nginx_workers" -H "Connection: close" >>"$results"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, rps, p50, p99, errs, cpu = line.split()
    rows.setdefault(name, []).append((float(rps), float(p50), float(p99), int(errs), float(cpu)))
def med(name, i):
    return statistics.median(x[i] for x in rows[name])
print("%-20s %10s %9s %9s %7s %13s   %s" % ("target", "req/s", "p50 ms", "p99 ms", "errors",
                                           "cpu ms a req", "ratio to nginx"))
for kind in ("keepalive", "handshake"):
    for who in ("gpubenchd", "nginx"):
        n = "%s:%s" % (kind, who)
        print("%-20s %10.0f %9.3f %9.3f %7d %13.3f   %.2f" % (
            n, med(n, 0), med(n, 1), med(n, 2), sum(x[3] for x in rows[n]), med(n, 4),
            med(n, 0) / med(kind + ":nginx", 0)))
print("rounds (req/s, gpubenchd/nginx):")
for kind in ("keepalive", "handshake"):
    g, x = rows[kind + ":gpubenchd"], rows[kind + ":nginx"]
    print("  %-10s %s" % (kind, "  ".join("%.0f/%.0f" % (a[0], b[0]) for a, b in zip(g, x))))
PY
