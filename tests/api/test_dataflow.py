"""Runs in and out without losing or hiding any (issue 12): imports as strict
as POST /runs, fleet pulls that always move even for the largest runs,
exports and /metrics that end with an error rather than short, and one
reading of the filters for GET /runs and its two exports.

Runs are made here as the import takes them (no GPU needed), with the
worker test double for the few that are posted."""
import http.client
import http.server
import json
import os
import random
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402
from test_api import ErrorAssertions  # noqa: E402


def run_id(n):
    """A run id (UUID form) that sorts by n: exports list the highest first."""
    return "01900000-0000-7000-8000-%012d" % n


def make_run(n, rows=None, host="node", uuid="GPU-00000000-data-4000-8000-000000000000",
             name="Fake GPU", meta=None, label=None):
    """A finished smem_stride run as GET /runs/ID shows it."""
    if rows is None:
        rows = [{"stride": s, "predicted_degree": 1, "median_ms": 1.5, "samples": [1.5, 1.25, 1.75]}
                for s in (1, 2)]
    return {
        "id": run_id(n), "benchmark": "smem_stride", "status": "done",
        "params": {"strides": [r["stride"] for r in rows][:64], "samples": 3},
        "device": {"index": 0, "uuid": uuid, "name": name}, "host": host, "label": label,
        "created_at": "2026-01-01T00:00:00.000Z", "started_at": "2026-01-01T00:00:01.000Z",
        "finished_at": "2026-01-01T00:00:02.000Z",
        "results": {"rows": rows, "summary": {}}, "meta": meta if meta is not None else {},
    }


def ndjson(runs):
    return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in runs)


def largest_run(n, rng):
    """A run at the API's bounds: smem_stride with 64 strides (the most) of
    1000 samples (the most), each sample a double that prints in full."""
    rows = []
    for s in range(1, 65):
        samples = [rng.uniform(0.001, 0.01) for _ in range(1000)]
        rows.append({"stride": s, "predicted_degree": 1, "median_ms": samples[500],
                     "min_ms": min(samples), "max_ms": max(samples), "ratio": 1.0,
                     "samples": samples})
    run = make_run(n, rows=rows)
    run["params"] = {"strides": list(range(1, 65)), "samples": 1000}
    return run


def wait_for(pred, timeout=30, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("timed out waiting for " + what)


def get_raw(d, path):
    """(status, body bytes, complete): complete is False when the chunked
    body ended without its last chunk, as a client sees a broken stream."""
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=60)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        try:
            return r.status, r.read(), True
        except http.client.IncompleteRead as e:
            return r.status, e.partial, False
    finally:
        conn.close()


class ImportTest(ErrorAssertions, unittest.TestCase):
    def setUp(self):
        self.d = Daemon(gpus=0).start()

    def tearDown(self):
        self.assertEqual(self.d.stop(), 0)

    def test_one_long_line_of_runs_is_refused(self):
        # what `curl -d @runs.ndjson` sends: the newlines stripped
        body = ndjson([make_run(i) for i in range(1, 10)]).replace("\n", "")
        err = self.assertError(self.d.post("/runs/import", body), 400, "malformed_json")
        self.assertIn("--data-binary", err["message"])
        self.assertIn("line 1", err["message"])
        self.assertEqual(self.d.get("/runs").json()["runs"], [])
        # the same runs, one a line, go in whole
        r = self.d.post("/runs/import", ndjson([make_run(i) for i in range(1, 10)]))
        self.assertEqual(r.json(), {"imported": 9, "already_here": 0})

    def test_text_after_a_line_names_the_line_and_imports_nothing(self):
        lines = ndjson([make_run(1), make_run(2), make_run(3)]).splitlines()
        for junk in (" trailing words", "]", " 42"):
            body = "\n".join([lines[0], lines[1] + junk, lines[2]]) + "\n"
            err = self.assertError(self.d.post("/runs/import", body), 400, "malformed_json")
            self.assertIn("line 2", err["message"])
            self.assertIn("nothing was imported", err["message"])
        # a second run after the first on one line, anywhere in the body
        body = lines[0] + "\n\n" + lines[1] + lines[2] + "\n"
        err = self.assertError(self.d.post("/runs/import", body), 400, "malformed_json")
        self.assertIn("line 3", err["message"])
        self.assertIn("--data-binary", err["message"])
        self.assertEqual(self.d.get("/runs").json()["runs"], [])
        # CRLF line ends and blank lines are fine
        r = self.d.post("/runs/import", "\r\n".join(lines) + "\r\n\r\n")
        self.assertEqual(r.json(), {"imported": 3, "already_here": 0})


