#!/usr/bin/env python3
"""bench/check/run.py - how fast `gpubench check` and GET /coverage answer
(issue 24: "in well under a second", for Slurm's HealthCheckProgram, a
prolog or an epilog; the target taken here is 0.2 s for a node's check).

Two stores, each measured with a real gpubenchd and the worker's test
double (tests/fake_worker.c), nothing run on a GPU:

  node  8 GPUs (GPUBENCH_FAKE_GPUS=8, "NVIDIA H200"), a year of nightly
        health suites on every card (the six one-card members of
        examples/h200_daemon_health on each card and the node's p2p run
        from examples/h200x2_daemon_health, one night a day, imported),
        BULK other smem_stride runs on the same cards (default 1,000,000),
        a year of card events (a daily non-critical reading change on each
        card) and floor alerts (cleared ones, and one confirmed on GPU 3).
        Measured: `gpubench check` as Slurm runs it (a new process each
        time, wall time from fork to exit), GET /coverage, GET /cards.
  hub   no GPU, the health suite's runs of NODES nodes x 8 cards (default
        1,000), imported under their own host and card as pulled runs are
        stored.  Measured: GET /coverage (whole), GET /coverage?host=NAME,
        `gpubench check --host NAME`, the hub's memory.

The bulk runs are copies, made in SQL with the daemon stopped, of smem_stride
runs first imported through POST /runs/import (so each copy has the rows
the insert path writes: runs, run_results, run_digests), each with a fresh
time-ordered id, its own time within the year, its card and its final_seq;
then latest_by_card and fleet_latest are brought up to date with the same
upserts the store runs for each stored run (server/store/store.c).  POST
/runs/import alone would take 20 minutes or more for a million runs here.

    python3 bench/check/run.py --build build [--bulk 1000000] [--nodes 1000]
        [--calls 50] [--only node|hub] [--keep DIR [--reuse]] [--out results.json]

--keep DIR --reuse measures the node's and the hub's databases left in DIR
by an earlier run (a build before and after a change, on the same store).
The hub's GET /metrics is measured too (issue 33): its time, its series
and series a card, and whether promtool accepts it (where it is installed).
"""
import argparse
import importlib.util
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DAY_MS = 86400 * 1000

# The fleet bench's daemon, id maker and import (bench/fleet/run.py).
_spec = importlib.util.spec_from_file_location("fleet_bench", os.path.join(TOP, "bench", "fleet", "run.py"))
fleet = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fleet)
log = fleet.log


def load_runs(path, benchmarks=None):
    """The finished runs of an examples NDJSON file, by benchmark."""
    out = {}
    with open(path) as f:
        for line in f:
            if line.strip():
                run = json.loads(line)
                if run["status"] == "done" and (benchmarks is None or run["benchmark"] in benchmarks):
                    run.pop("seq", None)
                    out.setdefault(run["benchmark"], run)
    return out


def health_templates():
    """The health suite as run on one H200 (six one-card members) and the
    p2p run of the two-H200 example, which the node's GPU 0 carries."""
    one = load_runs(os.path.join(TOP, "examples", "h200_daemon_health", "health_runs.ndjson"))
    two = load_runs(os.path.join(TOP, "examples", "h200x2_daemon_health", "health_runs.ndjson"),
                    {"p2p_bandwidth"})
    return [one[b] for b in sorted(one)], two["p2p_bandwidth"]


def rfc3339(ms):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + ".%03dZ" % (ms % 1000)


def copy_run(run, rid, host, card, index, ms):
    """run as NDJSON text with a new id, host, card and times (finished at
    ms, begun 3 s before)."""
    r = dict(run, id=rid, url="/runs/" + rid, host=host, batch=None,
             created_at=rfc3339(ms - 3000), started_at=rfc3339(ms - 3000), finished_at=rfc3339(ms))
    r["device"] = dict(run["device"], uuid=card, index=index, name="NVIDIA H200")
    return json.dumps(r)


