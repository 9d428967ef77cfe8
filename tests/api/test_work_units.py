"""Times per unit of work across runs (issue 21, point 2): a smem row's
samples are the time of the run's calibrated iterations_per_sample
iterations, so two runs of one card at one speed whose calibration landed
on 1024 and 4096 iterations differ 4x in milliseconds.  GET /compare (its
series and its verdicts) must compare them per iteration and say so.

The runs are SYNTHETIC (seeded samples, meta.synthetic true), imported
through POST /runs/import; no number comes from a GPU."""
import json
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402

MODEL = "Synthetic H200"
UUID = "GPU-5e1ec7ed-0021-4000-8000-000000000000"
US_PER_ITERATION = {1: 1.07, 32: 33.1}  # one card's speed, per iteration
RNG = random.Random(21)
SEQ = [0]


def make_run(iterations, min_sample_ms=1, samples=20):
    """A done smem_stride run of the card whose samples held iterations
    iterations each, stated where every worker states it: the summary's
    launch.iterations_per_sample."""
    SEQ[0] += 1
    rows = []
    for stride, us in US_PER_ITERATION.items():
        xs = [us * 1e-3 * iterations * (1 + RNG.gauss(0, 0.002)) for _ in range(samples)]
        s = sorted(xs)
        rows.append({"stride": stride, "predicted_degree": stride, "median_ms": s[samples // 2],
                     "min_ms": s[0], "max_ms": s[-1], "samples": xs,
                     "sm_clock_mhz_measured": 1980.0})
    when = "2026-01-21T10:00:%02d.000Z" % SEQ[0]
    return {
        "id": "01900000-0000-7000-8000-%012d" % (2100 + SEQ[0]), "benchmark": "smem_stride",
        "status": "done",
        "params": {"strides": [1, 32], "samples": samples, "min_sample_ms": min_sample_ms},
        "device": {"index": 0, "uuid": UUID, "name": MODEL}, "host": "synth",
        "label": "work-units", "created_at": when, "started_at": when, "finished_at": when,
        "results": {"rows": rows,
                    "summary": {"launch": {"loads_per_iteration": 32,
                                           "iterations_per_sample": iterations}}},
        "meta": {"synthetic": True, "driver": {"nvidia_version": "560.35"},
                 "watch": {"available": False, "reason": "synthetic"}},
    }


class WorkUnitsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Daemon(gpus=0).start()

    @classmethod
    def tearDownClass(cls):
        assert cls.d.stop() == 0

    def imported(self, *runs):
        r = self.d.post("/runs/import", "".join(json.dumps(x) + "\n" for x in runs))
        self.assertEqual(r.status, 200, r)
        return [x["id"] for x in runs]

    def verdict(self, a, b):
        r = self.d.get("/compare?baseline=runs:%s&candidate=runs:%s" % (a, b))
        self.assertEqual(r.status, 200, r)
        return r.json()

    def test_other_iterations_same_speed(self):
        a, b = self.imported(make_run(1024), make_run(4096))
        v = self.verdict(a, b)
        self.assertTrue(v["comparable"], v.get("differences"))
        self.assertEqual(v["time_per"], "iteration")
        self.assertEqual(v["verdict"], "same", v["rows"])
        for row in v["rows"]:
            us = US_PER_ITERATION[row["key"]]
            for side in ("baseline_median_ms", "candidate_median_ms"):
                self.assertAlmostEqual(row[side] / (us * 1e-3), 1, delta=0.01, msg=row)
        # /compare's series: one card, one series, its medians per iteration
        c = self.d.get("/compare?benchmark=smem_stride&label=work-units").json()
        self.assertEqual(c["time_per"], "iteration")
        series = [s for s in c["series"] if b in s["runs"]]
        self.assertEqual(len(series), 1)
        self.assertIn(a, series[0]["runs"])
        for row in series[0]["rows"]:
            us = US_PER_ITERATION[row["key"]]
            self.assertAlmostEqual(row["median_ms"] / (us * 1e-3), 1, delta=0.01, msg=row)
        # GET /benchmarks says what the unit is
        bench = {x["name"]: x for x in self.d.get("/benchmarks").json()["benchmarks"]}
        self.assertEqual(bench["smem_stride"]["work_unit"]["unit"], "iteration")
        self.assertEqual(bench["transpose"]["work_unit"]["unit"], "launch")

    def test_other_min_sample_ms_same_speed(self):
        # NEEDS i21-key (min_sample_ms out of the comparability key): until
        # that branch is merged, runs at min_sample_ms 1 and 4 are "not
        # comparable", and this test skips saying so.
        a, b = self.imported(make_run(1024, min_sample_ms=1), make_run(4096, min_sample_ms=4))
        v = self.verdict(a, b)
        if any(d["field"] == "params.min_sample_ms" for d in v["differences"]):
            self.skipTest("min_sample_ms is still in the comparability key (branch i21-key)")
        self.assertTrue(v["comparable"], v["differences"])
        self.assertEqual(v["verdict"], "same", v["rows"])


if __name__ == "__main__":
    unittest.main()
