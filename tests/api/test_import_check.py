"""Issue 21, point 3: an import, and a peer's page, are held to what POST
/runs makes: a run of an unknown benchmark, unknown or out-of-bounds
params, a row without the fields its benchmark's rows carry, or a number
that is not finite is refused, naming the line and the field, and nothing
of that import is stored.  Runs stored before defaults were filled in
(params left out) still import.  A peer that serves a benchmark this
daemon does not know (a newer node) is skipped past, counted in GET
/peers.  Point 6a: p2p_bandwidth needs two GPUs: alone on one it is
refused (409), the health suite leaves it out and says so."""
import copy
import http.server
import json
import os
import sys
import threading
import time
import unittest
import uuid

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, assert_too_few_gpus  # noqa: E402

MARK = 987654.125  # a number the tests replace in the NDJSON text


def new_id():
    return str(uuid.UUID(int=uuid.uuid4().int & ~(0xF << 76) | (7 << 76)))


def ndjson(runs):
    return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in runs)


def count_runs(d):
    return d.sql("SELECT count(*) FROM runs")[0][0]


class ImportFixture(unittest.TestCase):
    """A daemon holding one real run of the test double, and copies of it
    with new ids (run_like) to import: what the import tests share."""

    @classmethod
    def setUpClass(cls):
        cls.d = Daemon(gpus=1).start()
        r = cls.d.post("/runs?wait=20", {"benchmark": "smem_stride",
                                         "params": {"strides": [1, 2, 32], "samples": 3}})
        assert r.status == 200 and r.json()["status"] == "done", r
        cls.good = json.loads(cls.d.get("/runs.ndjson").body.splitlines()[0])

    @classmethod
    def tearDownClass(cls):
        assert cls.d.stop() == 0

    def run_like(self, **changes):
        run = copy.deepcopy(self.good)
        run["id"] = new_id()
        run.update(changes)
        return run


