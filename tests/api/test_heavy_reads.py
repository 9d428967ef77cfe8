"""Heavy reads never hold up light ones (issue 33, point 4).

The routes of weight HEAVY (server/http/router.c: /coverage, /cards,
/fleet, /compare, /changes, the exports; /metrics reads what its collectors keep ready and is light) run on the heavy pool
(server/http/heavy_pool.c), beside libmicrohttpd's threads.  The daemon
runs with two HTTP threads and two heavy threads, and
GPUBENCH_TEST_HEAVY_HOLD_MS (honoured only with --test-benchmarks) makes
every heavy job hold its thread for HOLD_S first.  With more heavy reads
in flight than there are HTTP threads, the test asserts, by counting and
not by timing:

- /healthz reports them all in the pool (running + queued), and answers
  while none of them has been answered;
- a single run (GET /runs/ID) and a list page are answered meanwhile;
- every heavy read is then answered whole (200), an export streamed in
  chunks made on the pool included;
- at SIGTERM the heavy read running ends (200) and those still queued are
  answered 503 at once, and the daemon exits 0.
"""
import os
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
HOLD_S = 5
HEAVY = ["/coverage", "/cards", "/compare?benchmark=smem_stride", "/runs.ndjson", "/coverage", "/cards"]


class Read(threading.Thread):
    def __init__(self, d, path):
        super().__init__(daemon=True)
        self.d, self.path, self.response, self.error = d, path, None, None
        self.done = threading.Event()

    def run(self):
        try:
            self.response = self.d.get(self.path, timeout=120)
        except Exception as e:  # noqa: BLE001 - the finding
            self.error = e
        self.done.set()


class HeavyReads(unittest.TestCase):
    def test_light_reads_answered_while_heavy_ones_wait(self):
        d = Daemon(args=["--test-benchmarks", "--http-threads", "2", "--heavy-threads", "2"],
                   env={"GPUBENCH_TEST_HEAVY_HOLD_MS": str(HOLD_S * 1000)})
        d.start()
        try:
            with open(os.path.join(ROOT, "examples/h200x2_daemon/runs.ndjson"), "rb") as f:
                self.assertEqual(d.post("/runs/import", f.read()).status, 200)
            run_id = d.get("/runs?limit=1").json()["runs"][0]["id"]
            health = d.get("/healthz").json()["heavy_reads"]
            self.assertEqual((health["threads"], health["running"], health["queued"]), (2, 0, 0))

            reads = [Read(d, p) for p in HEAVY]
            for r in reads:
                r.start()
            # Every one reaches the pool: two running, the rest queued.
            for _ in range(400):
                h = d.get("/healthz").json()["heavy_reads"]
                if h["running"] + h["queued"] == len(HEAVY):
                    break
                threading.Event().wait(0.01)
            self.assertEqual(h["running"], 2, h)
            self.assertEqual(h["queued"], len(HEAVY) - 2, h)
            # Light reads go through while not one heavy read is answered.
            for _ in range(5):
                self.assertEqual(d.get("/healthz").status, 200)
                self.assertEqual(d.get("/runs/" + run_id).status, 200)
                self.assertEqual(d.get("/runs?limit=5").status, 200)
            self.assertEqual([r.path for r in reads if r.done.is_set()], [],
                             "a heavy read was answered before the light ones")

            for r in reads:
                r.done.wait(HOLD_S * len(HEAVY) + 60)
                self.assertIsNone(r.error, r.path)
                self.assertEqual(r.response.status, 200, (r.path, r.response))
            lines = [l for l in next(r for r in reads if r.path == "/runs.ndjson")
                     .response.body.split("\n") if l]
            self.assertEqual(len(lines), 9)
        finally:
            d.stop(timeout=HOLD_S * len(HEAVY) + 30)

    def test_stop_answers_what_is_queued(self):
        """SIGTERM with heavy reads running and queued: the running ones end
        (their hold), the queued ones are answered 503 at once, not read;
        every request gets an answer and the daemon exits 0."""
        # a grace well past the hold: the running read ends within it even
        # under a sanitizer's slowness
        d = Daemon(args=["--test-benchmarks", "--heavy-threads", "1",
                         "--shutdown-grace", str(HOLD_S * 4)],
                   env={"GPUBENCH_TEST_HEAVY_HOLD_MS": str(HOLD_S * 1000)})
        d.start()
        reads = [Read(d, "/coverage") for _ in range(4)]
        for r in reads:
            r.start()
        for _ in range(400):
            h = d.get("/healthz").json()["heavy_reads"]
            if (h["running"], h["queued"]) == (1, 3):
                break
            threading.Event().wait(0.01)
        self.assertEqual((h["running"], h["queued"]), (1, 3))
        self.assertEqual(d.stop(timeout=HOLD_S * 4 + 15), 0)
        statuses = []
        for r in reads:
            r.done.wait(30)
            self.assertIsNone(r.error, r.path)
            statuses.append(r.response.status)
        self.assertEqual(sorted(statuses), [200, 503, 503, 503])

    def test_export_streamed_in_chunks_on_the_pool(self):
        """An export of many 64 KiB chunks, each made on the pool, arrives
        whole: every run once, each line JSON."""
        d = Daemon(args=["--test-benchmarks", "--heavy-threads", "1"])
        d.start()
        try:
            with open(os.path.join(ROOT, "examples/h200_daemon_health/health_runs.ndjson"), "rb") as f:
                self.assertEqual(d.post("/runs/import", f.read()).status, 200)
            for path in ("examples/h200_daemon_trust/trust_runs.ndjson",
                         "examples/h200x2_daemon/runs.ndjson"):
                with open(os.path.join(ROOT, path), "rb") as f:
                    self.assertEqual(d.post("/runs/import", f.read()).status, 200)
            n = len(d.get("/runs?limit=500").json()["runs"])
            body = d.get("/runs.ndjson").body
            self.assertGreater(len(body), 2 * 64 * 1024, "too small to need several chunks")
            import json
            ids = [json.loads(l)["id"] for l in body.split("\n") if l]
            self.assertEqual(len(ids), n)
            self.assertEqual(len(set(ids)), n)
        finally:
            d.stop()


if __name__ == "__main__":
    unittest.main()
