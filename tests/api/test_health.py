"""Issue 16, the daemon's side: the `health` suite (one request, one run per
member benchmark under one batch), runs that need every GPU (all_devices:
they wait for the other GPUs to be idle and hold them while they run), the
gmem sector prediction of POST /predict, and the five new benchmarks as the
worker TEST DOUBLE draws them (tests/fake_peaks.c: synthetic numbers in the
row shapes of I16_CONTRACT.md).

The five benchmarks' specs come with the worker side (common/bench_spec.c);
until they are in the table, the tests that need them SKIP, saying so.
The hold is tested with the test-only benchmark test_all_devices, which has
the spec flag p2p_bandwidth has."""
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, DaemonCase, benchmarks  # noqa: E402

NEW = ("gmem_stride", "hbm_bandwidth", "compute_peak", "pcie_bandwidth", "p2p_bandwidth")
PEAK_FIELDS = ("label", "value", "unit", "peak", "peak_source", "share_of_peak")


def need_specs(test, d, names=NEW):
    missing = [n for n in names if n not in benchmarks(d)]
    if missing:
        msg = ("SKIPPED: GET /benchmarks does not list %s yet: their specs come with the "
               "worker branch (i16-worker) of issue 16" % ", ".join(missing))
        print(msg, file=sys.stderr)
        test.skipTest(msg)


def suite(d, name="health"):
    for s in d.get("/benchmarks").json()["suites"]:
        if s["name"] == name:
            return s
    raise AssertionError("no suite %s in GET /benchmarks" % name)


class HealthSuiteTest(DaemonCase):
    DAEMON_KWARGS = {"gpus": 2}

    def test_listed_as_a_suite_with_its_members(self):
        s = suite(self.d)
        self.assertIs(s["suite"], True)
        names = [m["name"] for m in s["members"]]
        self.assertIn("smem_stride", names)
        self.assertIn("transpose", names)
        specs = benchmarks(self.d)
        self.assertNotIn("health", specs, "a suite is not a benchmark with params")
        for m in s["members"]:
            self.assertIsInstance(m["health_params"], dict)
            self.assertEqual(specs[m["name"]]["health_params"], m["health_params"])
        for name, spec in specs.items():
            self.assertEqual(spec["health_params"] is not None, name in names, name)

    def test_one_device_makes_one_batch_of_the_members(self):
        members = suite(self.d)["members"]
        r = self.d.post("/runs", {"benchmark": "health", "device": 1, "label": "nightly"})
        self.assertEqual(r.status, 202, r)
        body = r.json()
        self.assertEqual(r.header("Location"), "/runs?batch=" + body["batch"])
        runs = body["runs"]
        self.assertEqual([x["benchmark"] for x in runs], [m["name"] for m in members])
        for run, m in zip(runs, members):
            self.assertEqual(run["device"]["index"] if isinstance(run.get("device"), dict)
                             else run["device_index"], 1)
            for k, v in m["health_params"].items():
                self.assertEqual(run["params"][k], v, (run["benchmark"], k))
            self.assertEqual(run["label"], "nightly")
        listed = self.d.get("/runs?batch=" + body["batch"]).json()["runs"]
        self.assertEqual(sorted(x["id"] for x in listed), sorted(x["id"] for x in runs))
        done = self.d.get("/runs?batch=" + body["batch"]).json()["runs"]
        for x in runs:
            self.assertEqual(self.d.wait_status(x["id"], ("done", "failed"))["status"], "done")
        self.assertEqual(len(done), len(members))

    def test_given_params_go_over_the_short_form(self):
        r = self.d.post("/runs?wait=20", {"benchmark": "health", "params": {"samples": 4}})
        self.assertEqual(r.status, 200, r)
        for run in r.json()["runs"]:
            self.assertEqual(run["params"]["samples"], 4, run["benchmark"])
            self.assertEqual(run["status"], "done")
            self.assertEqual(len(run["results"]["rows"][0]["samples"]), 4)
        smem = [x for x in r.json()["runs"] if x["benchmark"] == "smem_stride"][0]
        short = [m for m in suite(self.d)["members"] if m["name"] == "smem_stride"][0]
        self.assertEqual(smem["params"]["strides"], short["health_params"]["strides"])

    def test_bad_params_are_refused_and_store_nothing(self):
        before = self.d.sql("SELECT count(*) FROM runs")[0][0]
        r = self.d.post("/runs", {"benchmark": "health", "params": {"stides": [1]}})
        self.assertEqual(r.status, 400, r)
        self.assertEqual(r.json()["error"]["code"], "unknown_field")
        self.assertEqual(r.json()["error"]["field"], "params.stides")
        r = self.d.post("/runs", {"benchmark": "health", "params": {"samples": 1}})
        self.assertEqual(r.status, 400, r)
        self.assertEqual(r.json()["error"]["code"], "out_of_bounds")
        self.assertEqual(self.d.sql("SELECT count(*) FROM runs")[0][0], before)

    def test_all_devices_makes_every_member_on_every_card(self):
        members = suite(self.d)["members"]
        r = self.d.post("/runs?wait=30", {"benchmark": "health", "device": "all"})
        self.assertEqual(r.status, 200, r)
        runs = r.json()["runs"]
        per_card = [m for m in members if not m["all_devices"]]
        once = [m for m in members if m["all_devices"]]
        self.assertEqual(len(runs), 2 * len(per_card) + len(once))
        self.assertTrue(all(x["status"] == "done" for x in runs))
        self.assertEqual(len({x["batch"] if "batch" in x else r.json()["batch"] for x in runs}), 1)

    def test_unknown_name_lists_the_suite(self):
        r = self.d.post("/runs", {"benchmark": "helth"})
        self.assertEqual(r.status, 400)
        self.assertIn("health (a suite)", r.json()["error"]["message"])