class ImportRefusesTest(ImportFixture):
    def refused(self, runs, line, field, code, text=None):
        """Imports runs (or NDJSON text): 400 naming line and field, nothing stored."""
        before = count_runs(self.d)
        r = self.d.post("/runs/import", text if text is not None else ndjson(runs))
        self.assertEqual(r.status, 400, r)
        err = r.json()["error"]
        self.assertEqual(err["code"], code, err)
        self.assertEqual(err.get("field") or "", field, err)
        self.assertRegex(err["message"], r"^line %d\b" % line)
        if field:
            self.assertIn(field, err["message"])
        self.assertEqual(count_runs(self.d), before, "a refused import stored something")
        return err

    def test_misspelled_benchmark(self):
        err = self.refused([self.run_like(), self.run_like(benchmark="smem_strid")], 2,
                           "benchmark", "unknown_benchmark")
        self.assertIn("smem_strid", err["message"])

    def test_unknown_param(self):
        bad = self.run_like()
        bad["params"]["stides"] = [1, 2]
        self.refused([bad], 1, "params.stides", "unknown_field")

    def test_out_of_bounds_param(self):
        bad = self.run_like()
        bad["params"]["strides"] = [1, 2, 0]
        self.refused([self.run_like(), self.run_like(), bad], 3, "params.strides[2]",
                     "out_of_bounds")

    def test_row_without_median(self):
        bad = self.run_like()
        del bad["results"]["rows"][1]["median_ms"]
        self.refused([self.run_like(), bad], 2, "results.rows[1].median_ms", "missing_field")

    def test_row_field_of_the_wrong_type(self):
        bad = self.run_like()
        bad["results"]["rows"][0]["samples"] = "fast"
        self.refused([bad], 1, "results.rows[0].samples", "wrong_type")

    def test_number_that_is_not_finite(self):
        bad = self.run_like()
        bad["results"]["rows"][2]["median_ms"] = MARK
        text = ndjson([self.run_like(), bad]).replace(repr(MARK), "1e999")
        self.assertIn("1e999", text)
        self.refused(None, 2, "results.rows[2].median_ms", "out_of_bounds", text=text)
        # NaN is not JSON at all: refused as such, naming the line.
        text = ndjson([self.run_like(), bad]).replace(repr(MARK), "NaN")
        self.refused(None, 2, "", "malformed_json", text=text)

    def test_a_member_named_twice_anywhere(self):
        """Issue 35, point 9: a reader may take either of two members of one
        name (cJSON the first, a browser the last): refused wherever they
        are, in any letter case."""
        run = self.run_like()
        run["results"]["rows"][0]["zz_twice"] = MARK
        text = ndjson([run]).replace('"zz_twice":%s' % MARK, '"median_ms":1,"MEDIAN_MS":2')
        self.assertIn('"MEDIAN_MS":2', text)
        self.refused(None, 1, "results.rows[0]", "invalid_run", text=text)
        run = self.run_like()
        run["meta"]["zz_twice"] = MARK
        text = ndjson([run]).replace('"zz_twice":%s' % MARK, '"host":"a","host":"b"')
        self.refused(None, 1, "meta", "invalid_run", text=text)
        # Names far apart in a large object, a letter's case apart, and in
        # one larger than the names hashed at once (pair by pair there);
        # many names that are not the same (a hash alike proves nothing)
        # are taken.
        for members in (40, 100):
            run = self.run_like()
            run["meta"]["zz_many"] = {"Name%d" % i: i for i in range(members)}
            run["meta"]["zz_many"]["nAME0"] = MARK
            self.refused([run], 1, "meta.zz_many", "invalid_run")
            run = self.run_like()
            run["meta"]["zz_many"] = {"Name%d" % i: i for i in range(members)}
            r = self.d.post("/runs/import", ndjson([run]))
            self.assertEqual(r.status, 200, r)

    def test_text_that_is_not_utf8(self):
        """Issue 35, point 9: bytes that are not UTF-8, in a value or a
        name, are refused, not stored and served raw."""
        run = self.run_like(label="zz-not-utf8")
        body = ndjson([run]).encode().replace(b"zz-not-utf8", b"lab\xff\xfe")
        err = self.refused(None, 1, "label", "invalid_run", text=body)
        self.assertIn("UTF-8", err["message"])
        run = self.run_like()
        run["meta"]["zz_key"] = 1
        body = ndjson([run]).encode().replace(b'"zz_key"', b'"k\xc0\xafy"')  # overlong '/'
        self.refused(None, 1, "meta.?", "invalid_run", text=body)

    def test_escapes_in_ascii_text(self):
        """A line of ASCII bytes skips the UTF-8 walk (import_check_line):
        its \\u escapes are decoded as UTF-8, kept, and a lone surrogate
        is still refused."""
        run = self.run_like(label="zz-escaped")
        text = ndjson([run]).replace("zz-escaped", "caf\\u00e9 \\ud83d\\ude80")
        self.assertTrue(text.isascii())
        r = self.d.post("/runs/import", text)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.d.get("/runs/" + run["id"]).json()["label"], "caf\u00e9 \U0001f680")
        run = self.run_like(label="zz-escaped")
        text = ndjson([run]).replace("zz-escaped", "lone \\ud800 half")
        self.refused(None, 1, "", "malformed_json", text=text)

    def test_test_only_benchmark_without_the_flag(self):
        bad = self.run_like(benchmark="test_hang", params={})
        bad["results"]["rows"] = []
        err = self.refused([bad], 1, "benchmark", "unknown_benchmark")
        self.assertIn("--test-benchmarks", err["message"])

    def test_old_run_without_defaulted_params_imports_as_it_came(self):
        old = self.run_like(params={"strides": [1, 2, 32]})
        r = self.d.post("/runs/import", ndjson([old]))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json()["imported"], 1)
        self.assertEqual(self.d.get("/runs/" + old["id"]).json()["params"], {"strides": [1, 2, 32]})

    def test_a_newer_nodes_extra_row_field_is_accepted(self):
        newer = self.run_like()
        for row in newer["results"]["rows"]:
            row["field_of_a_newer_gpubench"] = {"anything": [1, "two"]}
        r = self.d.post("/runs/import", ndjson([newer]))
        self.assertEqual(r.status, 200, r)


class PeerHandler(http.server.BaseHTTPRequestHandler):
    """A peer's /runs.ndjson: the lines after ?after_seq=N."""
    lines = []  # (seq, text)

    def do_GET(self):
        if "after_seq=" not in self.path:  # GET /peers, /card_faults: a node without them
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        after = int(self.path.split("after_seq=")[1].split("&")[0])
        body = "".join(text + "\n" for seq, text in self.lines if seq > after).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def fake_peer(test, runs):
    """Serves runs (each given seq 1, 2, ... in order) as a peer's
    /runs.ndjson for the length of test; its URL."""
    for seq, run in enumerate(runs, 1):
        run["seq"] = seq
    handler = type("H", (PeerHandler,), {"lines": [(r["seq"], json.dumps(r)) for r in runs]})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    test.addCleanup(server.server_close)
    test.addCleanup(server.shutdown)
    return "http://127.0.0.1:%d" % server.server_address[1]


