"""bench/store/measure.py BUILD_DIR DB [verdicts] - the targets of issue 9 against a
database of many runs (make one with gpubench-make-db; see run.sh):
startup time, resident memory idle and after the queries, filtered GET /runs
pages through the cursor, GET /compare, POST /runs to its 202, the daemon's
overhead around a run, and bytes per stored run.

Issue 14's targets too: a run's verdicts at its end (gpubench-judge-time,
in process: 20 ms p99), GET /fleet and GET /compare with verdicts
(baseline= and candidate=: 50 ms p99).  With "verdicts" only those.

The daemon runs with the worker test double (tests/fake_worker.c), so the
GPU takes no time and what is timed is the daemon.  Loopback only."""
import http.client
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "api"))
from harness import free_port  # noqa: E402


def pct(values, p):
    values = sorted(values)
    k = min(len(values) - 1, int(round(p / 100.0 * (len(values) - 1))))
    return values[k]


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


class Client:
    def __init__(self, port):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def timed(self, method, path, body=None):
        t0 = time.perf_counter()
        # A body goes with its type, as the daemon asks (415 otherwise).
        headers = {"Content-Type": "application/json"} if body is not None else {}
        self.conn.request(method, path, body=body, headers=headers)
        r = self.conn.getresponse()
        data = r.read()
        return (time.perf_counter() - t0) * 1000.0, r.status, data


