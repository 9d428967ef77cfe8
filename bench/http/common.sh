# bench/http/common.sh - what run.sh and run_tls.sh share, sourced by both:
# their settings and work folder, a free loopback port, waiting for an
# answer, one wrk measurement, and a server's CPU time a request.
# WRK_CURL: curl's options for wait_http (the CA, for https).

# bench_setup NAME BUILD_DIR: build (absolute), the round settings (ROUNDS,
# DURATION, CONNS, THREADS), a work folder dir, and pids: what the script
# starts, stopped at its exit with any nginx it ran.
bench_setup() {
  build=$(cd "$2" && pwd)
  rounds=${ROUNDS:-3}
  duration=${DURATION:-10s}
  conns=${CONNS:-64}
  threads=${THREADS:-2}
  dir=$(mktemp -d "/tmp/gpubench-bench-$1.XXXXXX")
  pids=()
  trap bench_cleanup EXIT
}
bench_cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -f "$dir/nginx.pid" ] && kill "$(cat "$dir/nginx.pid")" 2>/dev/null || true
  wait 2>/dev/null || true
}

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_http() { for _ in $(seq 100); do curl -fs ${WRK_CURL:-} "$1" >/dev/null 2>&1 && return 0; sleep 0.05; done; echo "no answer from $1" >&2; exit 1; }

# measure NAME URL [wrk options] -> "NAME rps p50_ms p99_ms errors"
measure() {
  local out
  out=$(wrk -t"$threads" -c"$conns" -d"$duration" --latency "${@:3}" "$2")
  python3 - "$1" <<PY "$out"
import re, sys
name, text = sys.argv[1], sys.argv[2]
def ms(label):
    m = re.search(r"^\s*%s\s+([\d.]+)(us|ms|s)\s*$" % label, text, re.M)
    v, unit = float(m.group(1)), m.group(2)
    return v / 1000 if unit == "us" else v * 1000 if unit == "s" else v
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
errs = sum(int(x) for x in re.findall(r"(?:connect|read|write|timeout) (\d+)", text))
non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
errs += int(non2xx.group(1)) if non2xx else 0
print("%s %.0f %.3f %.3f %d" % (name, rps, ms("50%"), ms("99%"), errs))
PY
}

# cpu_measure NAME PID URL -> "NAME us_per_request requests": the server's
# own CPU time (utime + stime of all its threads, /proc/PID/stat, in clock
# ticks) over the requests wrk counted, wrk -t1 -c8 for CPU_DURATION (8s).
# Steadier than req/s on a shared machine: the other programs' load slows
# both sides of a pair but does not add to a server's own time.
cpu_measure() {
  local before after out
  before=$(awk '{print $14 + $15}' "/proc/$2/stat")
  out=$(wrk -t1 -c8 -d"${CPU_DURATION:-8s}" "$3")
  after=$(awk '{print $14 + $15}' "/proc/$2/stat")
  python3 - "$1" "$before" "$after" "$(getconf CLK_TCK)" <<PY "$out"
import re, sys
name, before, after, hz, text = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
n = int(re.search(r"(\d+) requests in", text).group(1))
print("%s %.2f %d" % (name, (after - before) / hz * 1e6 / max(n, 1), n))
PY
}
