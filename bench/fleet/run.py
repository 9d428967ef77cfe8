#!/usr/bin/env python3
"""bench/fleet/run.py - one hub following N nodes, measured (issue 22).

Starts N node daemons on loopback without a GPU (the worker's test double
with GPUBENCH_FAKE_GPUS=0: the node only stores and serves runs), imports
K real runs into each (the H200 runs of examples/h200_daemon_health and
examples/h200_daemon_trust, each copy with a fresh UUIDv7 id, the node's
host name and a card UUID of its own, so every run is distinct), writes a
peers file in the Prometheus file_sd format with rack and row labels, and
starts one hub with --peers-file and --peer-concurrency.  Then, in order:

  converge   time from the hub's start until it holds all N*K runs, its
             resident memory sampled every 0.5 s (the largest VmRSS, and
             VmHWM at the end) and its CPU seconds per pulled run
             (utime+stime of /proc/PID/stat)
  wave       10% of the nodes stopped, one new run imported on each of the
             others: time until all arrive, in pull intervals; the stopped
             ones must show their error and back off (GET /peers)
  add        ADD more nodes written into the peers file while the hub runs:
             time until their runs arrive, in intervals (no restart)
  peers      GET /peers, 200 requests one after another on fresh
             connections: p50 and p99, and the counts by state
  metrics    GET /metrics, 20 requests: the first on its own (the hub was
             not scraped since the pull: its heavy collectors are made for
             it, metrics_cache.h), p50 and p99 of the others, its series
             and series a card, promtool's word (issue 33)

--scrape-every S scrapes GET /metrics every S seconds from the hub's start,
as Prometheus would, so that the CPU a pulled run includes the heavy
collectors made again for those scrapes (by default nobody scrapes the hub
while it pulls, and it makes them only once, at its start).

Prints a table and writes it as JSON (--out).  --peer-flags gives the hub
--peer URL flags instead of a peers file (a daemon from before --peers-file:
the add phase is then skipped, and such a daemon takes 32 peers at most).
Everything it starts it stops; the temporary folder is removed unless --keep.
Counting the hub's runs reads its database (read-only, SQLite's WAL lets a
reader beside the writer) so that the count costs the hub no request.

    python3 bench/fleet/run.py --build build --nodes 1000 --runs 100
"""
import argparse
import concurrent.futures
import http.client
import json
import os
import re
import resource
import shutil
import shlex
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = [os.path.join(TOP, "examples", "h200_daemon_health", "health_runs.ndjson"),
            os.path.join(TOP, "examples", "h200_daemon_trust", "trust_runs.ndjson")]
LISTENING = re.compile(rb"listening on https?://127\.0\.0\.1:(\d+)")
TICK = os.sysconf("SC_CLK_TCK")
PROCS = []  # every process started, stopped at exit


def log(*a):
    print(*a, flush=True)


class Uuid7:
    """Time-ordered run ids, as the daemon makes them: the millisecond, then
    a counter within it, then random bits."""

    def __init__(self):
        self.last, self.seq = 0, 0

    def __call__(self, ms=None):
        """An id made now, or at ms (bench/check dates runs over a year;
        ids must rise with it)."""
        ms = int(time.time() * 1000) if ms is None else ms
        if ms <= self.last:
            self.seq += 1
            ms = self.last
        else:
            self.seq = 0
        self.last = ms
        rand = int.from_bytes(os.urandom(8), "big")
        h = "%012x7%03x%016x" % (ms, self.seq & 0xFFF, (rand & 0x3FFFFFFFFFFFFFFF) | 0x8000000000000000)
        return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


def templates():
    """The examples' finished runs as JSON text, each with the strings a
    copy replaces: its id, and its card's UUID."""
    out = []
    for path in EXAMPLES:
        with open(path) as f:
            for line in f:
                if line.strip():
                    run = json.loads(line)
                    if run["status"] == "done" and not run["benchmark"].startswith("test_"):
                        run.pop("seq", None)
                        run["batch"] = None
                        out.append(run)
    if not out:
        sys.exit("no run in " + ", ".join(EXAMPLES))
    return out


def copies(tmpl, new_id, host, card, count, start):
    """count runs as NDJSON: templates round-robin from start, each with a
    fresh id, the node's host and its card's UUID."""
    lines = []
    for i in range(count):
        run = tmpl[(start + i) % len(tmpl)]
        rid = new_id()
        text = json.dumps(dict(run, id=rid, url="/runs/" + rid, host=host))
        lines.append(text.replace(run["device"]["uuid"], card).replace(run["id"], rid))
    return "\n".join(lines) + "\n"


