#!/usr/bin/env bash
# bench/http/callgrind_run.sh [BUILD_DIR] [N] - the instructions gpubenchd spends
# on a GET /runs/ID, without the machine's noise: callgrind over N (5,020)
# keep-alive GET /runs/ID of a real H200 run (examples/h200x2_daemon) from
# one http.client connection, then the same over bare_mhd.c answering those
# bytes.  Prints each one's instructions a request: our handler (on_access
# and below; bare: its answer) and libmicrohttpd's whole thread.  The
# callgrind files stay in the printed folder (callgrind_annotate
# --inclusive=yes FILE for the rest).  Needs valgrind.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-build}" && pwd)
n=${2:-5020}
dir=$(mktemp -d /tmp/gpubench-callgrind-XXXXXX)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; true' EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
up() { for _ in $(seq 300); do curl -fs "$1" >/dev/null 2>&1 && return 0; sleep 0.2; done; return 1; }
p=$(port)
args=(--listen "127.0.0.1:$p" --db "$dir/g.db" --worker "$build/tests/gpubench-fake-worker"
      --rate-limit 0 --test-benchmarks --db-check-delay 3600)
"$build/bin/gpubenchd" "${args[@]}" >"$dir/fill.log" 2>&1 & pid=$!
up "http://127.0.0.1:$p/healthz"
curl -fs -H 'Content-Type: application/x-ndjson' \
  --data-binary @"$top/examples/h200x2_daemon/runs.ndjson" "http://127.0.0.1:$p/runs/import" >/dev/null
id=$(curl -fs "http://127.0.0.1:$p/runs?limit=1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')
curl -fs "http://127.0.0.1:$p/runs/$id" >"$dir/run.json"
kill "$pid"; wait "$pid" || true

ask() { # PORT PATH: n keep-alive GETs on one connection
  python3 - "$1" "$2" "$n" <<'PY'
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]))
for _ in range(int(sys.argv[3])):
    c.request("GET", sys.argv[2]); r = c.getresponse(); r.read()
PY
}
per() { # FILE FUNCTION-PATTERN: inclusive instructions / n
  callgrind_annotate --inclusive=yes "$1" 2>/dev/null |
    awk -v pat="$2" -v n="$n" '$0 ~ pat {gsub(",", "", $1); printf "%d", $1 / n; exit}'
}
valgrind --tool=callgrind --callgrind-out-file="$dir/gpubenchd.cg" \
  "$build/bin/gpubenchd" "${args[@]}" >"$dir/daemon.log" 2>&1 & pid=$!
up "http://127.0.0.1:$p/healthz"
ask "$p" "/runs/$id"
kill -INT "$pid"; wait "$pid" || true
pb=$(port)
valgrind --tool=callgrind --callgrind-out-file="$dir/bare.cg" \
  "$build/bench/gpubench-bare-mhd" "$pb" "$dir/run.json" >/dev/null 2>&1 & pid=$!
up "http://127.0.0.1:$pb/"
ask "$pb" "/runs/$id"
kill -INT "$pid"; wait "$pid" || true
pid=
echo "$n GET /runs/ID ($(wc -c <"$dir/run.json") bytes); files in $dir"
echo "gpubenchd: on_access $(per "$dir/gpubenchd.cg" 'http.c:on_access \[') a request" \
     "(the one healthz and list of this script included)"
echo "bare:      answer $(per "$dir/bare.cg" 'bare_mhd.c:answer \[') a request"
