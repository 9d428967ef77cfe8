"""compute_peak's GEMM rows are power-bound by design (a tensor GEMM at full
rate runs into the card's power cap; its rate under the cap is what a lab
compares): the worker marks them `power_bound: true`, and the verdict
(common/validity.c) keeps a run whose only slowdown is sw_power_cap on
those rows valid, with the note `power_capped` instead of the reason
`throttled`.  The worker TEST DOUBLE draws the GEMM rows at sw_power_cap as
an H200 shows them (tests/fake_peaks.c); every number is synthetic."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import DaemonCase  # noqa: E402

GEMMS = ("gemm_bf16", "gemm_fp16", "gemm_tf32")


class PowerBoundTest(DaemonCase):
    def run_compute(self, mode, kinds=None):
        self.d.set_mode(mode)
        params = {"samples": 3}
        if kinds:
            params["kinds"] = list(kinds)
        r = self.d.post("/runs?wait=20", {"benchmark": "compute_peak", "params": params})
        self.assertEqual(r.status, 200, r)
        run = r.json()
        self.assertEqual(run["status"], "done", run)
        return self.d.get("/runs/" + run["id"]).json()

    def test_gemm_rows_at_the_cap_stay_valid_with_the_note(self):
        run = self.run_compute("normal")
        rows = run["results"]["rows"]
        gemm = [i for i, r in enumerate(rows) if r["kind"] in GEMMS]
        self.assertTrue(gemm, rows)
        for i, r in enumerate(rows):
            self.assertIs(r["power_bound"], i in gemm, r["kind"])
            if i in gemm:
                self.assertIn("sw_power_cap", r["throttle_reasons"])
                self.assertLess(r["sm_clock_mhz_nvml"], 1980)
                self.assertGreater(r["share_of_peak_at_clock"], r["share_of_peak"])
        self.assertIn("sw_power_cap", run["meta"]["watch"]["throttle_reasons"])
        v = run["validity"]
        self.assertIs(v["valid"], True, v)
        self.assertEqual(v["reasons"], [])
        self.assertEqual([n["code"] for n in v["notes"]], ["power_capped"])
        note = v["notes"][0]
        self.assertEqual([x["row"] for x in note["rows"]], gemm)
        self.assertEqual([x["label"] for x in note["rows"]], [rows[i]["label"] for i in gemm])
        self.assertEqual(note["enforced_power_limit_w"], 700)
        self.assertEqual(run["meta"]["enforced_power_limit_w"], 700)
        self.assertIn("power cap", note["message"])
        # Stored valid, so it counts where valid runs count.
        self.assertEqual(self.d.sql("SELECT valid FROM runs WHERE id = '%s'" % run["id"]), [(1,)])
        listed = self.d.get("/runs?benchmark=compute_peak&limit=50").json()
        items = listed["runs"] if isinstance(listed, dict) else listed
        mine = [x for x in items if x["id"] == run["id"]]
        self.assertEqual(len(mine), 1)
        self.assertIs(mine[0]["validity"]["valid"], True)

    def test_fma_rows_only_no_note(self):
        run = self.run_compute("normal", kinds=("fp32_fma", "fp64_fma"))
        self.assertIs(run["validity"]["valid"], True)
        self.assertNotIn("notes", run["validity"])
        self.assertTrue(all(r["power_bound"] is False for r in run["results"]["rows"]))

    def test_cap_on_the_fma_rows_still_throttled(self):
        # The double's throttled mode puts sw_power_cap on every row but the
        # first: the FMA rows are not power-bound, so the run is invalid.
        run = self.run_compute("throttled")
        v = run["validity"]
        self.assertIs(v["valid"], False, v)
        self.assertEqual([r["code"] for r in v["reasons"]], ["throttled"])
        self.assertEqual(v["reasons"][0]["reasons"], ["sw_power_cap"])
        self.assertEqual(self.d.sql("SELECT valid FROM runs WHERE id = '%s'" % run["id"]), [(0,)])


if __name__ == "__main__":
    unittest.main()