def import_all(d, lines, batch=2000):
    for i in range(0, len(lines), batch):
        fleet.import_runs(d, "\n".join(lines[i:i + batch]) + "\n")


def nights(host, cards, days, now_ms, new_id):
    """days nightly health suites on cards (newest night 2 h ago), as
    NDJSON lines in time order."""
    singles, p2p = health_templates()
    lines = []
    for d in range(days, 0, -1):
        ms = now_ms - (d - 1) * DAY_MS - 2 * 3600 * 1000 - 60 * 60 * 1000
        for i, card in enumerate(cards):
            for run in singles:
                ms += 20 * 1000
                lines.append(copy_run(run, new_id(ms), host, card, i, ms))
        ms += 20 * 1000
        lines.append(copy_run(p2p, new_id(ms), host, cards[0], 0, ms))
    return lines


def bulk_fill(db, count, t0_ms, t1_ms):
    """count copies of the store's smem_stride runs that are not health
    runs, spread over [t0_ms, t1_ms): see the module's comment."""
    con = sqlite3.connect(db)
    con.execute("PRAGMA synchronous=OFF")
    con.execute("PRAGMA cache_size=-262144")
    tmpl = [r[0] for r in con.execute("SELECT id FROM runs WHERE label = 'bench-bulk' ORDER BY id")]
    seq = con.execute("SELECT coalesce(max(final_seq), 0) FROM runs").fetchone()[0]
    cols = {t: [r[1] for r in con.execute("PRAGMA table_info(%s)" % t)]
            for t in ("runs", "run_results", "run_digests")}
    new = {"id": "?1", "created_at": "?2", "started_at": "?2", "finished_at": "?3",
           "final_seq": "?4", "batch_id": "NULL"}
    runs_sql = "INSERT INTO runs (%s) SELECT %s FROM runs WHERE id = ?5" % (
        ", ".join(cols["runs"]), ", ".join(new.get(c, c) for c in cols["runs"]))
    side_sql = {t: "INSERT INTO %s (%s) SELECT %s FROM %s WHERE run_id = ?2" % (
        t, ", ".join(cols[t]), ", ".join("?1" if c == "run_id" else c for c in cols[t]), t)
        for t in ("run_results", "run_digests")}
    new_id = fleet.Uuid7()
    step = (t1_ms - t0_ms) / count
    con.execute("BEGIN")
    for i in range(count):
        ms = t0_ms + int(i * step)
        rid, src = new_id(ms), tmpl[i % len(tmpl)]
        con.execute(runs_sql, (rid, rfc3339(ms - 3000), rfc3339(ms), seq + 1 + i, src))
        for sql in side_sql.values():
            con.execute(sql, (rid, src))
        if (i + 1) % 100000 == 0:
            con.execute("COMMIT")
            log("  bulk: %d runs" % (i + 1))
            con.execute("BEGIN")
    # The store's per-run upserts (store.c), once for all the copies.
    con.execute("INSERT INTO latest_by_card (benchmark, host, device_uuid, run_id) "
                "SELECT benchmark, host, coalesce(device_uuid, ''), max(id) FROM runs "
                "WHERE label = 'bench-bulk' GROUP BY 1, 2, 3 "
                "ON CONFLICT (benchmark, host, device_uuid) DO UPDATE "
                "SET run_id = excluded.run_id WHERE excluded.run_id > run_id")
    con.execute("INSERT INTO fleet_latest (verdict_key, benchmark, host, device_uuid, run_id) "
                "SELECT verdict_key, benchmark, host, device_uuid, max(id) FROM runs "
                "WHERE label = 'bench-bulk' AND verdict_key IS NOT NULL AND valid IS NOT 0 "
                "AND device_uuid IS NOT NULL GROUP BY 1, 3, 4 "
                "ON CONFLICT (verdict_key, host, device_uuid) DO UPDATE "
                "SET run_id = excluded.run_id WHERE excluded.run_id > run_id")
    con.execute("COMMIT")
    con.close()


