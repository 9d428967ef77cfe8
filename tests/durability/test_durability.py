"""test_durability.py - SIGKILL the daemon 100 times under heavy load, and
check after every restart that nothing a client was told is lost.

Why: gpubenchd answers 202 only after the run is committed
(synchronous=FULL), and a run's status only moves forward.  A crash at any
moment (mid-commit, mid-response, mid-run) must leave a database that
passes PRAGMA integrity_check and that still says everything the daemon
said before it died.

Each round starts a real gpubenchd (tests/api/harness.py: loopback port,
temporary database, the worker's test double with 2 fake GPUs, a few ms a
row so runs are queued, running and finishing all the time), lets client
threads hammer it (posters: POST /runs of every benchmark, sometimes
"device": "all"; a canceller: DELETE of recent runs; a reader: GET
/runs/ID and GET /runs?limit=50), and SIGKILLs it at a random moment.
After the restart:
  - PRAGMA integrity_check is "ok";
  - every run that got a 202 (or was in a 200 batch) is stored;
  - every run whose DELETE got a 200 is cancelled;
  - every run a GET showed finished (done, failed, cancelled) still is, with
    the same status: no status went back;
  - a failed run failed with "interrupted" (the test double never fails
    otherwise); a done run has its results; at most one run a GPU runs;
  - only the five statuses appear.
GPUBENCH_DURABILITY_ROUNDS (default 100) and GPUBENCH_DURABILITY_SEED
change the number of kills and the random moments.
"""
import os
import random
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "api"))
from harness import Daemon  # noqa: E402

ROUNDS = int(os.environ.get("GPUBENCH_DURABILITY_ROUNDS", "100"))
SEED = int(os.environ.get("GPUBENCH_DURABILITY_SEED", str(int(time.time()))))
GPUS = 2
FINAL = ("done", "failed", "cancelled")
BODIES = [
    {"benchmark": "smem_stride", "params": {"strides": [1, 2, 32], "samples": 3}},
    {"benchmark": "smem_pattern", "params": {"samples": 3}, "label": "durability"},
    {"benchmark": "transpose", "params": {"n": 256, "variants": ["copy", "tile33"], "samples": 3}},
    {"benchmark": "smem_stride", "device": "all", "params": {"strides": [33], "samples": 3}},
]


class Clients:
    """The load of one round, and what the daemon told it."""

    def __init__(self, d, rng, ledger):
        self.d = d
        self.rng = rng
        self.ledger = ledger
        self.stop = threading.Event()
        self.lock = threading.Lock()

    def _call(self, method, path, body=None):
        try:
            return self.d.request(method, path, body=body, timeout=5)
        except (OSError, ValueError):  # killed mid-answer: nothing promised
            return None

    def post(self, seed):
        rng = random.Random(seed)
        while not self.stop.is_set():
            r = self._call("POST", "/runs", rng.choice(BODIES))
            if r is None or r.status not in (200, 202):
                continue
            body = r.json()
            with self.lock:
                for run in body.get("runs", [body]):
                    self.ledger["accepted"].add(run["id"])
                    self.ledger["recent"].append(run["id"])

    def cancel(self, seed):
        rng = random.Random(seed)
        while not self.stop.is_set():
            with self.lock:
                recent = self.ledger["recent"][-50:]
            if not recent:
                time.sleep(0.005)
                continue
            run_id = rng.choice(recent)
            r = self._call("DELETE", "/runs/" + run_id)
            if r is not None and r.status == 200:
                with self.lock:
                    self.ledger["cancelled"].add(run_id)

    def read(self, seed):
        rng = random.Random(seed)
        while not self.stop.is_set():
            with self.lock:
                recent = self.ledger["recent"][-200:]
            if recent and rng.random() < 0.8:
                run_id = rng.choice(recent)
                r = self._call("GET", "/runs/" + run_id)
                if r is not None and r.status == 200 and r.json()["status"] in FINAL:
                    with self.lock:
                        self.ledger["final"][run_id] = r.json()["status"]
            else:
                self._call("GET", "/runs?limit=50")

    def run_for(self, seconds):
        jobs = [self.post] * 4 + [self.cancel, self.read]
        threads = [threading.Thread(target=job, args=(self.rng.random(),)) for job in jobs]
        for t in threads:
            t.start()
        time.sleep(seconds)
        self.d.kill()
        self.stop.set()
        for t in threads:
            t.join()