class AllDevicesHoldTest(DaemonCase):
    """test_all_devices carries the all_devices flag (common/bench_spec.c).
    The double sleeps GPUBENCH_FAKE_DELAY_MS per row: smem_stride with 4
    strides takes 4 of them, test_all_devices 1."""

    DELAY_MS = 700
    DAEMON_KWARGS = {"gpus": 2, "args": ["--test-benchmarks"],
                     "env": {"GPUBENCH_FAKE_DELAY_MS": str(DELAY_MS)}}

    def post(self, body):
        r = self.d.post("/runs", body)
        self.assertEqual(r.status, 202, r)
        return r.json()

    def test_waits_for_a_running_run_on_another_gpu(self):
        other = self.post({"benchmark": "smem_stride", "device": 1,
                           "params": {"strides": [1, 2, 32, 33], "samples": 3}})
        self.d.wait_status(other["id"], ("running",))
        hold = self.post({"benchmark": "test_all_devices", "device": 0})
        time.sleep(self.DELAY_MS / 1000.0)
        self.assertEqual(self.d.get("/runs/" + hold["id"]).json()["status"], "queued",
                         "the all-devices run started beside a running run on GPU 1")
        a = self.d.wait_status(other["id"], ("done",))
        b = self.d.wait_status(hold["id"], ("done",), timeout=30)
        self.assertGreaterEqual(b["started_at"], a["finished_at"])

    def test_holds_the_other_gpus_while_it_runs(self):
        hold = self.post({"benchmark": "test_all_devices", "device": 0})
        self.d.wait_status(hold["id"], ("running",))
        other = self.post({"benchmark": "smem_stride", "device": 1,
                           "params": {"strides": [1], "samples": 3}})
        time.sleep(0.3)
        self.assertEqual(self.d.get("/runs/" + other["id"]).json()["status"], "queued",
                         "a run on GPU 1 started while the all-devices run held it")
        a = self.d.wait_status(hold["id"], ("done",))
        b = self.d.wait_status(other["id"], ("done",), timeout=30)
        self.assertGreaterEqual(b["started_at"], a["finished_at"])

    def test_device_all_makes_it_once_on_the_lowest_gpu(self):
        r = self.d.post("/runs?wait=30", {"benchmark": "test_all_devices", "device": "all"})
        self.assertEqual(r.status, 200, r)
        runs = r.json()["runs"]
        self.assertEqual(len(runs), 1)
        self.assertEqual(runs[0]["status"], "done")
        self.assertEqual(self.d.sql("SELECT device_index FROM runs WHERE id = '%s'"
                                    % runs[0]["id"])[0][0], 0)

    def test_describes_the_flag(self):
        specs = benchmarks(self.d)
        self.assertIs(specs["test_all_devices"]["all_devices"], True)
        self.assertIs(specs["smem_stride"]["all_devices"], False)


class OneGpuTest(unittest.TestCase):
    def test_all_devices_run_runs_normally_on_one_gpu(self):
        d = Daemon(gpus=1, args=["--test-benchmarks"]).start()
        try:
            r = d.post("/runs?wait=20", {"benchmark": "test_all_devices"})
            self.assertEqual(r.status, 200, r)
            self.assertEqual(r.json()["status"], "done")
        finally:
            self.assertEqual(d.stop(), 0)


class PredictGmemTest(DaemonCase):
    def test_sectors(self):
        r = self.d.post("/predict", {"gmem_strides": [1, 2, 4, 8, 16, 32]})
        self.assertEqual(r.status, 200, r)
        body = r.json()
        self.assertEqual(body["sector_bytes"], 32)
        self.assertEqual([p["predicted_sectors"] for p in body["predictions"]],
                         [4, 8, 16, 32, 32, 32])
        one = self.d.post("/predict", {"gmem_stride": 1, "word_bytes": 8}).json()
        self.assertEqual(one["predictions"][0]["predicted_sectors"], 8)

    def test_refusals(self):
        r = self.d.post("/predict", {"gmem_stride": 1, "stride": 1})
        self.assertEqual(r.status, 400)
        self.assertEqual(r.json()["error"]["code"], "conflicting_fields")
        r = self.d.post("/predict", {"stride": 1, "word_bytes": 8})
        self.assertEqual(r.status, 400)
        r = self.d.post("/predict", {"gmem_stride": -1})
        self.assertEqual(r.status, 400)
        # the shared-memory answer is unchanged
        r = self.d.post("/predict", {"stride": 2}).json()
        self.assertEqual(r["predictions"][0]["predicted_degree"], 2)