def events_and_alerts(db, host, cards, now_ms, days):
    """A year of card events (one non-critical reading change a card a
    day) and floor alerts: one cleared a card a month, one confirmed on
    GPU 3 against its newest hbm_bandwidth run."""
    con = sqlite3.connect(db)
    with con:
        for d in range(days):
            at = rfc3339(now_ms - d * DAY_MS)
            for card in cards:
                con.execute("INSERT INTO card_events (device_uuid, host, at, kind, subject, critical, "
                            "lasting, detail, message) VALUES (?, ?, ?, 'ecc_volatile', 'sbe', 0, 0, "
                            "'{\"count\": 1}', 'volatile corrected ECC count rose by 1')",
                            (card, host, at))
        for m in range(12):
            for card in cards:
                at = rfc3339(now_ms - (m * 30 + 5) * DAY_MS)
                con.execute("INSERT INTO alerts (kind, state, host, device_uuid, device_name, benchmark, "
                            "row_key, verdict, confirms_left, reason, detected_at, cleared_at) "
                            "VALUES ('floor', 'cleared', ?, ?, 'NVIDIA H200', 'hbm_bandwidth', "
                            "'\"triad\"', 'below_floor', 0, 'below its floor', ?, ?)", (host, card, at, at))
        run = con.execute("SELECT id FROM runs WHERE device_uuid = ? AND benchmark = 'hbm_bandwidth' "
                          "ORDER BY id DESC LIMIT 1", (cards[3],)).fetchone()[0]
        at = rfc3339(now_ms - 3600 * 1000)
        con.execute("INSERT INTO alerts (kind, state, host, device_uuid, device_name, benchmark, row_key, "
                    "verdict, run_id, confirm_run_id, confirms_left, reason, detected_at, confirmed_at) "
                    "VALUES ('floor', 'confirmed', ?, ?, 'NVIDIA H200', 'hbm_bandwidth', '\"triad\"', "
                    "'below_floor', ?, ?, 0, 'below its floor', ?, ?)", (host, cards[3], run, run, at, at))
    con.close()


def timed(n, fn):
    """fn's wall times in ms, n calls one after another."""
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def summary(xs):
    xs = sorted(xs)
    return {"n": len(xs), "p50_ms": round(fleet.pctl(xs, 0.5), 2), "p99_ms": round(fleet.pctl(xs, 0.99), 2),
            "max_ms": round(xs[-1], 2)}


def get(d, path):
    status, body = d.request("GET", path)
    if status != 200:
        raise RuntimeError("GET %s: %d %s" % (path, status, body[:300]))
    return body


def check_cmd(a, d, *extra):
    return [os.path.join(a.build, "bin", "gpubench"), "--url", d.url, "check"] + list(extra)


def measure_check(a, d, *extra):
    """`gpubench check` a.calls times: its times, exit status and first line."""
    cmd = check_cmd(a, d, *extra)
    first = subprocess.run(cmd, capture_output=True, text=True)
    times = timed(a.calls, lambda: subprocess.run(cmd, stdout=subprocess.DEVNULL))
    return dict(summary(times), exit=first.returncode, first_line=first.stdout.split("\n")[0])