def check(d, ledger, round_):
    where = "after kill %d (seed %d)" % (round_, SEED)
    problems = []
    integrity = d.sql("PRAGMA integrity_check")
    if integrity != [("ok",)]:
        problems.append("integrity_check: %r" % (integrity,))
    rows = {i: (s, code) for i, s, code in d.sql("SELECT id, status, error_code FROM runs")}
    with_results = {r[0] for r in d.sql("SELECT run_id FROM run_results")}
    missing = sorted(ledger["accepted"] - set(rows))
    if missing:
        problems.append("%d runs that got a 202 are gone, e.g. %s" % (len(missing), missing[:3]))
    for run_id in ledger["cancelled"]:
        if run_id in rows and rows[run_id][0] != "cancelled":
            problems.append("run %s was cancelled (200) but is %s" % (run_id, rows[run_id][0]))
    for run_id, status in ledger["final"].items():
        if run_id in rows and rows[run_id][0] != status:
            problems.append("run %s was %s but is now %s" % (run_id, status, rows[run_id][0]))
    running = 0
    for run_id, (status, code) in rows.items():
        if status not in ("queued", "running") + FINAL:
            problems.append("run %s has status %r" % (run_id, status))
        if status == "failed" and code != "interrupted":
            problems.append("run %s failed with %r, not interrupted" % (run_id, code))
        if status == "done" and run_id not in with_results:
            problems.append("run %s is done without its results" % run_id)
        running += status == "running"
    if running > GPUS:
        problems.append("%d runs are running on %d GPUs" % (running, GPUS))
    if problems:
        raise AssertionError(where + ":\n  " + "\n  ".join(problems[:20]))
    return rows


def main():
    rng = random.Random(SEED)
    d = Daemon(gpus=GPUS, env={"GPUBENCH_FAKE_DELAY_MS": "3"},
               args=["--max-queue", "1000000"])
    ledger = {"accepted": set(), "recent": [], "cancelled": set(), "final": {}}
    t0 = time.time()
    for round_ in range(1, ROUNDS + 1):
        d.start()
        if round_ > 1:
            check(d, ledger, round_ - 1)
        ledger["recent"] = ledger["recent"][-200:]
        Clients(d, rng, ledger).run_for(rng.uniform(0.05, 0.8))
    d.start()
    rows = check(d, ledger, ROUNDS)
    statuses = {}
    for status, _ in rows.values():
        statuses[status] = statuses.get(status, 0) + 1
    # The restarted daemon works its queue: runs keep finishing.
    done = len(d.sql("SELECT id FROM runs WHERE status = 'done'"))
    queued = statuses.get("queued", 0) + statuses.get("running", 0)
    deadline = time.time() + 10
    while queued and len(d.sql("SELECT id FROM runs WHERE status = 'done'")) == done:
        if time.time() > deadline:
            raise AssertionError("after the last restart no queued run finished in 10 s")
        time.sleep(0.1)
    if d.stop() != 0:
        raise AssertionError("gpubenchd did not stop cleanly:\n" + d.read_log()[-3000:])
    if len(ledger["accepted"]) < 10 * ROUNDS:
        raise AssertionError("only %d runs accepted in %d rounds: not heavy posting"
                             % (len(ledger["accepted"]), ROUNDS))
    print("durability: %d kills in %.0f s (seed %d): %d runs accepted, all there; "
          "%d cancelled, %d seen final before a kill; now %s; integrity ok every time"
          % (ROUNDS, time.time() - t0, SEED, len(ledger["accepted"]), len(ledger["cancelled"]),
             len(ledger["final"]), statuses))


if __name__ == "__main__":
    main()