def pulled_to(hub, cursor, timeout=20):
    """Waits until hub's only peer's cursor reaches cursor; that peer."""
    deadline = time.time() + timeout
    while time.time() < deadline and hub.get("/peers").json()["peers"][0]["cursor"] < cursor:
        time.sleep(0.1)
    return hub.get("/peers").json()["peers"][0]


class PeerSkipsUnknownTest(unittest.TestCase):
    def test_unknown_benchmark_between_two_good_runs(self):
        src = Daemon(gpus=1).start()
        try:
            for _ in range(2):
                r = src.post("/runs?wait=20", {"benchmark": "smem_stride",
                                               "params": {"strides": [1, 2], "samples": 3}})
                self.assertEqual(r.status, 200, r)
            good = [json.loads(x) for x in src.get("/runs.ndjson").body.splitlines()]
        finally:
            self.assertEqual(src.stop(), 0)
        good.sort(key=lambda r: r["seq"])
        newer = copy.deepcopy(good[0])
        newer.update(id=new_id(), benchmark="smem_stride_v2")
        d = Daemon(gpus=0)
        d.args += ["--peer", fake_peer(self, [good[0], newer, good[1]]), "--peer-interval", "1"]
        d.start()
        try:
            peer = pulled_to(d, 3)
            self.assertEqual(peer["cursor"], 3, peer)
            self.assertEqual(peer["runs_pulled"], 2, peer)
            self.assertIsNone(peer["last_error"], peer)
            self.assertEqual(peer["skipped"]["count"], 1, peer)
            self.assertIn(newer["id"], peer["skipped"]["last_reason"])
            self.assertIn("smem_stride_v2", peer["skipped"]["last_reason"])
            ids = {r["id"] for r in d.get("/runs").json()["runs"]}
            self.assertEqual(ids, {good[0]["id"], good[1]["id"]})
            time.sleep(1.5)  # more pulls count it no more
            self.assertEqual(d.get("/peers").json()["peers"][0]["skipped"]["count"], 1)
        finally:
            self.assertEqual(d.stop(), 0)
        # The count outlives a restart, with the cursor.
        d.start()
        try:
            peer = d.get("/peers").json()["peers"][0]
            self.assertEqual((peer["cursor"], peer["skipped"]["count"]), (3, 1), peer)
        finally:
            self.assertEqual(d.stop(), 0)


class P2pNeedsTwoGpusTest(unittest.TestCase):
    def test_one_gpu(self):
        d = Daemon(gpus=1).start()
        try:
            before = count_runs(d)
            assert_too_few_gpus(self, d, "p2p_bandwidth")
            self.assertEqual(count_runs(d), before)
            r = d.post("/runs?wait=30", {"benchmark": "health"})
            self.assertEqual(r.status, 200, r)
            body = r.json()
            names = [x["benchmark"] for x in body["runs"]]
            self.assertNotIn("p2p_bandwidth", names)
            self.assertIn("smem_stride", names)
            self.assertEqual(body["left_out"], [
                {"benchmark": b, "reason": "needs 2 GPUs; this node has 1"}
                for b in ("p2p_bandwidth", "nccl_allreduce")])
            self.assertTrue(all(x["status"] == "done" for x in body["runs"]), body)
        finally:
            self.assertEqual(d.stop(), 0)

    def test_two_gpus(self):
        d = Daemon(gpus=2).start()
        try:
            r = d.post("/runs", {"benchmark": "health"})
            self.assertEqual(r.status, 202, r)
            self.assertIn("p2p_bandwidth", [x["benchmark"] for x in r.json()["runs"]])
            self.assertNotIn("left_out", r.json())
            r = d.post("/runs?wait=30", {"benchmark": "p2p_bandwidth"})
            self.assertEqual(r.status, 200, r)
            self.assertTrue(r.json()["results"]["rows"])
        finally:
            self.assertEqual(d.stop(), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
