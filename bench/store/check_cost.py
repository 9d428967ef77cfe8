"""bench/store/check_cost.py BUILD_DIR DB - what the daemon's own database
check (--db-check-delay, store_check.c) costs on a big database: how long it
takes, and the latency of GET /runs/ID (random runs, one client) before it
starts and while it runs.  The daemon runs with the worker test double.
Make DB with gpubench-make-db (see run.sh)."""
import http.client
import os
import random
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100.0 * (len(values) - 1))))]


def main(build, db):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    ids = [r[0] for r in con.execute("SELECT id FROM runs ORDER BY random() LIMIT 5000")]
    runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    con.close()
    log_path = tempfile.mktemp(prefix="gpubench-check-cost-", suffix=".log")
    delay = 15
    log = open(log_path, "wb")
    proc = subprocess.Popen([os.path.join(build, "bin", "gpubenchd"), "--listen", "127.0.0.1:0",
                             "--db", db, "--worker",
                             os.path.join(build, "tests", "gpubench-fake-worker"),
                             "--db-check-delay", str(delay), "--db-check-interval", "0"],
                            stdout=log, stderr=subprocess.STDOUT)
    started = time.time()
    try:
        port = None
        while port is None:
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", open(log_path).read())
            port = int(m.group(1)) if m else None
            time.sleep(0.05)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        before, during = [], []
        rng = random.Random(1)
        done = None
        while done is None and time.time() - started < 3600:
            t0 = time.perf_counter()
            conn.request("GET", "/runs/" + rng.choice(ids))
            r = conn.getresponse()
            r.read()
            ms = (time.perf_counter() - t0) * 1000
            assert r.status == 200, r.status
            text = open(log_path).read()
            if "database check:" in text:
                done = re.search(r"database check: (.*)", text).group(1)
            elif time.time() - started < delay - 1:
                before.append(ms)
            elif time.time() - started > delay + 0.5:
                during.append(ms)
        print("database: %s, %d runs, %.1f GB" % (db, runs, os.path.getsize(db) / 1e9))
        print("check: %s" % done)
        for name, v in (("before the check", before), ("during the check", during)):
            if v:
                print("GET /runs/ID %s: %d requests, p50 %.2f ms, p99 %.2f ms, max %.1f ms" %
                      (name, len(v), statistics.median(v), pct(v, 99), max(v)))
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