def cpu_ms(d):
    """The daemon's CPU time so far (user + system, all its threads), in ms:
    on a shared machine a request's CPU time says what its wall time cannot."""
    with open("/proc/%d/stat" % d.proc.pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000.0 / os.sysconf("SC_CLK_TCK")


def timed_cpu(d, n, fn):
    """summary() of fn's wall times, with the daemon's CPU ms a call."""
    c0 = cpu_ms(d)
    r = summary(timed(n, fn))
    r["cpu_ms_per_call"] = round((cpu_ms(d) - c0) / n, 1)
    return r


def memory(d):
    return {"rss_mb": round(d.rss_kb() / 1024, 1), "hwm_mb": round(d.rss_kb("VmHWM") / 1024, 1)}


def node_bench(a, work):
    env = {"GPUBENCH_FAKE_GPUS": "8", "GPUBENCH_FAKE_GPU_NAME": "NVIDIA H200"}
    now = int(time.time() * 1000)
    if a.reuse and os.path.exists(os.path.join(work, "node.db")):
        return node_measure(a, work, env, {})
    d = fleet.Daemon(a.build, work, "node", [], env)
    d.wait_port(time.time() + 30)
    cov = json.loads(get(d, "/coverage"))
    host = cov["host"]
    cards = [c["uuid"] for c in cov["cards"] if c["own"]]
    if len(cards) != 8:
        raise RuntimeError("the node lists %d cards of its own" % len(cards))
    # The bulk's templates: the trust example's smem_stride runs, a year ago.
    trust = load_runs(os.path.join(TOP, "examples", "h200_daemon_trust", "trust_runs.ndjson"))["smem_stride"]
    old_id = fleet.Uuid7()
    t0 = now - 366 * DAY_MS
    import_all(d, [copy_run(dict(trust, label="bench-bulk"), old_id(t0 + i), host, c, i, t0 + i)
                   for i, c in enumerate(cards)])
    d.stop()
    t = time.time()
    bulk_fill(d.db, a.bulk, t0 + 1000, now - 3 * DAY_MS)
    fill_s = time.time() - t
    log("node: %d bulk runs in %.0f s" % (a.bulk, fill_s))
    d = fleet.Daemon(a.build, work, "node", [], env)
    d.wait_port(time.time() + 120)
    t = time.time()
    lines = nights(host, cards, 365, now, fleet.Uuid7())
    import_all(d, lines)
    import_s = time.time() - t
    log("node: %d health runs imported in %.0f s" % (len(lines), import_s))
    d.stop()
    events_and_alerts(d.db, host, cards, now, 365)
    return node_measure(a, work, env, {"bulk_fill_s": round(fill_s), "health_runs": len(lines),
                                       "health_import_s": round(import_s)})


def node_measure(a, work, env, made):
    d = fleet.Daemon(a.build, work, "node", [], env)
    d.wait_port(time.time() + 120)
    get(d, "/coverage")  # the first read after start, as the page cache has it
    r = {"runs": sqlite3.connect(d.db).execute("SELECT count(*) FROM runs").fetchone()[0],
         "db_gb": round(os.path.getsize(d.db) / 1e9, 2), **made}
    r["check"] = measure_check(a, d)
    r["coverage"] = summary(timed(a.calls, lambda: get(d, "/coverage")))
    r["cards"] = summary(timed(min(a.calls, 10), lambda: get(d, "/cards")))
    r["memory"] = memory(d)
    d.stop()
    return r


def hub_bench(a, work):
    if a.reuse and os.path.exists(os.path.join(work, "hub.db")):
        return hub_measure(a, work, {})
    d = fleet.Daemon(a.build, work, "hub", [])
    d.wait_port(time.time() + 30)
    singles, p2p = health_templates()
    now = int(time.time() * 1000)
    new_id = fleet.Uuid7()
    lines = []
    t = time.time()
    for n in range(a.nodes):
        host = "node%04d" % n
        cards = ["GPU-" + str(uuid.uuid4()) for _ in range(8)]
        ms = now - 3 * 3600 * 1000 + n
        for i, card in enumerate(cards):
            for run in singles:
                lines.append(copy_run(run, new_id(ms), host, card, i, ms))
        lines.append(copy_run(p2p, new_id(ms), host, cards[0], 0, ms))
        if len(lines) >= 2000:
            import_all(d, lines)
            lines = []
    import_all(d, lines)
    import_s = time.time() - t
    log("hub: %d nodes imported in %.0f s" % (a.nodes, import_s))
    # The imports' bodies (2,000 runs, 18 MB a request) set the peak of
    # the importing process; the hub is measured as it serves, restarted.
    r = {"import_s": round(import_s), "memory_importing": memory(d)}
    d.stop()
    return hub_measure(a, work, r)


NEW_RUNS = [0]


def new_run(d, whole):
    """One new valid health run, now, on a card of the next node of whole
    (a hub's coverage), stored through POST /runs/import."""
    smem = [x for x in health_templates()[0] if x["benchmark"] == "smem_stride"][0]
    card = whole["cards"][8 * NEW_RUNS[0] % len(whole["cards"])]
    NEW_RUNS[0] += 1
    ms = int(time.time() * 1000)
    import_all(d, [copy_run(smem, fleet.Uuid7()(ms), card["host"], card["uuid"],
                            card["index"], ms)])


def hub_measure(a, work, r):
    d = fleet.Daemon(a.build, work, "hub", [])
    d.wait_port(time.time() + 120)
    r["memory_started"] = memory(d)
    # Right after the start the heavy collectors' first build is under way
    # (issue 33: made in the background, then kept; a scrape waits 2 s at
    # most, then reports the collector as failed): the time until a scrape
    # has every collector.
    t = time.perf_counter()
    r["metrics_whole_after_start_ms"] = None
    while time.perf_counter() - t < 300:
        text = get(d, "/metrics").decode()
        if 'gpubench_scrape_collector_success' in text and \
                not re.search(r'gpubench_scrape_collector_success\{[^}]*\} 0', text):
            r["metrics_whole_after_start_ms"] = round((time.perf_counter() - t) * 1000)
            break
        time.sleep(0.5)
    name = "node%04d" % (a.nodes // 2)
    t = time.perf_counter()
    whole = json.loads(get(d, "/coverage"))
    # the first whole answer after the start: every host made (issue 33)
    r["coverage_first_ms"] = round((time.perf_counter() - t) * 1000)
    r.update({"runs": sqlite3.connect(d.db).execute("SELECT count(*) FROM runs").fetchone()[0],
              "cards": len(whole["cards"]), "coverage_bytes": len(json.dumps(whole))})
    r["coverage"] = timed_cpu(d, min(a.calls, 20), lambda: get(d, "/coverage"))
    r["coverage_host"] = timed_cpu(d, a.calls, lambda: get(d, "/coverage?host=" + name))
    # a node's new run, then the whole answer, five times: the host the
    # write touched is made again, the rest kept (issue 33)
    r["coverage_after_a_run"] = timed_cpu(d, 5, lambda: (new_run(d, whole), get(d, "/coverage")))
    r["check_host"] = measure_check(a, d, "--host", name)
    # GET /fleet of one benchmark over its 8,000 cards (issue 33: built
    # through an array of pointers; cubic in the cards before)
    r["fleet_smem_stride"] = summary(timed(min(a.calls, 5),
                                           lambda: get(d, "/fleet?benchmark=smem_stride")))
    try:
        r["metrics"] = fleet.measure_metrics(d, min(a.calls, 20), r["cards"])
    except Exception as e:  # a build from before issue 33 may not answer in time
        r["metrics"] = {"error": str(e)[:300]}
    r["memory"] = memory(d)
    d.stop()
    return r


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default="build")
    p.add_argument("--bulk", type=int, default=1000000)
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--calls", type=int, default=50)
    p.add_argument("--only", choices=["node", "hub"])
    p.add_argument("--keep", help="work in this folder and leave it")
    p.add_argument("--reuse", action="store_true",
                   help="with --keep: measure the node's database left there, without filling it")
    p.add_argument("--out")
    a = p.parse_args()
    a.build = os.path.abspath(a.build)
    work = a.keep or tempfile.mkdtemp(prefix="gpubench-check-bench-")
    os.makedirs(work, exist_ok=True)
    res = {"when": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), "nproc": os.cpu_count(),
           "loadavg_before": os.getloadavg()[0]}
    try:
        if a.only in (None, "node"):
            res["node"] = node_bench(a, work)
        if a.only in (None, "hub"):
            res["hub"] = hub_bench(a, work)
    finally:
        for proc in fleet.PROCS:
            if proc.poll() is None:
                proc.kill()
        if not a.keep:
            subprocess.run(["rm", "-rf", work])
    res["loadavg_after"] = os.getloadavg()[0]
    print(json.dumps(res, indent=1))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