def start(build, db, port, env=None):
    t0 = time.perf_counter()
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.Popen([os.path.join(build, "bin", "gpubenchd"), "--listen", "127.0.0.1:%d" % port,
                             "--db", db, "--worker", os.path.join(build, "tests", "gpubench-fake-worker"),
                             "--rate-limit", "0", "--max-queue", "1000000"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=full_env)
    while True:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            c.request("GET", "/healthz")
            if c.getresponse().status == 200:
                return proc, (time.perf_counter() - t0) * 1000.0
        except OSError:
            pass
        if proc.poll() is not None:
            raise SystemExit("gpubenchd exited")
        time.sleep(0.001)


def stop(proc):
    proc.terminate()
    proc.wait(30)


def line(name, values, target=None):
    p50, p99 = pct(values, 50), pct(values, 99)
    verdict = "" if target is None else ("met" if p99 <= target else "MISSED by %.1f ms" % (p99 - target))
    print("| %s | %d | %.2f | %.2f | %.2f | %s |" % (name, len(values), p50, p99, max(values),
                                                     ("%s ms: %s" % (target, verdict)) if target else ""))


def verdict_measurements(build, db, c):
    """Issue 14: the verdicts a run gets at its end, timed in process on the
    newest runs (their history and fleet are full), and the two reads."""
    con = sqlite3.connect(db)
    # Two filler cards of one model with runs of one key: the compare's groups.
    key, a, b = con.execute(
        "SELECT verdict_key, min(device_uuid), max(device_uuid) FROM fleet_latest "
        "WHERE benchmark = 'smem_stride' GROUP BY verdict_key ORDER BY count(*) DESC LIMIT 1").fetchone()
    con.close()
    out = subprocess.run([os.path.join(build, "bench", "gpubench-judge-time"), db, "300"],
                         capture_output=True, text=True, check=True)
    print(out.stdout.strip())
    for bench in ("smem_stride", "transpose"):
        times = []
        for _ in range(50):
            ms, status, data = c.timed("GET", "/fleet?benchmark=" + bench)
            assert status == 200, data[:200]
            times.append(ms)
        groups = json.loads(data)["groups"]
        line("GET /fleet?benchmark=%s (%d groups, %d cards)" % (bench, len(groups), sum(len(g["cards"]) for g in groups)),
             times, 50)
    for extra, what in (("", "newest 200 runs of its key a side"), ("&since=2025-06-01", "since 2025-06-01")):
        times = []
        for _ in range(30):
            ms, status, data = c.timed("GET", "/compare?benchmark=smem_stride&baseline=card:%s&candidate=card:%s%s"
                                       % (a, b, extra))
            assert status == 200, data[:300]
            times.append(ms)
        d = json.loads(data)
        line("GET /compare baseline=card: candidate=card: smem_stride, %s (%d / %d runs, verdict %s)"
             % (what, d["baseline"]["n_runs"], d["candidate"]["n_runs"], d.get("verdict")), times, 50)


def main(build, db):
    con = sqlite3.connect(db)
    count = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    # A card of the filler fleet (not the test double this script posts to).
    card = con.execute("SELECT device_uuid FROM runs WHERE benchmark='smem_stride' "
                       "AND label = 'bench-fill' ORDER BY id DESC LIMIT 1").fetchone()[0]
    cursors = [r[0] for r in con.execute(
        "SELECT id FROM runs WHERE device_uuid = ? AND benchmark = 'smem_stride' "
        "ORDER BY random() LIMIT 300", (card,))]
    con.close()
    size = sum(os.path.getsize(db + ext) for ext in ("", "-wal") if os.path.exists(db + ext))
    print("database: %d runs, %.2f GB, %.0f bytes a run" % (count, size / 1e9, size / max(count, 1)))
    print("machine: %d cores, %s; %s" % (os.cpu_count(), open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(": "),
                                         time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())))

    port = free_port()
    starts = []
    for _ in range(5):
        proc, ms = start(build, db, port)
        starts.append(ms)
        idle = rss_kb(proc.pid)
        stop(proc)
    proc, ms = start(build, db, port)
    starts.append(ms)
    idle = rss_kb(proc.pid)
    c = Client(port)
    print("\n| measurement | n | p50 ms | p99 ms | max ms | target |\n|---|---|---|---|---|---|")
    line("startup to /healthz 200", starts, 100)

    base = "/runs?device=%s&benchmark=smem_stride&limit=50" % card
    first, pages = [], []
    for _ in range(50):
        ms, status, _ = c.timed("GET", base)
        assert status == 200
        first.append(ms)
    for cur in cursors:
        ms, status, data = c.timed("GET", base + "&cursor=" + cur)
        assert status == 200, data[:200]
        pages.append(ms)
    line("GET /runs card+benchmark, first page", first, 5)
    line("GET /runs card+benchmark, random pages by cursor", pages, 5)
    # following the next links, as a client pages through
    follow = []
    url = base
    for _ in range(100):
        ms, status, data = c.timed("GET", url)
        follow.append(ms)
        url = json.loads(data)["next"]
        if not url:
            break
    line("GET /runs card+benchmark, following next", follow, 5)

    for bench in ("smem_stride", "transpose"):
        cmp_ = []
        for _ in range(30):
            ms, status, data = c.timed("GET", "/compare?benchmark=" + bench)
            assert status == 200
            cmp_.append(ms)
        line("GET /compare?benchmark=%s (%d series)" % (bench, len(json.loads(data)["series"])), cmp_, 50)
    verdict_measurements(build, db, c)

    posts = []
    for _ in range(300):
        ms, status, _ = c.timed("POST", "/runs", json.dumps({"benchmark": "smem_pattern", "params": {"samples": 3}}))
        assert status == 202, status
        posts.append(ms)
    line("POST /runs to its 202, runs executing back to back", posts, 2)
    time.sleep(2)

    # The daemon's overhead around a run: post to result with a worker that
    # does no work, minus what that worker takes on its own.
    body = json.dumps({"benchmark": "smem_stride", "params": {"strides": [1, 32], "samples": 3}})
    around = []
    for _ in range(100):
        ms, status, data = c.timed("POST", "/runs?wait=10", body)
        assert status == 200 and json.loads(data)["status"] == "done"
        around.append(ms)
    worker = subprocess.Popen([os.path.join(build, "tests", "gpubench-fake-worker"), "--serve", "--device", "0"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    worker.stdout.readline()
    alone = []
    for i in range(100):
        t0 = time.perf_counter()
        worker.stdin.write(json.dumps({"id": "x%d" % i, "benchmark": "smem_stride",
                                       "params": {"strides": [1, 32], "samples": 3}}) + "\n")
        while json.loads(worker.stdout.readline())["event"] != "result":
            pass
        alone.append((time.perf_counter() - t0) * 1000.0)
    worker.stdin.close()
    worker.wait()
    line("post to result (?wait), test double", around)
    line("the test double alone, same job", alone)
    overhead = [a - statistics.median(alone) for a in around]
    line("daemon overhead around a run", overhead, 20)
    after = rss_kb(proc.pid)
    stop(proc)

    # Posting into a queue while the GPU is busy with a long run: what a
    # user sees most of the time (the runner writes nothing meanwhile).
    proc, _ = start(build, db, port, {"GPUBENCH_FAKE_DELAY_MS": "60000"})
    c = Client(port)
    c.timed("POST", "/runs", json.dumps({"benchmark": "smem_pattern", "params": {"samples": 3}}))
    queued, ids = [], []
    for _ in range(300):
        ms, status, data = c.timed("POST", "/runs", json.dumps({"benchmark": "smem_pattern", "params": {"samples": 3}}))
        assert status == 202, status
        queued.append(ms)
        ids.append(json.loads(data)["id"])
    line("POST /runs to its 202, into the queue of a busy GPU", queued, 2)
    for run_id in ids:  # leave no queue behind for the next measurement
        c.timed("DELETE", "/runs/" + run_id)
    proc.kill()
    proc.wait()
    print("\nresident memory: %.1f MB idle after start, %.1f MB after the queries (targets: 20 MB idle, 64 MB with a million runs)"
          % (idle / 1024.0, after / 1024.0))


def main_verdicts(build, db):
    port = free_port()
    proc, _ = start(build, db, port)
    print("machine: %d cores; %s" % (os.cpu_count(), time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())))
    print("\n| measurement | n | p50 ms | p99 ms | max ms | target |\n|---|---|---|---|---|---|")
    try:
        verdict_measurements(build, db, Client(port))
    finally:
        stop(proc)


if __name__ == "__main__":
    if sys.argv[3:] == ["verdicts"]:
        main_verdicts(sys.argv[1], sys.argv[2])
    else:
        main(sys.argv[1], sys.argv[2])
