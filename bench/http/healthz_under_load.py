#!/usr/bin/env python3
"""bench/http/healthz_under_load.py - does GET /healthz stay fast while a
hub's heavy reads run (issue 33, point 4: p99 under 50 ms)?

One gpubenchd holding CARDS cards of NODES = CARDS / 2 nodes (two cards a
node), as a hub holds what it pulled: the H200 health suite's six one-card
runs on every card and the node's p2p run (examples/h200_daemon_health,
examples/h200x2_daemon_health), each copy with its own host, card UUID and
id, imported through POST /runs/import (bench/check's copies).  Then, for
DURATION seconds, CLIENTS clients of each of /metrics, /coverage and /cards
(default 2: six heavy reads at once, more than the 4 HTTP threads) read in
a loop, one request after another each, while a prober asks GET /healthz and
GET /runs/ID (a run of the hub, on a new connection each, as a monitor
does) every PERIOD ms; the heavy reads are curl loops in processes of their
own, so that the probe's timings are the daemon's, not this script's.
Printed: the probes' p50, p99 and worst, how many failed or timed out
(TIMEOUT s), and how many heavy reads were answered and in how long.

    python3 bench/http/healthz_under_load.py --build build [--cards 8000]
        [--duration 30] [--clients 2] [--idle] [--daemon-args ARGS]
        [--keep DIR [--reuse]] [--out results.json]

--idle leaves the heavy reads out: the probes alone, what the machine's own
load does to them.  --keep DIR keeps the database (DIR/hub.db); --reuse
measures the one an earlier run left there, so that two builds (before and
after a change) are measured on the same store.  Everything it starts it stops.
"""
import argparse
import http.client
import importlib.util
import json
import os
import statistics
import sys
import signal
import subprocess
import tempfile
import time
import uuid

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location("check_bench", os.path.join(TOP, "bench", "check", "run.py"))
check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check)
fleet = check.fleet
log = fleet.log

HEAVY = ["/metrics", "/coverage", "/cards"]
TIMEOUT = 30


def fill(d, cards):
    """cards cards, two a node: the health suite on each, the p2p run on
    the node's first, imported 2,000 runs a request."""
    singles, p2p = check.health_templates()
    now = int(time.time() * 1000)
    new_id = fleet.Uuid7()
    lines = []
    for n in range((cards + 1) // 2):
        host = "node%05d" % n
        uuids = ["GPU-" + str(uuid.uuid4()) for _ in range(min(2, cards - 2 * n))]
        ms = now - 3 * 3600 * 1000 + n
        for i, card in enumerate(uuids):
            for run in singles:
                lines.append(check.copy_run(run, new_id(ms), host, card, i, ms))
        lines.append(check.copy_run(p2p, new_id(ms), host, uuids[0], 0, ms))
        if len(lines) >= 2000:
            check.import_all(d, lines)
            lines = []
    check.import_all(d, lines)


def get(port, path, timeout=TIMEOUT):
    """(status, seconds) of GET path on a new connection; status None when
    it timed out or failed."""
    t = time.monotonic()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", path)
        r = c.getresponse()
        r.read()
        return r.status, time.monotonic() - t
    except OSError:
        return None, time.monotonic() - t
    finally:
        c.close()


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))] if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--cards", type=int, default=8000)
    ap.add_argument("--duration", type=float, default=30)
    ap.add_argument("--period-ms", type=float, default=20)
    ap.add_argument("--keep")
    ap.add_argument("--reuse", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--clients", type=int, default=2,
                    help="reading loops of each heavy path (default 2: 6 in all, more "
                         "than the daemon's 4 HTTP threads)")
    ap.add_argument("--daemon-args", default="",
                    help="more options for the measured daemon, e.g. --db-check-delay 3600")
    ap.add_argument("--idle", action="store_true",
                    help="no heavy reads: the probes alone, the machine's own noise")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    work = a.keep or tempfile.mkdtemp(prefix="gpubench-healthz-")
    os.makedirs(work, exist_ok=True)
    result = {"cards": a.cards, "duration_s": a.duration, "period_ms": a.period_ms,
              "heavy_clients": 0 if a.idle else a.clients * len(HEAVY)}
    try:
        if not a.reuse:
            for f in ("hub.db", "hub.db-wal", "hub.db-shm"):
                if os.path.exists(os.path.join(work, f)):
                    os.remove(os.path.join(work, f))
            d = fleet.Daemon(build, work, "hub", [])
            d.wait_port(time.time() + 30)
            t = time.time()
            fill(d, a.cards)
            result["import_s"] = round(time.time() - t, 1)
            log("%d cards imported in %.0f s" % (a.cards, result["import_s"]))
            d.stop()
        d = fleet.Daemon(build, work, "hub", a.daemon_args.split())
        port = d.wait_port(time.time() + 120)
        while get(port, "/healthz", 5)[0] != 200:
            time.sleep(0.1)
        status, body = d.request("GET", "/runs?limit=1")
        run_path = "/runs/" + json.loads(body)["runs"][0]["id"]
        # The heavy reads from processes of their own (curl in a loop), so
        # that reading their megabytes never holds up the probe's thread.
        loops = []
        for p in ([] if a.idle else HEAVY * a.clients):
            out = open(os.path.join(work, "heavy%s-%d.txt" % (p.replace("/", "_"), len(loops))), "w")
            loops.append((p, out.name, subprocess.Popen(
                ["sh", "-c", "while :; do curl -s -o /dev/null -m 600 -w '%%{http_code} "
                 "%%{time_total}\\n' http://127.0.0.1:%d%s; done" % (port, p)],
                stdout=out, start_new_session=True)))
        time.sleep(1)  # the heavy reads under way
        probes = {"/healthz": [], run_path: []}
        end = time.monotonic() + a.duration
        while time.monotonic() < end:
            for p in probes:
                probes[p].append(get(port, p))
            time.sleep(a.period_ms / 1000.0)
        for _, _, proc in loops:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for name, xs in probes.items():
            ok = [s for st, s in xs if st == 200]
            key = "healthz" if name == "/healthz" else "run"
            result[key] = {"n": len(xs), "failed": len(xs) - len(ok),
                           "p50_ms": round(pct(ok, 50) * 1000, 2) if ok else None,
                           "p99_ms": round(pct(ok, 99) * 1000, 2) if ok else None,
                           "max_ms": round(max(ok) * 1000, 2) if ok else None}
        for p in ([] if a.idle else HEAVY):
            done = []
            for path in (name for q, name, _ in loops if q == p):
                with open(path) as f:
                    done += [float(t) for st, t in (l.split() for l in f if l.strip())
                             if st == "200"]
            result[p] = {"answered": len(done),
                         "median_s": round(statistics.median(done), 3) if done else None}
        result["load"] = open("/proc/loadavg").read().split()[:3]
        log(json.dumps(result, indent=1))
        if a.out:
            with open(a.out, "w") as f:
                json.dump(result, f, indent=1)
        # The heavy loops may be inside a read that takes minutes: stop now.
        d.proc.kill()
        d.proc.wait()
    finally:
        for p in fleet.PROCS:
            if p.poll() is None:
                p.kill()


if __name__ == "__main__":
    main()