class FilterTest(ErrorAssertions, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Daemon(gpus=2).start()
        cls.ids = {}
        for dev in (0, 1, 1):
            r = cls.d.post("/runs?wait=10", {"benchmark": "smem_pattern", "device": dev})
            assert r.status == 200, r
            cls.ids.setdefault(dev, set()).add(r.json()["id"])

    @classmethod
    def tearDownClass(cls):
        assert cls.d.stop() == 0

    def ids_of(self, path):
        """The run ids of GET /runs, /runs.ndjson or /runs.csv at path."""
        r = self.d.get(path)
        self.assertEqual(r.status, 200, r)
        if path.startswith("/runs.ndjson"):
            return {json.loads(x)["id"] for x in r.body.splitlines() if x}
        if path.startswith("/runs.csv"):
            return {x.split(",")[0] for x in r.body.splitlines()[1:] if x}
        return {x["id"] for x in r.json()["runs"]}

    def test_the_three_refuse_the_same_values(self):
        too_long = "x" * 300
        for base in ("/runs", "/runs.csv", "/runs.ndjson"):
            self.assertError(self.d.get(base + "?status=bogus"), 400, "out_of_bounds", "status")
            self.assertError(self.d.get(base + "?device=123456789"), 400, "out_of_bounds", "device")
            self.assertError(self.d.get(base + "?label=" + too_long), 400, "out_of_bounds", "label")
            self.assertError(self.d.get(base + "?colour=red"), 400, "unknown_field")
            self.assertEqual(self.d.get(base + "?status=done").status, 200)

    def test_device_number_is_the_gpu_index_everywhere(self):
        for base in ("/runs", "/runs.csv", "/runs.ndjson"):
            for dev in (0, 1):
                self.assertEqual(self.ids_of("%s?device=%d" % (base, dev)), self.ids[dev], base)
            self.assertEqual(self.ids_of(base + "?device=7"), set())
            # a UUID and a name still mean what they meant
            uuid = "GPU-00000000-fake-4000-8000-000000000001"
            self.assertEqual(self.ids_of(base + "?device=" + uuid), self.ids[1])
            self.assertEqual(self.ids_of(base + "?device=Fake%20GPU%20(test%20double)"),
                             self.ids[0] | self.ids[1])
        run = self.d.get("/runs/" + next(iter(self.ids[1]))).json()
        self.assertEqual(run["device"]["index"], 1)


class ExportErrorTest(unittest.TestCase):
    def test_an_export_that_fails_mid_stream_is_seen_as_an_error(self):
        d = Daemon(gpus=0).start()
        try:
            # A run whose CSV is far larger than its JSON: every result row
            # repeats the run's columns, here a 1 MB driver string, so 300
            # rows are 300 MB of CSV, over the stream's buffer.
            big = make_run(1, rows=[{"stride": i + 1, "median_ms": 1.5, "samples": [1.5]}
                                    for i in range(300)],
                           meta={"driver": {"nvidia_version": "5" * (1024 * 1024)}})
            small = [make_run(n) for n in (2, 3, 4)]
            r = d.post("/runs/import", ndjson(small + [big]))
            self.assertEqual(r.json(), {"imported": 4, "already_here": 0})
            status, body, complete = get_raw(d, "/runs.csv")
            self.assertEqual(status, 200)
            self.assertFalse(complete, "the CSV export ended as if whole")
            text = body.decode()
            self.assertTrue(text.startswith("run_id,"))
            for run in small:  # what came before the bad run came whole
                self.assertEqual(text.count(run["id"]), 2)
            self.assertFalse([x for x in text.splitlines() if x.startswith(big["id"])])
            self.assertIn("# export failed: run " + big["id"], text.splitlines()[-1])
            # the NDJSON of the same runs fits, and ends whole
            status, body, complete = get_raw(d, "/runs.ndjson")
            self.assertTrue(complete)
            self.assertEqual(len(body.decode().splitlines()), 4)
            # the run's own CSV is refused, not cut
            r = d.get("/runs/%s.csv" % big["id"])
            self.assertEqual(r.status, 500, r)
        finally:
            self.assertEqual(d.stop(), 0)

    def test_metrics_collector_over_the_cap_left_out_not_a_part(self):
        """Issue 33: a collector whose families pass the cap reports
        success 0 and leaves all of them out; the other collectors are
        served (before collectors, the whole scrape answered 500)."""
        d = Daemon(gpus=0, args=["--metrics-peer-results"]).start()
        try:
            # The latest run of each of 150 cards, each with 64 rows of five
            # gauges, long labels on every line: over /metrics' 32 MiB cap.
            rows = [{"stride": s, "predicted_degree": 1, "median_ms": 1.5, "samples": [1.5],
                     "ratio": 1.0, "gbps": 1.0, "share_of_ceiling": 0.5} for s in range(1, 65)]
            runs = [make_run(n, rows=rows, host="h" * 255, name="n" * 256,
                             uuid="GPU-%0124d" % n) for n in range(1, 151)]
            r = d.post("/runs/import", ndjson(runs))
            self.assertEqual(r.json()["imported"], 150)
            # about a second here, far longer under ThreadSanitizer on a busy
            # machine: a test of what comes back, not of how fast
            r = d.get("/metrics", timeout=180)
            self.assertEqual(r.status, 200, r.body[:200])
            text = r.body
            self.assertIn('gpubench_scrape_collector_success{collector="results"} 0', text)
            self.assertIn('gpubench_scrape_collector_success{collector="runs"} 1', text)
            self.assertIn('gpubench_runs{status="done"} 150', text)
            # none of the failed collector's families, not a part of them
            self.assertFalse([l for l in text.splitlines() if l.startswith("gpubench_result_")])
            self.assertFalse([l for l in text.splitlines()
                              if l.startswith("# TYPE gpubench_result_")])
        finally:
            self.assertEqual(d.stop(), 0)


class OversizedPeer(http.server.BaseHTTPRequestHandler):
    """A peer of another make: it ignores byte budgets, so any page of more
    than one run is over the puller's cap (declared up front)."""
    line = ""
    seq = 0

    def do_GET(self):
        from urllib.parse import urlparse, parse_qs
        q = parse_qs(urlparse(self.path).query)
        limit, after = int(q["limit"][0]), int(q["after_seq"][0])
        self.server.limits.append(limit)
        self.send_response(200)
        if limit > 1:
            self.send_header("Content-Length", str(512 * 1024 * 1024))
            self.end_headers()
            body = b"x" * 65536
        else:
            body = (self.line + "\n").encode() if after < self.seq else b""
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args):
        pass


