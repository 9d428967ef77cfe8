"""The validity verdict (issue 13) through the API, with the worker test
double reporting what a watch of the card would see (tests/fake_worker.c
modes: normal, contended, throttled, noisy, busy_start, clock_unstable,
ecc_errors, skewed, nowatch).  Every number is synthetic."""
import csv
import io
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402
from test_api import ErrorAssertions  # noqa: E402
from test_fleet import wait_for  # noqa: E402


def codes(run):
    return [r["code"] for r in run["validity"]["reasons"]]


class ValidityTest(ErrorAssertions, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Daemon().start()
        cls.runs = {}
        for mode in ("normal", "contended", "throttled", "noisy", "busy_start",
                     "clock_unstable", "ecc_errors", "skewed", "nowatch"):
            cls.runs[mode] = cls.post(mode, "smem_stride", {"strides": [1, 2, 32]}, "v")

    @classmethod
    def tearDownClass(cls):
        assert cls.d.stop() == 0

    @classmethod
    def post(cls, mode, bench, params, label, d=None):
        d = d or cls.d
        d.set_mode(mode)
        r = d.post("/runs?wait=20", {"benchmark": bench, "params": params, "label": label})
        assert r.status == 200, r
        run = r.json()
        assert run["status"] == "done", run
        return run["id"]

    def get(self, mode):
        return self.d.get("/runs/" + self.runs[mode]).json()

    # -- the badge's data: GET /runs/ID ----------------------------------
    def test_idle_run_is_valid(self):
        run = self.get("normal")
        self.assertIs(run["validity"]["valid"], True)
        self.assertEqual(run["validity"]["reasons"], [])
        self.assertEqual(self.d.sql("SELECT valid FROM runs WHERE id = '%s'" % run["id"]), [(1,)])

    def test_contended_names_the_process(self):
        run = self.get("contended")
        self.assertIs(run["validity"]["valid"], False)
        self.assertEqual(codes(run), ["contended"])
        self.assertEqual(run["validity"]["reasons"][0]["processes"], [{"pid": 4242, "name": "python3"}])
        self.assertIn("4242", run["validity"]["reasons"][0]["message"])
        # a run whose kernels ran stays done
        self.assertEqual(run["status"], "done")
        self.assertEqual(self.d.sql("SELECT valid FROM runs WHERE id = '%s'" % run["id"]), [(0,)])

    def test_throttled(self):
        run = self.get("throttled")
        self.assertEqual(codes(run), ["throttled"])
        self.assertEqual(run["validity"]["reasons"][0]["reasons"], ["sw_power_cap"])

    def test_noisy(self):
        run = self.get("noisy")
        self.assertEqual(codes(run), ["noisy"])
        self.assertEqual([r["row"] for r in run["validity"]["reasons"][0]["rows"]], [0, 1, 2])

    def test_busy_start_and_contended(self):
        run = self.get("busy_start")
        self.assertIs(run["validity"]["valid"], False)
        self.assertEqual(set(codes(run)), {"busy_start", "contended"})

    def test_clock_unstable_and_ecc(self):
        run = self.get("clock_unstable")
        self.assertEqual(codes(run), ["clock_unstable"])
        self.assertEqual(run["validity"]["reasons"][0]["rows"][0]["stride"], 1)
        self.assertEqual(codes(self.get("ecc_errors")), ["ecc_errors"])

    def test_skewed_clock_is_valid_and_cycles_say_the_truth(self):
        run = self.get("skewed")
        self.assertIs(run["validity"]["valid"], True)
        row32 = run["results"]["rows"][2]
        self.assertAlmostEqual(row32["ratio_cycles"], 32.0, places=9)
        self.assertAlmostEqual(row32["ratio"], 32.0 * 1943 / 1979, places=9)
        self.assertIn("mem_clock_mhz", row32)
        self.assertLess(row32["ci_low_ms"], row32["ci_high_ms"])

    def test_unwatched_run_is_unknown(self):
        run = self.get("nowatch")
        self.assertIsNone(run["validity"]["valid"])
        self.assertEqual(self.d.sql("SELECT valid FROM runs WHERE id = '%s'" % run["id"]), [(None,)])

    def test_list_entries_carry_the_verdict(self):
        runs = {r["id"]: r for r in self.d.get("/runs?label=v&limit=500").json()["runs"]}
        self.assertIs(runs[self.runs["normal"]]["validity"]["valid"], True)
        self.assertEqual(codes(runs[self.runs["contended"]]), ["contended"])
        self.assertIsNone(runs[self.runs["nowatch"]]["validity"]["valid"])

    # -- the filter ------------------------------------------------------
    def test_valid_filter(self):
        invalid = {self.runs[m] for m in ("contended", "throttled", "noisy", "busy_start",
                                           "clock_unstable", "ecc_errors")}
        valid_or_unknown = {self.runs[m] for m in ("normal", "skewed", "nowatch")}
        got = {r["id"] for r in self.d.get("/runs?label=v&valid=false").json()["runs"]}
        self.assertEqual(got, invalid)
        got = {r["id"] for r in self.d.get("/runs?label=v&valid=true").json()["runs"]}
        self.assertEqual(got, valid_or_unknown)  # null counts as valid
        page = self.d.get("/runs?label=v&valid=false&limit=2").json()
        self.assertIn("valid=false", page["next"])
        rest = self.d.get(page["next"]).json()["runs"]
        self.assertTrue(all(r["validity"]["valid"] is False for r in rest))
        self.assertError(self.d.get("/runs?valid=maybe"), 400, "out_of_bounds", "valid")
        self.assertError(self.d.get("/runs?valid="), 400, "out_of_bounds", "valid")

    # -- the exports -----------------------------------------------------
    def test_csv_columns(self):
        r = self.d.get("/runs.csv?label=v")
        self.assertEqual(r.status, 200, r)
        lines = list(csv.DictReader(io.StringIO(r.body)))
        by_run = {}
        for line in lines:
            by_run.setdefault(line["run_id"], line)
        self.assertEqual(by_run[self.runs["normal"]]["valid"], "true")
        self.assertEqual(by_run[self.runs["normal"]]["validity_reasons"], "")
        self.assertEqual(by_run[self.runs["contended"]]["valid"], "false")
        self.assertEqual(by_run[self.runs["busy_start"]]["validity_reasons"], "contended;busy_start")
        self.assertEqual(by_run[self.runs["nowatch"]]["valid"], "")
        self.assertEqual(float(by_run[self.runs["skewed"]]["ratio_cycles"]), 1.0)
        only = list(csv.DictReader(io.StringIO(self.d.get("/runs.csv?label=v&valid=false").body)))
        self.assertEqual({l["valid"] for l in only}, {"false"})
        one = list(csv.DictReader(io.StringIO(self.d.get("/runs/%s.csv" % self.runs["throttled"]).body)))
        self.assertEqual(one[0]["validity_reasons"], "throttled")
        self.assertError(self.d.get("/runs.csv?valid=1"), 400, "out_of_bounds", "valid")

    def test_ndjson_carries_the_verdict(self):
        lines = [json.loads(l) for l in self.d.get("/runs.ndjson?label=v&valid=false").body.splitlines()]
        self.assertEqual(len(lines), 6)
        self.assertTrue(all(l["validity"]["valid"] is False and l["validity"]["reasons"] for l in lines))
        self.assertError(self.d.get("/runs.ndjson?valid=no"), 400, "out_of_bounds", "valid")

    # -- /metrics --------------------------------------------------------
    def test_metrics_verdict(self):
        # The verdict is a gauge of its own, not a label of the result
        # gauges: a label that changes with each run would start a new
        # series (issue 17).
        def pattern_lines(name):
            body = self.d.get("/metrics").body
            return [l for l in body.splitlines()
                    if l.startswith(name + "{") and 'benchmark="smem_pattern"' in l]
        self.post("contended", "smem_pattern", {}, "m")
        lines = pattern_lines("gpubench_result_median_seconds")
        self.assertEqual(len(lines), 1, lines)
        self.assertNotIn("valid=", lines[0])
        self.assertEqual(pattern_lines("gpubench_result_valid")[0].split()[-1], "0")
        self.post("normal", "smem_pattern", {}, "m")
        self.assertEqual(pattern_lines("gpubench_result_valid")[0].split()[-1], "1")
        self.post("nowatch", "smem_pattern", {}, "m")  # not judged: counted as valid
        self.assertEqual(pattern_lines("gpubench_result_valid")[0].split()[-1], "1")
        self.assertEqual(pattern_lines("gpubench_result_median_seconds"), lines)

    # -- /compare --------------------------------------------------------
    def test_compare_leaves_invalid_runs_out(self):
        for mode in ("normal", "contended", "normal", "noisy"):
            self.post(mode, "transpose", {"n": 256}, "cmp")
        r = self.d.get("/compare?benchmark=transpose&label=cmp")
        self.assertEqual(r.status, 200, r)
        body = r.json()
        self.assertEqual(body["excluded_invalid"], 2)
        self.assertIs(body["include_invalid"], False)
        (series,) = body["series"]
        self.assertEqual(len(series["runs"]), 2)
        self.assertEqual(series["excluded_invalid"], 2)
        # latest=2 still finds two valid runs: the invalid ones take no place
        self.assertEqual(len(self.d.get("/compare?benchmark=transpose&label=cmp&latest=2")
                             .json()["series"][0]["runs"]), 2)
        every = self.d.get("/compare?benchmark=transpose&label=cmp&include_invalid=true").json()
        self.assertEqual(every["excluded_invalid"], 0)
        self.assertEqual(len(every["series"][0]["runs"]), 4)
        self.assertError(self.d.get("/compare?benchmark=transpose&include_invalid=yes"),
                         400, "out_of_bounds", "include_invalid")

    # -- runs made elsewhere ---------------------------------------------
    def test_import_is_judged_not_trusted(self):
        old = self.get("normal")
        del old["meta"]["watch"]
        old["id"] = old["id"][:-4] + "beef"
        old["validity"] = {"valid": False, "reasons": [{"code": "made_up", "message": "x"}]}
        shared = self.get("contended")
        shared["id"] = shared["id"][:-4] + "feed"
        shared["validity"] = {"valid": True, "reasons": []}  # a claim, not a verdict
        old["label"] = shared["label"] = "imported"  # not among the filter tests' runs
        r = self.d.post("/runs/import", json.dumps(old) + "\n" + json.dumps(shared) + "\n")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json()["imported"], 2)
        got = self.d.get("/runs/" + old["id"]).json()
        self.assertIsNone(got["validity"]["valid"])  # made before the watch: unknown
        self.assertEqual(got["validity"]["reasons"], [])
        got = self.d.get("/runs/" + shared["id"]).json()
        self.assertIs(got["validity"]["valid"], False)
        self.assertEqual(codes(got), ["contended"])

    def test_pulled_from_a_peer_is_judged(self):
        b = Daemon(gpus=0, args=["--peer", "http://127.0.0.1:%d" % self.d.port,
                                 "--peer-interval", "1"]).start()
        try:
            rid = self.runs["throttled"]
            wait_for(lambda: b.get("/runs/" + rid).status == 200, what="the peer's pull")
            self.assertEqual(codes(b.get("/runs/" + rid).json()), ["throttled"])
            self.assertIs(b.get("/runs/" + self.runs["normal"]).json()["validity"]["valid"], True)
        finally:
            self.assertEqual(b.stop(), 0)


if __name__ == "__main__":
    unittest.main()
