"""What a person reads, said plainly (issue "what a newcomer meets next",
points 3 and 4), against a real gpubenchd with the worker's TEST DOUBLE:

- an unknown benchmark in GET /fleet and GET /compare is refused (400
  unknown_benchmark, naming the benchmarks there are), as POST /runs does;
- a benchmark whose only runs are invalid says "no valid run: compute_peak
  throttled" in /coverage, not "never checked" (the REAL two-H200 health
  export of examples/, whose compute_peak runs were judged throttled);
- a runs: selector names the run it leaves out, and its verdict does not
  depend on the order the runs were listed in (SYNTHETIC runs,
  test_verdicts.make_run);
- GET /fleet gives a bandwidth row's GB/s beside its time (the REAL H200
  health exports);
- the bounds: max_age's cap said in its error, runs.ndjson?after_seq=0 a
  page of 200 by default."""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402
from test_api import ErrorAssertions  # noqa: E402
from test_verdicts import make_run  # noqa: E402

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")


def read(path):
    with open(os.path.join(EXAMPLES, path)) as f:
        return f.read()


class PlainWordsTest(ErrorAssertions, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Daemon(gpus=0).start()
        for path in ("h200x2_daemon_health/health_runs.ndjson",
                     "h200_daemon_health/health_runs.ndjson",
                     "h200_daemon_canary/canary_runs.ndjson",
                     "h200_run_end/health_runs.ndjson"):
            r = cls.d.post("/runs/import", read(path))
            assert r.status == 200, r
        # runs: A1 and A2 share a key, C (the newest) has other strides
        cls.a1 = make_run(1, 10, label="sel")
        cls.a2 = make_run(1, 11, label="sel")
        cls.c = make_run(1, 12, label="sel", strides=(1, 2, 4, 32))
        cls.b = make_run(2, 13, label="cand")
        body = "".join(json.dumps(r) + "\n" for r in (cls.a1, cls.a2, cls.c, cls.b))
        r = cls.d.post("/runs/import", body)
        assert r.status == 200, r

    @classmethod
    def tearDownClass(cls):
        assert cls.d.stop() == 0

    def test_unknown_benchmark_is_refused_naming_the_benchmarks(self):
        for path in ("/fleet?benchmark=nope", "/compare?benchmark=nope",
                     "/compare.md?benchmark=nope",
                     "/compare?benchmark=nope&baseline=label:sel&candidate=label:cand"):
            err = self.assertError(self.d.get(path), 400, "unknown_benchmark", "benchmark")
            self.assertIn('"nope"', err["message"])
            self.assertIn("smem_stride", err["message"])
            self.assertIn("hbm_bandwidth", err["message"])
        # a known one still answers
        self.assertEqual(self.d.get("/fleet?benchmark=hbm_bandwidth").status, 200)

    def test_only_invalid_runs_say_why_not_never_checked(self):
        from test_client import example_window
        hours, _ = example_window(self)  # every other cell fresh: the reason is this one
        cov = self.d.get("/coverage?max_age=" + hours).json()
        cards = [c for c in cov["cards"] if c["host"] == "h200x2-c"]
        self.assertEqual(len(cards), 2, cov)
        for card in cards:
            cell = next(x for x in card["cells"] if x["benchmark"] == "compute_peak")
            self.assertEqual((cell["state"], cell["invalid"]), ("never", "throttled"), cell)
            self.assertEqual(card["coverage_reason"], "no valid run: compute_peak throttled")
        # a card with valid runs of it has no such field
        other = next(c for c in cov["cards"] if c["host"] == "h200-a")
        self.assertNotIn("invalid", next(x for x in other["cells"]
                                         if x["benchmark"] == "compute_peak"))

    def test_runs_selector_names_what_it_leaves_out_in_any_order(self):
        answers = []
        for order in ((self.a1, self.a2, self.c), (self.c, self.a1, self.a2),
                      (self.a2, self.c, self.a1)):
            sel = "runs:" + ",".join(r["id"] for r in order)
            r = self.d.get("/compare?baseline=%s&candidate=runs:%s" % (sel, self.b["id"]))
            self.assertEqual(r.status, 200, r)
            doc = r.json()
            self.assertTrue(doc["comparable"], doc)
            base = doc["baseline"]
            self.assertEqual(sorted(base["runs"]), sorted([self.a1["id"], self.a2["id"]]))
            self.assertEqual(base["excluded_other_key"], 1)
            self.assertEqual([x["run_id"] for x in base["left_out"]], [self.c["id"]])
            self.assertIn("other parameters", base["left_out"][0]["reason"])
            answers.append((doc["verdict"], [row["verdict"] for row in doc["rows"]]))
        self.assertEqual(answers[0], answers[1])
        self.assertEqual(answers[0], answers[2])

    def test_fleet_gives_bandwidth_beside_time(self):
        fleet = self.d.get("/fleet?benchmark=hbm_bandwidth").json()
        cells = [row for g in fleet["groups"] for c in g["cards"] for row in c["rows"]]
        self.assertTrue(cells)
        for cell in cells:
            self.assertEqual(cell["unit"], "GB/s", cell)
            self.assertGreater(cell["value"], 1000)  # an H200's HBM: thousands of GB/s
        # smem_stride's rows have no such figure: none is made up
        fleet = self.d.get("/fleet?benchmark=smem_stride").json()
        for g in fleet["groups"]:
            for c in g["cards"]:
                for row in c["rows"]:
                    self.assertNotIn("unit", row)

    def test_max_age_says_its_cap(self):
        for path in ("/coverage?max_age=400d", "/cards?max_age=400d"):
            err = self.assertError(self.d.get(path), 400, "out_of_bounds", "max_age")
            self.assertIn("up to a year (366d)", err["message"])
            self.assertIn("1.5h", err["message"])
        self.assertEqual(self.d.get("/coverage?max_age=1.5h").status, 200)

    def test_after_seq_pages_200_by_default(self):
        runs = [make_run(3, 1 + i % 28, label="many") for i in range(230)]
        r = self.d.post("/runs/import", "".join(json.dumps(x) + "\n" for x in runs))
        self.assertEqual(r.status, 200, r)
        lines = self.d.get("/runs.ndjson?after_seq=0").body.splitlines()
        self.assertEqual(len(lines), 200)
        last = json.loads(lines[-1])["seq"]
        rest = self.d.get("/runs.ndjson?after_seq=%d" % last).body.splitlines()
        self.assertGreater(len(rest), 0)
        self.assertEqual(len(self.d.get("/runs.ndjson?after_seq=0&limit=7").body.splitlines()), 7)
        # a whole export has no count
        self.assertGreater(len(self.d.get("/runs.ndjson").body.splitlines()), 230)


class CanaryDurationTest(unittest.TestCase):
    """--canary reads its period with the parser max_age uses."""

    def test_canary_takes_what_max_age_takes(self):
        d = Daemon(gpus=1, args=["--canary", "hbm_bandwidth@1.5h"]).start()
        try:
            text = d.get("/canaries").body
            self.assertIn("5400", text)
        finally:
            self.assertEqual(d.stop(), 0)
        d = Daemon(gpus=1, args=["--canary", "hbm_bandwidth@400d"])
        with self.assertRaises(Exception):
            d.start(timeout=5)
        with open(d.log_path) as f:
            self.assertIn("up to a year (366d)", f.read())
        d.stop()


if __name__ == "__main__":
    unittest.main(verbosity=2)