class Daemon:
    """One gpubenchd on 127.0.0.1:0 (the port read from its log)."""

    def __init__(self, build, workdir, name, args, env_extra=None, wrapper=None):
        self.name, self.dir = name, workdir
        self.log_path = os.path.join(workdir, name + ".log")
        self.db = os.path.join(workdir, name + ".db")
        # No GPU unless env_extra says otherwise (bench/check gives a node 8).
        env = dict(os.environ, GPUBENCH_FAKE_GPUS="0")
        env.update(env_extra or {})
        # The log is the child's alone: 1,100 open logs here would pass a
        # soft limit of 1,024 descriptors.
        with open(self.log_path, "wb") as logf:
            self.proc = subprocess.Popen(
                (wrapper or []) + [os.path.join(build, "bin", "gpubenchd"), "--listen", "127.0.0.1:0", "--db", self.db,
                 "--worker", os.path.join(build, "tests", "gpubench-fake-worker"), "--rate-limit", "0",
                 "--confirm-runs", "0"] + args, stdout=logf, stderr=subprocess.STDOUT, env=env)
        PROCS.append(self.proc)
        self.port = None

    def wait_port(self, deadline):
        while self.port is None:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited %s: %s" % (self.name, self.proc.returncode, open(self.log_path).read()[-2000:]))
            with open(self.log_path, "rb") as f:
                m = LISTENING.search(f.read())
            if m:
                self.port = int(m.group(1))
                return self.port
            if time.time() > deadline:
                raise RuntimeError(self.name + " did not say where it listens")
            time.sleep(0.05)
        return self.port

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def request(self, method, path, body=None, timeout=120):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            # A body goes with its type, as the daemon asks (415 otherwise).
            ctype = "application/x-ndjson" if path == "/runs/import" else "application/json"
            c.request(method, path, body=body.encode() if isinstance(body, str) else body,
                      headers={"Content-Type": ctype} if body is not None else {})
            r = c.getresponse()
            return r.status, r.read()
        finally:
            c.close()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def rss_kb(self, field="VmRSS"):
        try:
            with open("/proc/%d/status" % self.proc.pid) as f:
                for line in f:
                    if line.startswith(field + ":"):
                        return int(line.split()[1])
        except OSError:
            pass
        return 0

    def pss_kb(self):
        """Proportional set size: the shared libraries' pages split among
        the processes that map them, what 1,000 nodes add up to."""
        try:
            with open("/proc/%d/smaps_rollup" % self.proc.pid) as f:
                for line in f:
                    if line.startswith("Pss:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return 0

    def cpu_split_s(self):
        """(utime, stime) of /proc/PID/stat, in seconds."""
        with open("/proc/%d/stat" % self.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) / TICK, int(fields[12]) / TICK

    def cpu_s(self):
        return sum(self.cpu_split_s())


# Every port a node has listened on.  A node started later on a port that a
# stopped node had would be, to the hub, that old peer (the same URL, its
# cursor past the new node's runs), so such a node is started again.
USED_PORTS = set()


def start_nodes(a, work, first, count, tmpl, new_id):
    """count node daemons numbered from first, each with a.runs runs."""
    def node(i):
        return Daemon(a.build, work, "node%04d" % (first + i), ["--max-queue", "1", "--http-threads", "1"])

    nodes = [node(i) for i in range(count)]
    deadline = time.time() + 60 + count / 10
    for i, n in enumerate(nodes):
        n.wait_port(deadline)
        while n.port in USED_PORTS:
            n.proc.terminate()
            n.proc.wait(30)
            n = nodes[i] = node(i)
            n.wait_port(deadline)
        USED_PORTS.add(n.port)
    for i, n in enumerate(nodes):
        n.card = "GPU-" + str(uuid.uuid4())
        n.host = "node%04d" % (first + i)
    # Two cores: a few imports at once keep both busy.
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        jobs = [pool.submit(import_runs, n, copies(tmpl, new_id, n.host, n.card, a.runs, first + i))
                for i, n in enumerate(nodes)]
        for j in jobs:
            j.result()
    return nodes


def import_runs(node, ndjson):
    status, body = node.request("POST", "/runs/import", ndjson)
    if status != 200:
        raise RuntimeError("%s: POST /runs/import: %d %s" % (node.name, status, body[:300]))


def rack_of(i):
    return {"rack": "r%03d" % (i // 40), "row": "row%d" % (i // 400)}


def write_peers_file(path, nodes):
    """file_sd: one target group a rack (its row a label too), written to a
    new file and renamed over the old, as a tool that writes it should."""
    groups = {}
    for i, n in enumerate(nodes):
        labels = rack_of(i)
        groups.setdefault((labels["rack"], labels["row"]), {"targets": [], "labels": labels})["targets"].append("127.0.0.1:%d" % n.port)
    tmp = path + ".new"
    with open(tmp, "w") as f:
        json.dump(list(groups.values()), f, indent=1)
    os.rename(tmp, path)


class Scraper(threading.Thread):
    """GET /metrics of the hub every interval seconds, as Prometheus would
    (--scrape-every): how many answered 200, and how many not."""

    def __init__(self, hub, interval):
        super().__init__(daemon=True)
        self.hub, self.interval, self.stopping = hub, interval, threading.Event()
        self.ok = self.failed = 0

    def run(self):
        while not self.stopping.wait(self.interval):
            try:
                status, _ = self.hub.request("GET", "/metrics")
                self.ok += status == 200
                self.failed += status != 200
            except OSError:
                self.failed += 1


class Sampler(threading.Thread):
    """The hub's VmRSS every 0.5 s; max_kb the largest seen."""

    def __init__(self, hub):
        super().__init__(daemon=True)
        self.hub, self.max_kb, self.stopping = hub, 0, threading.Event()

    def run(self):
        while not self.stopping.is_set():
            self.max_kb = max(self.max_kb, self.hub.rss_kb())
            self.stopping.wait(0.5)


def hub_runs(db):
    try:
        c = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=5)
        try:
            return c.execute("SELECT count(*) FROM runs").fetchone()[0]
        finally:
            c.close()
    except sqlite3.Error:
        return 0  # not made yet


def wait_runs(hub, want, limit, what):
    """Seconds until the hub's database holds want runs; None past limit."""
    t0 = time.time()
    last, n = 0, 0
    while True:
        n = hub_runs(hub.db)
        if n >= want:
            return time.time() - t0
        if hub.proc.poll() is not None:
            raise RuntimeError("the hub exited %s during %s" % (hub.proc.returncode, what))
        if time.time() - t0 > limit:
            log("  %s: %d of %d runs after %.0f s: gave up" % (what, n, want, limit))
            return None
        if time.time() - last > 10:
            log("  %s: %d of %d runs, %.0f s" % (what, n, want, time.time() - t0))
            last = time.time()
        time.sleep(0.25)


def get_peers(hub):
    status, body = hub.request("GET", "/peers")
    if status != 200:
        raise RuntimeError("GET /peers: %d %s" % (status, body[:300]))
    return json.loads(body)


def state_of(p):
    """The contract's state, or for a daemon from before it, what the pull's
    own fields say (as the page does)."""
    if p.get("state"):
        return p["state"]
    return "failing" if p.get("failures_in_row", 0) > 0 else "ok" if p.get("last_success_at") else "new"


def counts_of(ans):
    if isinstance(ans.get("counts"), dict):
        return ans["counts"]
    c = {}
    for p in ans["peers"]:
        c[state_of(p)] = c.get(state_of(p), 0) + 1
    return c


def backing_off(p, since, interval):
    """A failing peer waits longer than an interval before its next pull."""
    if p.get("next_pull_at") and p.get("last_error_at"):
        t = lambda iso: time.mktime(time.strptime(iso[:19], "%Y-%m-%dT%H:%M:%S"))
        return t(p["next_pull_at"]) - t(p["last_error_at"]) > interval
    return p.get("failures_in_row", 0) < since


def measure_metrics(d, calls, cards):
    """GET /metrics of d, calls times one after another (issue 33): the
    first one's time (after a quiet spell, unless a scraper ran), p50 and
    p99 of the others, bytes, series (sample lines), series a card, the
    largest collector's duration as the daemon reports it, whether every
    collector succeeded, and promtool's word where promtool is
    installed."""
    times, body = [], b""
    for _ in range(max(2, calls)):
        s = time.perf_counter()
        status, body = d.request("GET", "/metrics")
        times.append((time.perf_counter() - s) * 1000)
        if status != 200:
            raise RuntimeError("GET /metrics: %d %s" % (status, body[:300]))
    text = body.decode() if isinstance(body, bytes) else body
    series = [l for l in text.split("\n") if l and not l.startswith("#")]
    durations = {}
    failed = []
    for l in series:
        m = re.match(r'gpubench_scrape_collector_(success|duration_seconds)\{collector="([^"]+)"\} (\S+)', l)
        if m and m.group(1) == "duration_seconds":
            durations[m.group(2)] = float(m.group(3))
        elif m and float(m.group(3)) != 1:
            failed.append(m.group(2))
    r = {"n": len(times), "first_ms": round(times[0], 1),
         "p50_ms": round(pctl(times[1:], 0.5), 1), "p99_ms": round(pctl(times[1:], 0.99), 1),
         "bytes": len(text), "series": len(series),
         "series_a_card": round(len(series) / max(1, cards), 2), "cards": cards,
         "collectors_failed": failed,
         "slowest_collectors_ms": {k: round(v * 1000, 1) for k, v in
                                   sorted(durations.items(), key=lambda kv: -kv[1])[:4]}}
    if shutil.which("promtool"):
        p = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
        r["promtool"] = "accepted" if p.returncode == 0 else (p.stdout + p.stderr)[:500]
    return r


def pctl(xs, q):
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build", help="the build folder (bin/gpubenchd, tests/gpubench-fake-worker)")
    ap.add_argument("--nodes", type=int, default=1000, help="N nodes (default 1000)")
    ap.add_argument("--runs", type=int, default=100, help="K runs a node (default 100)")
    ap.add_argument("--interval", type=int, default=10, help="the hub's --peer-interval, s (default 10)")
    ap.add_argument("--concurrency", type=int, default=16, help="the hub's --peer-concurrency (default 16)")
    ap.add_argument("--add", type=int, default=100, help="nodes added to the peers file while running (default 100)")
    ap.add_argument("--down", type=float, default=0.1, help="share of the nodes stopped in the second wave (default 0.1)")
    ap.add_argument("--db-check-delay", type=int, default=86400,
                    help="the hub's --db-check-delay (default 86400: its database check stays out of the pull)")
    ap.add_argument("--requests", type=int, default=200, help="GET /peers requests timed (default 200)")
    ap.add_argument("--limit", type=float, default=600, help="seconds a phase may take before it is called missed (default 600)")
    ap.add_argument("--peer-flags", action="store_true", help="--peer URL flags instead of --peers-file (a daemon from before it)")
    ap.add_argument("--scrape-every", type=float, default=0,
                    help="GET /metrics of the hub every S seconds from its start, as Prometheus "
                         "would (default 0: not scraped until the metrics phase)")
    ap.add_argument("--out", default="fleet-results.json", help="the results as JSON (default fleet-results.json)")
    ap.add_argument("--hub-wrapper", help="a command the hub is started under, e.g. "
                    "'valgrind --tool=callgrind --callgrind-out-file=/tmp/hub.cg' to count its "
                    "instructions a pulled run, which the machine's load does not move")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (databases, logs)")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    # A hub of 1,100 peers and this script's connections need more than the
    # usual 1,024 descriptors; the children inherit the raised limit.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    work = tempfile.mkdtemp(prefix="gpubench-bench-fleet-")
    log("work folder", work)
    res = {"command": " ".join([os.path.relpath(sys.argv[0], TOP)] + sys.argv[1:]),
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "machine": "%s, %d cores, %.1f GB" % (os.uname().machine, os.cpu_count(),
                                                 os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9),
           "nodes": a.nodes, "runs_a_node": a.runs, "interval_s": a.interval, "concurrency": a.concurrency,
           "peers": "--peer flags" if a.peer_flags else "--peers-file"}
    tmpl, new_id = templates(), Uuid7()
    hub = None
    try:
        t0 = time.time()
        nodes = start_nodes(a, work, 0, a.nodes, tmpl, new_id)
        res["setup_s"] = round(time.time() - t0, 1)
        res["node_rss_mb"] = round(statistics.median(n.rss_kb() for n in nodes) / 1024, 1)
        res["node_pss_mb"] = round(statistics.median(n.pss_kb() for n in nodes) / 1024, 1)
        log("%d nodes with %d runs each in %.0f s; a node holds %.1f MB resident, %.1f MB PSS (median)" %
            (a.nodes, a.runs, res["setup_s"], res["node_rss_mb"], res["node_pss_mb"]))

        peers_file = os.path.join(work, "peers.json")
        # The daemon's own database check (PRAGMA quick_check, every page
        # read) starts 10 s after a start and then daily: left in, it lands
        # in the pull's CPU whenever convergence takes over 10 s.
        args = ["--peer-interval", str(a.interval), "--db-check-delay", str(a.db_check_delay)]
        if a.peer_flags:
            for n in nodes:
                args += ["--peer", n.url]
        else:
            write_peers_file(peers_file, nodes)
            args += ["--peers-file", peers_file, "--peer-concurrency", str(a.concurrency)]
        total = a.nodes * a.runs
        hub = Daemon(a.build, work, "hub", args, wrapper=shlex.split(a.hub_wrapper or ""))
        sampler = Sampler(hub)
        sampler.start()
        hub.wait_port(time.time() + 60)
        scraper = Scraper(hub, a.scrape_every) if a.scrape_every > 0 else None
        if scraper:
            scraper.start()
        res["scrape_every_s"] = a.scrape_every or None
        t = wait_runs(hub, total, a.limit, "converge")
        user1, sys1 = hub.cpu_split_s()
        res["converge_s"] = round(t, 1) if t is not None else None
        res["converge_runs"] = hub_runs(hub.db)
        per_run = max(1, res["converge_runs"]) / 1000
        res["cpu_s_per_run_ms"] = round((user1 + sys1) / per_run, 3)
        res["cpu_user_per_run_ms"] = round(user1 / per_run, 3)
        res["cpu_sys_per_run_ms"] = round(sys1 / per_run, 3)
        log("converge: %s runs in %s s" % (res["converge_runs"], res["converge_s"]))

        # The second wave: some nodes down, one new run on each of the others.
        down = nodes[:int(round(a.nodes * a.down))]
        up = nodes[len(down):]
        t_stop = time.time()
        for n in down:
            n.stop()
        for i, n in enumerate(up):
            import_runs(n, copies(tmpl, new_id, n.host, n.card, 1, a.runs + i))
        t = wait_runs(hub, total + len(up), a.limit, "wave")
        res["wave_down"] = len(down)
        res["wave_s"] = round(t, 1) if t is not None else None
        res["wave_intervals"] = round(t / a.interval, 2) if t is not None else None
        # The down ones: their error shown, and backing off: the next pull
        # more than an interval after the last error where GET /peers says
        # when (next_pull_at), else fewer failures in a row than intervals
        # gone by (four, so that a doubling wait shows).
        time.sleep(max(0.0, t_stop + 4 * a.interval - time.time()))
        ans = get_peers(hub)
        by = {p["url"]: p for p in ans["peers"]}
        since = (time.time() - t_stop) / a.interval
        shown = [by.get(n.url) or by.get("127.0.0.1:%d" % n.port) for n in down]
        erred = [p for p in shown if p and p.get("last_error") and state_of(p) == "failing"]
        res["down_with_error"] = len(erred)
        res["down_error_example"] = erred[0]["last_error"] if erred else None
        res["down_failures_in_row_max"] = max((p.get("failures_in_row", 0) for p in erred), default=0)
        res["down_intervals_since_stop"] = round(since, 1)
        res["down_backing_off"] = bool(erred) and all(backing_off(p, since, a.interval) for p in erred)
        log("wave: %s runs in %s s (%s intervals); %d of %d down nodes show an error" %
            (len(up), res["wave_s"], res["wave_intervals"], len(erred), len(down)))

        # Nodes added while the hub runs.
        if a.peer_flags or a.add <= 0:
            res["add_s"] = res["add_intervals"] = None
            res["add_note"] = "skipped: --peer flags cannot change without a restart"
        else:
            more = start_nodes(a, work, a.nodes, a.add, tmpl, new_id)
            have = hub_runs(hub.db)
            write_peers_file(peers_file, nodes + more)
            t = wait_runs(hub, have + a.add * a.runs, a.limit, "add")
            res["added"] = a.add
            res["add_s"] = round(t, 1) if t is not None else None
            res["add_intervals"] = round(t / a.interval, 2) if t is not None else None
            nodes += more
            log("add: %d nodes' runs in %s s" % (a.add, res["add_s"]))

        # GET /peers, one request after another.
        times = []
        for _ in range(a.requests):
            s = time.perf_counter()
            ans = get_peers(hub)
            times.append((time.perf_counter() - s) * 1000)
        res["peers_listed"] = len(ans["peers"])
        res["peers_p50_ms"] = round(pctl(times, 0.5), 2)
        res["peers_p99_ms"] = round(pctl(times, 0.99), 2)
        res["peers_counts"] = counts_of(ans)
        res["peers_counts_from"] = "the daemon" if "counts" in ans else "the page's rule (no counts in GET /peers)"
        if scraper:
            scraper.stopping.set()
            scraper.join()
            res["scrapes_ok"], res["scrapes_failed"] = scraper.ok, scraper.failed
        # GET /metrics at the hub (issue 33): time and series, a card its
        # two cards a node (examples' runs: the health and trust cards).
        cards = sqlite3.connect(hub.db).execute(
            "SELECT count(*) FROM (SELECT DISTINCT host, device_uuid FROM latest_by_card)").fetchone()[0]
        res["metrics"] = measure_metrics(hub, min(a.requests, 20), cards)
        log("metrics: %s" % res["metrics"])
        sampler.stopping.set()
        sampler.join()
        res["hub_rss_max_mb"] = round(sampler.max_kb / 1024, 1)
        res["hub_vmhwm_mb"] = round(hub.rss_kb("VmHWM") / 1024, 1)
        res["hub_cpu_s_total"] = round(hub.cpu_s(), 1)
        res["hub_db_bytes_a_run"] = round(os.path.getsize(hub.db) / max(1, hub_runs(hub.db)))
    finally:
        for p in PROCS:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in PROCS:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    report(res, a)
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
    log("written to", a.out)
    return 0


def report(r, a):
    iv = a.interval
    rows = [
        ("%d nodes x %d runs: the hub holds all %d" % (a.nodes, a.runs, a.nodes * a.runs), "within 120 s",
         "%s s (%s runs)" % (r.get("converge_s"), r.get("converge_runs"))),
        ("hub resident memory, at any point", "at most 200 MB",
         "%s MB max VmRSS (VmHWM %s MB)" % (r.get("hub_rss_max_mb"), r.get("hub_vmhwm_mb"))),
        ("second wave, one new run on each node", "within 2 intervals",
         "%s s = %s intervals of %d s" % (r.get("wave_s"), r.get("wave_intervals"), iv)),
        ("%d%% of the nodes down in the wave" % round(a.down * 100), "error shown, backing off",
         "%s of %s show an error; at most %s failures in a row; backing off: %s" %
         (r.get("down_with_error"), r.get("wave_down"), r.get("down_failures_in_row_max"), r.get("down_backing_off"))),
        ("%d nodes added to the peers file" % a.add, "within 2 intervals",
         r.get("add_note") or "%s s = %s intervals" % (r.get("add_s"), r.get("add_intervals"))),
        ("GET /peers with %s peers" % r.get("peers_listed"), "p99 under 50 ms",
         "p50 %s ms, p99 %s ms; %s" % (r.get("peers_p50_ms"), r.get("peers_p99_ms"), r.get("peers_counts"))),
        ("GET /metrics at the hub (%s cards)" % r.get("metrics", {}).get("cards"),
         "under 0.5 s, under 20 series a peer's card, promtool accepts",
         "first %s ms, then p50 %s ms, p99 %s ms; %s series (%s a card), %s bytes; promtool %s" %
         tuple(r.get("metrics", {}).get(k) for k in ("first_ms", "p50_ms", "p99_ms", "series", "series_a_card",
                                                      "bytes", "promtool"))),
        ("CPU per pulled run", "reported", "%s ms (hub, utime+stime: %s + %s); %s" %
         (r.get("cpu_s_per_run_ms"), r.get("cpu_user_per_run_ms"), r.get("cpu_sys_per_run_ms"),
          "scraped every %s s" % r["scrape_every_s"] if r.get("scrape_every_s") else "not scraped")),
        ("one node daemon's memory", "", "%s MB RSS, %s MB PSS (median)" % (r.get("node_rss_mb"), r.get("node_pss_mb"))),
        ("hub database", "", "%s bytes a run" % r.get("hub_db_bytes_a_run")),
    ]
    log("")
    log("%s  %s" % (r["command"], r["date"]))
    log("| measurement | target | measured |")
    log("|---|---|---|")
    for m, t, v in rows:
        log("| %s | %s | %s |" % (m, t, v))


if __name__ == "__main__":
    sys.exit(main())