class NewBenchmarksTest(DaemonCase):
    """The double's rows for the five benchmarks (skipped until their specs
    are in the table)."""

    DAEMON_KWARGS = {"gpus": 2}

    def run_one(self, name, device=0):
        need_specs(self, self.d, (name,))
        r = self.d.post("/runs?wait=30", {"benchmark": name, "device": device})
        self.assertEqual(r.status, 200, r)
        run = r.json()
        self.assertEqual(run["status"], "done", run)
        return run

    def assert_peak_rows(self, run):
        rows = run["results"]["rows"]
        self.assertTrue(rows)
        for row in rows:
            for f in PEAK_FIELDS:
                self.assertIn(f, row, (run["benchmark"], f))
            if row["peak"] is not None:
                self.assertAlmostEqual(row["share_of_peak"], row["value"] / row["peak"])
        return rows

    def test_gmem_stride(self):
        rows = self.assert_peak_rows(self.run_one("gmem_stride"))
        for row in rows:
            self.assertEqual(row["sectors_per_request"], row["predicted_sectors"])
        sectors = [row["predicted_sectors"] for row in rows]
        self.assertEqual(sectors, sorted(sectors))

    def test_hbm_bandwidth(self):
        run = self.run_one("hbm_bandwidth")
        rows = self.assert_peak_rows(run)
        self.assertTrue({"copy", "triad"} <= {r["kernel"] for r in rows})
        self.assertIn("memcpy_ceiling_gbps", run["results"]["summary"])

    def test_compute_peak(self):
        rows = self.assert_peak_rows(self.run_one("compute_peak"))
        self.assertIn("fp32_fma", [r["kind"] for r in rows])

    def test_pcie_link_degraded(self):
        need_specs(self, self.d, ("pcie_bandwidth",))
        run = self.run_one("pcie_bandwidth")
        self.assert_peak_rows(run)
        self.assertEqual(run["meta"]["link"]["gen_current"], run["meta"]["link"]["gen_max"])
        self.assertNotIn("link_degraded", [x["code"] for x in run["validity"]["reasons"]])
        self.d.set_mode("link_degraded")
        try:
            run = self.run_one("pcie_bandwidth")
        finally:
            self.d.set_mode("normal")
        self.assertIs(run["validity"]["valid"], False)
        reason = [x for x in run["validity"]["reasons"] if x["code"] == "link_degraded"][0]
        self.assertEqual((reason["gen_current"], reason["gen_max"]), (4, 5))

    def test_pcie_memory_choice(self):
        """params.memory picks the host memories; the nightly form is pinned
        only (pageable copies measure the host and are noisy)."""
        need_specs(self, self.d, ("pcie_bandwidth",))
        spec = benchmarks(self.d)["pcie_bandwidth"]
        self.assertEqual(spec["health_params"]["memory"], ["pinned"])
        r = self.d.post("/runs?wait=30", {"benchmark": "pcie_bandwidth",
                                          "params": {"memory": ["pinned"]}})
        self.assertEqual(r.status, 200, r)
        rows = r.json()["results"]["rows"]
        self.assertTrue(rows)
        self.assertEqual({row["memory"] for row in rows}, {"pinned"})
        run = self.run_one("pcie_bandwidth")
        self.assertEqual(run["params"]["memory"], ["pinned", "pageable"])
        self.assertEqual({row["memory"] for row in run["results"]["rows"]},
                         {"pinned", "pageable"})
        for bad in (["pinned", "pinned"], [], ["managed"], "pinned"):
            r = self.d.post("/runs", {"benchmark": "pcie_bandwidth", "params": {"memory": bad}})
            self.assertEqual(r.status, 400, (bad, r))
            self.assertTrue(r.json()["error"]["field"].startswith("params.memory"), r.json())

    def test_p2p_matrix_for_every_pair(self):
        run = self.run_one("p2p_bandwidth")
        self.assert_peak_rows(run)
        m = run["results"]["summary"]["matrix"]
        self.assertEqual(m["devices"], [0, 1])
        self.assertEqual(len(m["gbps"]), 2)
        self.assertIsNone(m["gbps"][0][0])
        self.assertGreater(m["gbps"][0][1], 0)
        self.assertEqual(m["link"][0][1]["type"], "nvlink")

    def test_health_suite_has_them(self):
        need_specs(self, self.d)
        names = [m["name"] for m in suite(self.d)["members"]]
        for n in NEW:
            self.assertIn(n, names)
        p2p = [m for m in suite(self.d)["members"] if m["name"] == "p2p_bandwidth"][0]
        self.assertIs(p2p["all_devices"], True)
        r = self.d.post("/runs?wait=60", {"benchmark": "health", "device": "all"})
        self.assertEqual(r.status, 200, r)
        runs = r.json()["runs"]
        self.assertEqual(sum(1 for x in runs if x["benchmark"] == "p2p_bandwidth"), 1)
        self.assertTrue(all(x["status"] == "done" for x in runs), runs)


if __name__ == "__main__":
    unittest.main(verbosity=2)