class FleetPullTest(unittest.TestCase):
    def test_a_peer_of_the_largest_runs_syncs_every_run(self):
        rng = random.Random(12)
        runs = [largest_run(n, rng) for n in range(1, 21)]
        body = ndjson(runs)
        # about 1.4 MB each as sent, and as A prints them back: 20 of them
        # are well over a 16 MiB answer
        self.assertGreater(len(body) / 20, 1.3e6)
        a = Daemon(gpus=0).start()
        b = Daemon(gpus=0)
        b.args += ["--peer", "http://127.0.0.1:%d" % a.port, "--peer-interval", "1"]
        try:
            r = a.post("/runs/import", body)
            self.assertEqual(r.json(), {"imported": 20, "already_here": 0})
            # A's pages end by bytes: a page holds a few such runs, never 20
            page = a.get("/runs.ndjson?after_seq=0&limit=200").body.splitlines()
            self.assertGreater(min(len(x) for x in page), 1.3e6)
            self.assertLess(len(page), 20)
            self.assertGreater(len(page), 0)
            b.start()
            want = {r["id"] for r in runs}
            wait_for(lambda: {x["id"] for x in b.get("/runs?limit=500").json()["runs"]} == want,
                     timeout=60, what="B to hold all 20 large runs")
            got = b.get("/runs/" + runs[-1]["id"]).json()
            self.assertEqual(got["results"], a.get("/runs/" + runs[-1]["id"]).json()["results"])
            self.assertEqual(len(got["results"]["rows"][63]["samples"]), 1000)
            # The runs are committed before the pull's counters move.
            peer = wait_for(lambda: (lambda p: p["runs_pulled"] == 20 and p)(
                b.get("/peers").json()["peers"][0]), timeout=10,
                what="GET /peers to count the 20 runs")
            self.assertIsNone(peer["last_error"])
        finally:
            for d in (b, a):
                self.assertEqual(d.stop(), 0)

    def test_an_answer_over_the_cap_gets_smaller_pages_down_to_one(self):
        src = Daemon(gpus=0).start()
        src.post("/runs/import", ndjson([make_run(1)]))
        line = src.get("/runs.ndjson").body.splitlines()[0]
        self.assertEqual(src.stop(), 0)
        handler = type("H", (OversizedPeer,), {"line": line, "seq": json.loads(line)["seq"]})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.limits = []
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        d = Daemon(gpus=0)
        d.args += ["--peer", "http://127.0.0.1:%d" % server.server_address[1], "--peer-interval", "1"]
        d.start()
        try:
            wait_for(lambda: d.get("/runs/" + run_id(1)).status == 200, what="the run, one a page")
            self.assertEqual(server.limits[:8], [200, 100, 50, 25, 12, 6, 3, 1])
            self.assertEqual(d.get("/peers").json()["peers"][0]["failures_in_row"], 0)
        finally:
            self.assertEqual(d.stop(), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
