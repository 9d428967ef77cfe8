"""The HTTP API of gpubenchd, end to end over real HTTP, with the worker
test double standing in for the GPU (its results are synthetic)."""
import json
import math
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402


def gcd32(s):
    return math.gcd(s, 32)


class ErrorAssertions:
    """assertError: the answer is the API's error shape, with this code."""

    def assertError(self, r, status, code, field=None):
        self.assertEqual(r.status, status, r)
        err = r.json()["error"]
        self.assertEqual(err["code"], code, r)
        self.assertTrue(err["message"])
        if field is not None:
            self.assertEqual(err["field"], field, r)
        return err


class ApiTest(ErrorAssertions, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Daemon(gpus=2).start()

    @classmethod
    def tearDownClass(cls):
        code = cls.d.stop()
        assert code == 0, "gpubenchd did not exit cleanly on SIGTERM: %s" % code

    def run_count(self):
        return self.d.sql("SELECT count(*) FROM runs")[0][0]


    # -- info endpoints -------------------------------------------------
    def test_healthz(self):
        r = self.d.get("/healthz")
        self.assertEqual(r.status, 200)
        body = r.json()
        self.assertEqual(body["status"], "ok")
        self.assertEqual(body["gpus"], 2)

    def test_benchmarks(self):
        r = self.d.get("/benchmarks")
        self.assertEqual(r.status, 200)
        by_name = {b["name"]: b for b in r.json()["benchmarks"]}
        self.assertEqual(set(by_name), {"smem_stride", "smem_pattern", "transpose",
                                        "gmem_stride", "hbm_bandwidth", "compute_peak",
                                        "pcie_bandwidth", "p2p_bandwidth", "nccl_allreduce",
                                        "known_answer", "memtest", "soak"})
        self.assertTrue(by_name["p2p_bandwidth"]["all_devices"])
        self.assertEqual(by_name["gmem_stride"]["health_params"]["samples"], 5)
        strides = next(p for p in by_name["smem_stride"]["params"] if p["name"] == "strides")
        self.assertEqual(strides["default"], [1, 2, 4, 8, 16, 32, 33])
        self.assertEqual((strides["min"], strides["max"]), (1, 1024))
        n = next(p for p in by_name["transpose"]["params"] if p["name"] == "n")
        self.assertEqual(n["multiple_of"], 32)

    def test_devices(self):
        body = self.d.get("/devices").json()
        self.assertEqual(len(body["devices"]), 2)
        self.assertIsNone(body["reason"])
        dev = body["devices"][0]
        for key in ("index", "name", "uuid", "queue_depth", "worker"):
            self.assertIn(key, dev)
        self.assertIn(dev["worker"]["state"], ("ready", "running", "starting"))

    def test_metrics(self):
        self.d.post("/runs?wait=10", {"benchmark": "smem_stride", "params": {"strides": [1, 32]}})
        r = self.d.get("/metrics")
        self.assertEqual(r.status, 200)
        self.assertTrue(r.header("Content-Type").startswith("text/plain; version=0.0.4"))
        lines = r.body.splitlines()
        self.assertIn("gpubench_up", r.body)
        self.assertTrue(any(l.startswith('gpubench_queue_depth{gpu="0"') for l in lines))
        done = [l for l in lines if l.startswith('gpubench_runs{status="done"}')]
        self.assertEqual(len(done), 1)
        self.assertGreaterEqual(int(done[0].split()[-1]), 1)
        ratio32 = [l for l in lines if l.startswith("gpubench_result_ratio{") and 'stride="32"' in l]
        self.assertTrue(ratio32, "no gauge for the latest stride-32 row")
        self.assertEqual(float(ratio32[0].split()[-1]), 32.0)
        for l in lines:  # every sample line is NAME{labels} VALUE
            if l and not l.startswith("#"):
                float(l.rsplit(" ", 1)[1])

    # -- prediction -------------------------------------------------------
    def test_predict_strides(self):
        strides = [1, 2, 4, 8, 16, 31, 32, 33, 63, 64, 65]
        r = self.d.post("/predict", {"strides": strides})
        self.assertEqual(r.status, 200, r)
        got = [(p["stride"], p["predicted_degree"]) for p in r.json()["predictions"]]
        self.assertEqual(got, [(s, gcd32(s)) for s in strides])
        one = self.d.post("/predict", {"stride": 32}).json()["predictions"][0]
        self.assertEqual(one["predicted_degree"], 32)
        self.assertEqual(one["bank_loads"][0], 32)

    def test_predict_words(self):
        seed = [tx * 2 % 32 for tx in range(32)]
        p = self.d.post("/predict", {"words": seed}).json()["predictions"][0]
        self.assertEqual(p["predicted_degree"], 1)
        self.assertEqual(p["broadcast_lanes"], 16)
        same = self.d.post("/predict", {"words": [7] * 32}).json()["predictions"][0]
        self.assertEqual(same["predicted_degree"], 1)
        bank = self.d.post("/predict", {"words": [32 * i for i in range(32)]}).json()
        self.assertEqual(bank["predictions"][0]["predicted_degree"], 32)

    def test_predict_errors(self):
        self.assertError(self.d.post("/predict", {}), 400, "missing_field")
        self.assertError(self.d.post("/predict", {"stride": 1, "words": [0] * 32}), 400,
                         "conflicting_fields")
        self.assertError(self.d.post("/predict", {"stride": 0}), 400, "out_of_bounds", "stride")
        self.assertError(self.d.post("/predict", {"words": [0] * 31}), 400, "out_of_bounds", "words")
        self.assertError(self.d.post("/predict", {"strid": 4}), 400, "unknown_field", "strid")
        self.assertError(self.d.post("/predict", "{"), 400, "malformed_json")

    def test_bound_messages_print_integers(self):
        # issue 26: %g answered "stride is 1.04858e+06; it must be between 1 and 1.04858e+06"
        cases = [
            ("/predict", {"stride": 1048577}, "stride",
             "stride is 1048577; it must be between 1 and 1048576"),
            ("/predict", {"words": [2147483648] + [0] * 31}, "words[0]",
             "words[0] is 2147483648; it must be between 0 and 2147483647"),
            ("/runs", {"benchmark": "pcie_bandwidth", "params": {"sizes_kib": [4194305]}},
             "params.sizes_kib[0]",
             "params.sizes_kib[0] is 4194305; it must be between 4 and 4194304"),
            ("/runs", {"benchmark": "smem_stride", "timeout_s": 10000000}, "timeout_s",
             "timeout_s is 10000000; it must be from 1 to this daemon's --run-timeout, 300"),
        ]
        for path, body, field, message in cases:
            with self.subTest(body=body):
                err = self.assertError(self.d.post(path, body), 400, "out_of_bounds", field)
                self.assertEqual(err["message"], message)

    # -- posting runs -----------------------------------------------------
    def test_post_run_and_read_it_back(self):
        r = self.d.post("/runs", '{"benchmark":"smem_stride","params":{"strides":[1,2,32,33]},"label":"t1"}')
        self.assertEqual(r.status, 202, r)
        run = r.json()
        self.assertEqual(r.header("Location"), "/runs/" + run["id"])
        self.assertEqual(run["benchmark"], "smem_stride")
        self.assertIn(run["status"], ("queued", "running"))
        if run["status"] == "queued":
            self.assertGreaterEqual(run["queue_position"], 1)
        # defaults filled in
        self.assertEqual(run["params"], {"strides": [1, 2, 32, 33], "samples": 20,
                                         "min_sample_ms": 1, "counters": "auto",
                                         "quiet": "wait", "quiet_wait_s": 30,
                                         "max_samples": 200})
        self.assertEqual(run["device"]["index"], 0)
        self.assertRegex(run["created_at"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
        done = self.d.wait_status(run["id"], ("done", "failed"))
        self.assertEqual(done["status"], "done", done)
        rows = done["results"]["rows"]
        self.assertEqual([row["stride"] for row in rows], [1, 2, 32, 33])
        self.assertEqual([row["predicted_degree"] for row in rows], [1, 2, 32, 1])
        self.assertEqual(len(rows[0]["samples"]), 20)
        self.assertTrue(done["meta"]["synthetic"], "the test double must flag its results")
        self.assertEqual(done["meta"]["host"], done["host"])
        self.assertLessEqual(done["created_at"], done["started_at"])
        self.assertLessEqual(done["started_at"], done["finished_at"])
        self.assertEqual(done["label"], "t1")

    def test_post_wait(self):
        r = self.d.post("/runs?wait=10", {"benchmark": "smem_pattern"})
        self.assertEqual(r.status, 200, r)
        run = r.json()
        self.assertEqual(run["status"], "done")
        self.assertEqual(run["results"]["rows"][0]["predicted_degree"], 1)

    def test_post_all_devices_makes_a_batch(self):
        r = self.d.post("/runs?wait=10", {"benchmark": "transpose", "device": "all",
                                          "params": {"n": 256, "variants": ["copy", "tile33"]}})
        self.assertEqual(r.status, 200, r)
        body = r.json()
        self.assertEqual(len(body["runs"]), 2)
        self.assertEqual(sorted(x["device"]["index"] for x in body["runs"]), [0, 1])
        self.assertEqual(r.header("Location"), "/runs?batch=" + body["batch"])
        listed = self.d.get("/runs?batch=" + body["batch"]).json()["runs"]
        self.assertEqual(len(listed), 2)

    def test_device_by_uuid(self):
        uuid = self.d.get("/devices").json()["devices"][1]["uuid"]
        r = self.d.post("/runs?wait=10", {"benchmark": "smem_pattern", "device": uuid})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json()["device"]["index"], 1)

    # -- every way to get a request wrong, and nothing stored for it -------
    def test_bad_requests_store_nothing(self):
        before = self.run_count()
        cases = [
            ('{"benchmark": "smem_stride"', 400, "malformed_json", None),
            ('{"benchmark": "smem_stride"} trailing', 400, "malformed_json", None),
            ('[1,2]', 400, "wrong_type", None),
            ('', 400, "malformed_json", None),
            ({"benchmark": "smem_stride", "stides": [1]}, 400, "unknown_field", "stides"),
            ({"benchmark": "smem_stride", "params": {"stides": [1]}}, 400, "unknown_field", "params.stides"),
            ({"benchmark": "smem_stride", "params": {"strides": [1, 2, 4, 0]}}, 400, "out_of_bounds", "params.strides[3]"),
            ({"benchmark": "smem_stride", "params": {"strides": [1, 2, 4, 4096]}}, 400, "out_of_bounds", "params.strides[3]"),
            ({"benchmark": "smem_stride", "params": {"strides": "1,2"}}, 400, "wrong_type", "params.strides"),
            ({"benchmark": "smem_stride", "params": {"strides": list(range(1, 200))}}, 400, "out_of_bounds", "params.strides"),
            ({"benchmark": "smem_stride", "params": {"samples": 1.5}}, 400, "wrong_type", "params.samples"),
            ({"benchmark": "smem_stride", "params": [1]}, 400, "wrong_type", "params"),
            ({"benchmark": "transpose", "params": {"n": 1000}}, 400, "out_of_bounds", "params.n"),
            ({"benchmark": "transpose", "params": {"variants": ["tile34"]}}, 400, "out_of_bounds", "params.variants[0]"),
            ({"benchmark": "smem_pattern", "params": {"words": [0, 1]}}, 400, "out_of_bounds", "params.words"),
            ({"benchmark": "nope"}, 400, "unknown_benchmark", "benchmark"),
            ({"benchmark": 7}, 400, "wrong_type", "benchmark"),
            ({"params": {}}, 400, "missing_field", "benchmark"),
            ({"benchmark": "smem_stride", "label": 5}, 400, "wrong_type", "label"),
            ('{"benchmark":"smem_stride","benchmark":"transpose"}', 400, "duplicate", "benchmark"),
            ({"benchmark": "smem_stride", "label": "x" * 201}, 400, "out_of_bounds", "label"),
            ({"benchmark": "smem_stride", "timeout_s": 0}, 400, "out_of_bounds", "timeout_s"),
            ({"benchmark": "smem_stride", "device": 1.5}, 400, "wrong_type", "device"),
            ({"benchmark": "smem_stride", "device": 7}, 409, "no_device", "device"),
            # the test double's cards have 4 GiB: 2 x 32768^2 floats is 8 GiB
            ({"benchmark": "transpose", "params": {"n": 32768}}, 400, "out_of_bounds", "params.n"),
            ({"benchmark": "smem_stride", "device": "GPU-nope"}, 409, "no_device", "device"),
        ]
        for body, status, code, field in cases:
            with self.subTest(body=body):
                self.assertError(self.d.post("/runs", body), status, code, field)
        self.assertError(self.d.post("/runs?wiat=3", {"benchmark": "smem_stride"}), 400,
                         "unknown_field", "wiat")
        self.assertError(self.d.post("/runs?wait=-1", {"benchmark": "smem_stride"}), 400,
                         "out_of_bounds", "wait")
        self.assertEqual(self.run_count(), before, "a refused request stored a run")

    def test_unknown_field_message_names_it(self):
        err = self.d.post("/runs", {"benchmark": "smem_stride", "params": {"stides": [1]}}).json()["error"]
        self.assertIn("stides", err["message"])
        self.assertIn("strides", err["message"])  # and says what it takes

    def test_body_over_cap_is_413(self):
        before = self.run_count()
        big = '{"benchmark":"smem_stride","label":"' + "x" * (70 * 1024) + '"}'
        self.assertError(self.d.post("/runs", big), 413, "body_too_large")
        self.assertEqual(self.run_count(), before)

    def test_json_content_type_also_works(self):
        r = self.d.post("/runs", {"benchmark": "smem_pattern"},
                        headers={"Content-Type": "application/json"})
        self.assertEqual(r.status, 202, r)

    # -- routing ----------------------------------------------------------
    def test_404_and_405(self):
        self.assertError(self.d.get("/nope"), 404, "not_found")
        self.assertError(self.d.get("/runs/not-a-uuid"), 404, "not_found")
        self.assertError(self.d.get("/runs/01234567-89ab-7fff-bf01-020304050607"), 404, "not_found")
        r = self.d.request("PUT", "/runs")
        self.assertError(r, 405, "method_not_allowed")
        self.assertEqual(set(r.header("Allow").split(", ")), {"POST", "GET", "HEAD"})
        r = self.d.request("POST", "/devices", body="{}")
        self.assertEqual(r.status, 405)
        self.assertIn("GET", r.header("Allow"))

    # -- listing ----------------------------------------------------------
    def test_list_filters_and_pages(self):
        label = "page-%d" % time.time_ns()
        ids = []
        for _ in range(5):
            r = self.d.post("/runs", {"benchmark": "smem_pattern", "label": label})
            self.assertEqual(r.status, 202, r)
            ids.append(r.json()["id"])
        seen = []
        url = "/runs?label=%s&limit=2" % label
        pages = 0
        while url:
            body = self.d.get(url).json()
            pages += 1
            self.assertLessEqual(len(body["runs"]), 2)
            seen += [x["id"] for x in body["runs"]]
            url = body["next"]
        self.assertEqual(pages, 3)
        self.assertEqual(seen, sorted(ids, reverse=True), "newest first, each once")
        for run in self.d.get("/runs?benchmark=smem_pattern&limit=500").json()["runs"]:
            self.assertEqual(run["benchmark"], "smem_pattern")
            self.assertNotIn("results", run)
        for key, value in (("status", "done"), ("host", self.d.get("/healthz").json()["host"])):
            runs = self.d.get("/runs?%s=%s" % (key, value)).json()["runs"]
            self.assertTrue(all(x[key] == value for x in runs))
        name = self.d.get("/devices").json()["devices"][0]["uuid"]
        runs = self.d.get("/runs?device=" + name).json()["runs"]
        self.assertTrue(runs and all(x["device"]["uuid"] == name for x in runs))

    def test_list_errors(self):
        self.assertError(self.d.get("/runs?limit=0"), 400, "out_of_bounds", "limit")
        self.assertError(self.d.get("/runs?limit=501"), 400, "out_of_bounds", "limit")
        self.assertError(self.d.get("/runs?limit=abc"), 400, "out_of_bounds", "limit")
        self.assertError(self.d.get("/runs?status=lost"), 400, "out_of_bounds", "status")
        self.assertError(self.d.get("/runs?cursor=xyz"), 400, "bad_cursor", "cursor")
        self.assertError(self.d.get("/runs?benchmrk=x"), 400, "unknown_field", "benchmrk")


class QueueTest(ErrorAssertions, unittest.TestCase):
    """Cancel, crash, timeout, and a restart, with a slow test double."""

    def setUp(self):
        self.d = Daemon(gpus=1, env={"GPUBENCH_FAKE_DELAY_MS": "150"},
                        args=["--run-timeout", "3"]).start()

    def tearDown(self):
        self.assertEqual(self.d.stop(), 0, "gpubenchd did not exit cleanly:\n" + self.d.read_log()[-3000:])

    def test_cancel_queued_and_409_after(self):
        first = self.d.post("/runs", {"benchmark": "smem_stride"}).json()
        second = self.d.post("/runs", {"benchmark": "smem_stride"}).json()
        self.assertEqual(second["status"], "queued")
        r = self.d.request("DELETE", "/runs/" + second["id"])
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json()["status"], "cancelled")
        self.assertError(self.d.request("DELETE", "/runs/" + second["id"]), 409, "not_queued")
        done = self.d.wait_status(first["id"], ("done",))
        self.assertError(self.d.request("DELETE", "/runs/" + done["id"]), 409, "not_queued")
        self.assertError(self.d.request("DELETE", "/runs/01234567-89ab-7fff-bf01-020304050607"),
                         404, "not_found")
        # the cancelled run never ran
        self.assertIsNone(self.d.get("/runs/" + second["id"]).json()["started_at"])

    def test_runs_on_one_gpu_never_overlap(self):
        ids = [self.d.post("/runs", {"benchmark": "smem_stride", "params": {"strides": [1, 2]}}).json()["id"]
               for _ in range(4)]
        runs = [self.d.wait_status(i, ("done",)) for i in ids]
        for a, b in zip(runs, runs[1:]):
            self.assertLessEqual(a["finished_at"], b["started_at"], "runs overlapped on one GPU")

    def test_progress_is_visible(self):
        run = self.d.post("/runs", {"benchmark": "smem_stride"}).json()
        seen = None
        deadline = time.time() + 5
        while time.time() < deadline:
            got = self.d.get("/runs/" + run["id"]).json()
            if got["progress"] and 0 < got["progress"]["done"] < got["progress"]["total"]:
                seen = got["progress"]
                break
            time.sleep(0.02)
        self.assertIsNotNone(seen, "no progress was ever shown while running")
        self.assertEqual(seen["total"], 7)

    def test_worker_crash_fails_the_run_and_the_next_succeeds(self):
        self.d.set_mode("crash")
        r = self.d.post("/runs?wait=10", {"benchmark": "smem_stride"})
        run = r.json()
        self.assertEqual(run["status"], "failed", run)
        self.assertEqual(run["error"]["code"], "worker_died")
        self.assertIn("signal 9", run["error"]["message"])
        self.d.set_mode("normal")
        nxt = self.d.post("/runs?wait=15", {"benchmark": "smem_pattern"}).json()
        self.assertEqual(nxt["status"], "done", nxt)
        worker = self.d.get("/devices").json()["devices"][0]["worker"]
        self.assertGreaterEqual(worker["restarts"], 1)

    def test_cuda_fault_fails_the_run_and_the_next_succeeds(self):
        self.d.set_mode("fault")
        run = self.d.post("/runs?wait=10", {"benchmark": "smem_pattern"}).json()
        self.assertEqual(run["status"], "failed", run)
        self.assertEqual(run["error"]["code"], "cuda_error")
        self.assertIn("cudaErrorIllegalAddress", run["error"]["message"])
        self.d.set_mode("normal")
        nxt = self.d.post("/runs?wait=15", {"benchmark": "smem_pattern"}).json()
        self.assertEqual(nxt["status"], "done", nxt)

    def test_hung_worker_times_out(self):
        self.d.set_mode("hang")
        run = self.d.post("/runs?wait=10", {"benchmark": "smem_pattern", "timeout_s": 1}).json()
        self.assertEqual(run["status"], "failed", run)
        self.assertEqual(run["error"]["code"], "timeout")
        self.d.set_mode("normal")
        nxt = self.d.post("/runs?wait=15", {"benchmark": "smem_pattern"}).json()
        self.assertEqual(nxt["status"], "done", nxt)

    def test_garbage_lines_are_skipped(self):
        self.d.set_mode("garbage")
        run = self.d.post("/runs?wait=10", {"benchmark": "smem_pattern"}).json()
        self.assertEqual(run["status"], "done", run)

    def test_get_wait_returns_when_the_run_ends(self):
        run = self.d.post("/runs", {"benchmark": "smem_stride"}).json()
        t0 = time.time()
        got = self.d.get("/runs/%s?wait=10" % run["id"]).json()
        self.assertEqual(got["status"], "done")
        self.assertLess(time.time() - t0, 8)
        # and the time passing answers too, with the run as it is
        self.d.set_mode("hang")
        slow = self.d.post("/runs", {"benchmark": "smem_pattern"}).json()
        t0 = time.time()
        r = self.d.post("/runs?wait=0.5", {"benchmark": "smem_pattern"})
        self.assertEqual(r.status, 202)
        self.assertEqual(r.json()["status"], "queued")
        self.assertGreaterEqual(time.time() - t0, 0.45)
        self.d.set_mode("normal")
        self.d.wait_status(slow["id"], ("failed",), timeout=10)

    def test_kill_and_restart_keeps_every_run(self):
        self.d.set_mode("hang")
        running = self.d.post("/runs", {"benchmark": "smem_pattern"}).json()
        self.d.wait_status(running["id"], ("running",))
        queued = [self.d.post("/runs", {"benchmark": "smem_pattern"}).json()["id"] for _ in range(3)]
        self.d.kill()
        self.d.set_mode("normal")
        self.d.start()
        first = self.d.get("/runs/" + running["id"]).json()
        self.assertEqual(first["status"], "failed")
        self.assertEqual(first["error"]["code"], "interrupted")
        runs = [self.d.wait_status(i, ("done",)) for i in queued]
        starts = [r["started_at"] for r in runs]
        self.assertEqual(starts, sorted(starts), "queued runs kept their order")
        self.assertEqual(self.d.sql("PRAGMA integrity_check"), [("ok",)])


class LifecycleTest(ErrorAssertions, unittest.TestCase):
    """Shutdown, limits, health and the test-only benchmarks."""

    def test_sigterm_lets_the_running_run_finish(self):
        d = Daemon(env={"GPUBENCH_FAKE_DELAY_MS": "200"}, args=["--shutdown-grace", "10"]).start()
        run = d.post("/runs", {"benchmark": "smem_stride"}).json()
        d.wait_status(run["id"], ("running",))
        self.assertEqual(d.stop(), 0)
        self.assertEqual(d.sql("SELECT status FROM runs WHERE id = '%s'" % run["id"]), [("done",)])

    def test_sigterm_past_the_grace_requeues(self):
        d = Daemon(args=["--shutdown-grace", "0"]).start()
        d.set_mode("hang")
        run = d.post("/runs", {"benchmark": "smem_pattern"}).json()
        d.wait_status(run["id"], ("running",))
        t0 = time.time()
        self.assertEqual(d.stop(), 0)
        self.assertLess(time.time() - t0, 5)
        self.assertEqual(d.sql("SELECT status FROM runs WHERE id = '%s'" % run["id"]), [("queued",)])
        d.set_mode("normal")
        d.start()
        try:
            self.assertEqual(d.wait_status(run["id"], ("done",))["status"], "done")
        finally:
            self.assertEqual(d.stop(), 0)

    def test_queue_full_is_503_with_retry_after(self):
        d = Daemon(args=["--max-queue", "2", "--shutdown-grace", "1"]).start()
        try:
            d.set_mode("hang")
            first = d.post("/runs", {"benchmark": "smem_pattern"}).json()
            d.wait_status(first["id"], ("running",))
            for _ in range(2):
                self.assertEqual(d.post("/runs", {"benchmark": "smem_pattern"}).status, 202)
            r = d.post("/runs", {"benchmark": "smem_pattern"})
            self.assertError(r, 503, "queue_full")
            self.assertGreater(int(r.header("Retry-After")), 0)
            self.assertEqual(d.sql("SELECT count(*) FROM runs")[0][0], 3)
        finally:
            d.set_mode("normal")
            self.assertEqual(d.stop(), 0)

    def test_a_worker_that_never_starts_makes_the_gpu_unhealthy(self):
        d = Daemon(env={"GPUBENCH_FAKE_NO_READY": "1"}).start()
        try:
            deadline = time.time() + 30
            worker = None
            while time.time() < deadline:
                worker = d.get("/devices").json()["devices"][0]["worker"]
                if not worker["healthy"]:
                    break
                time.sleep(0.2)
            self.assertFalse(worker["healthy"], worker)
            self.assertIn("never said ready", worker["last_error"])
            r = d.post("/runs", {"benchmark": "smem_pattern"})
            self.assertError(r, 503, "device_unhealthy", "device")
            self.assertIsNotNone(r.header("Retry-After"))
        finally:
            self.assertEqual(d.stop(), 0)

    def test_gpus_work_in_parallel(self):
        d = Daemon(gpus=2, env={"GPUBENCH_FAKE_DELAY_MS": "150"}).start()
        try:
            ids = [d.post("/runs", {"benchmark": "smem_stride", "device": i}).json()["id"] for i in (0, 1)]
            a, b = [d.wait_status(i, ("done",)) for i in ids]
            self.assertLess(a["started_at"], b["finished_at"])
            self.assertLess(b["started_at"], a["finished_at"], "two GPUs did not overlap")
        finally:
            self.assertEqual(d.stop(), 0)

    def test_test_benchmarks_need_the_flag(self):
        d = Daemon().start()
        try:
            self.assertError(d.post("/runs", {"benchmark": "test_fault"}), 400, "unknown_benchmark")
            names = [b["name"] for b in d.get("/benchmarks").json()["benchmarks"]]
            self.assertNotIn("test_fault", names)
        finally:
            self.assertEqual(d.stop(), 0)
        d = Daemon(args=["--test-benchmarks"]).start()
        try:
            fault = d.post("/runs?wait=10", {"benchmark": "test_fault"}).json()
            self.assertEqual((fault["status"], fault["error"]["code"]), ("failed", "cuda_error"))
            hang = d.post("/runs?wait=10", {"benchmark": "test_hang", "timeout_s": 1}).json()
            self.assertEqual((hang["status"], hang["error"]["code"]), ("failed", "timeout"))
            ok = d.post("/runs?wait=10", {"benchmark": "smem_stride"}).json()
            self.assertEqual(ok["status"], "done")
        finally:
            self.assertEqual(d.stop(), 0)

    def test_sigkill_during_a_stream_of_posts_loses_nothing(self):
        import random
        import threading
        d = Daemon(env={"GPUBENCH_FAKE_DELAY_MS": "5"}, args=["--max-queue", "100000"])
        accepted = []
        rng = random.Random(7)
        for round_ in range(5):
            d.start()
            stop = threading.Event()

            def post_loop():
                while not stop.is_set():
                    try:
                        r = d.post("/runs", {"benchmark": "smem_pattern", "label": "stream"}, timeout=5)
                    except OSError:
                        return
                    if r.status == 202:
                        accepted.append(r.json()["id"])
            threads = [threading.Thread(target=post_loop) for _ in range(3)]
            for t in threads:
                t.start()
            time.sleep(rng.uniform(0.2, 0.8))
            d.kill()
            stop.set()
            for t in threads:
                t.join()
        d.start()
        try:
            self.assertGreater(len(accepted), 20)
            stored = {row[0]: row[1] for row in d.sql("SELECT id, status FROM runs")}
            missing = [i for i in accepted if i not in stored]
            self.assertEqual(missing, [], "runs that got a 202 were lost")
            self.assertEqual(d.sql("PRAGMA integrity_check"), [("ok",)])
            for i in accepted:
                run = d.get("/runs/" + i).json()
                if run["status"] == "failed":
                    self.assertEqual(run["error"]["code"], "interrupted")
        finally:
            self.assertEqual(d.stop(), 0)


class ExportImportCompareTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Daemon(gpus=2).start()
        cls.batches = []
        for _ in range(3):
            r = cls.d.post("/runs?wait=10", {"benchmark": "smem_stride", "device": "all",
                                              "params": {"strides": [1, 2, 32]}})
            assert r.status == 200, r
            cls.batches.append(r.json())
        cls.d.post("/runs?wait=10", {"benchmark": "transpose", "params": {"n": 256}})

    @classmethod
    def tearDownClass(cls):
        assert cls.d.stop() == 0

    def test_ndjson_export_is_every_run_whole(self):
        r = self.d.get("/runs.ndjson")
        self.assertEqual(r.status, 200)
        self.assertTrue(r.header("Content-Type").startswith("application/x-ndjson"))
        lines = [json.loads(x) for x in r.body.splitlines() if x]
        listed = self.d.get("/runs?limit=500").json()["runs"]
        self.assertEqual([x["id"] for x in lines], [x["id"] for x in listed])
        one = self.d.get("/runs/" + lines[0]["id"]).json()
        self.assertEqual(lines[0]["results"], one["results"])
        self.assertEqual(lines[0]["meta"], one["meta"])
        only = [json.loads(x) for x in self.d.get("/runs.ndjson?benchmark=transpose").body.splitlines()]
        self.assertEqual({x["benchmark"] for x in only}, {"transpose"})
        self.assertEqual(len(self.d.get("/runs.ndjson?limit=2").body.splitlines()), 2)

    def test_csv_has_a_line_per_row(self):
        import csv
        import io
        r = self.d.get("/runs.csv?benchmark=smem_stride")
        self.assertEqual(r.status, 200)
        rows = list(csv.DictReader(io.StringIO(r.body)))
        self.assertEqual(len(rows), 6 * 3)
        for row in rows:
            self.assertEqual(int(row["predicted_degree"]), math.gcd(int(row["stride"]), 32))
            self.assertEqual(len(row["samples"].split(";")), 20)
        run_id = self.batches[0]["runs"][0]["id"]
        one = list(csv.DictReader(io.StringIO(self.d.get("/runs/%s.csv" % run_id).body)))
        self.assertEqual([x["stride"] for x in one], ["1", "2", "32"])
        self.assertEqual({x["run_id"] for x in one}, {run_id})
        self.assertEqual(self.d.get("/runs/01234567-89ab-7fff-bf01-020304050607.csv").status, 404)

    def test_import_of_an_export_is_idempotent(self):
        export = self.d.get("/runs.ndjson").body
        other = Daemon(gpus=0).start()
        try:
            r = other.post("/runs/import", export)
            self.assertEqual(r.status, 200, r)
            n = len(export.splitlines())
            self.assertEqual(r.json(), {"imported": n, "already_here": 0, "conflicts": 0})
            self.assertEqual(other.post("/runs/import", export).json(), {"imported": 0, "already_here": n, "conflicts": 0})
            first = json.loads(export.splitlines()[0])
            got = other.get("/runs/" + first["id"]).json()
            self.assertEqual(got["results"], first["results"])
            self.assertEqual(got["origin"], "import")
            # a bad line anywhere imports nothing
            bad = export.splitlines()[0].replace('"status":"done"', '"status":"running"')
            fresh = Daemon(gpus=0).start()
            try:
                r = fresh.post("/runs/import", export.splitlines()[1] + "\n" + bad + "\n")
                self.assertEqual(r.status, 400, r)
                self.assertIn("line 2", r.json()["error"]["message"])
                self.assertEqual(fresh.get("/runs").json()["runs"], [])
                r = fresh.post("/runs/import", "{not json\n")
                self.assertEqual(r.json()["error"]["code"], "malformed_json")
            finally:
                self.assertEqual(fresh.stop(), 0)
        finally:
            self.assertEqual(other.stop(), 0)

    def test_compare_one_series_per_card(self):
        r = self.d.get("/compare?benchmark=smem_stride")
        self.assertEqual(r.status, 200, r)
        body = r.json()
        self.assertEqual(body["key"], "stride")
        self.assertEqual(body["keys"], [1, 2, 32])
        self.assertEqual(len(body["series"]), 2)
        for s in body["series"]:
            self.assertEqual(len(s["runs"]), 3)
            self.assertEqual([row["key"] for row in s["rows"]], [1, 2, 32])
            self.assertEqual([row["predicted_degree"] for row in s["rows"]], [1, 2, 32])
            self.assertTrue(all(row["n"] == 3 for row in s["rows"]))
        latest = self.d.get("/compare?benchmark=smem_stride&latest=1").json()
        self.assertTrue(all(len(s["runs"]) == 1 for s in latest["series"]))
        ids = ",".join(x["id"] for x in self.batches[0]["runs"])
        chosen = self.d.get("/compare?benchmark=smem_stride&runs=" + ids).json()
        self.assertEqual(sorted(r for s in chosen["series"] for r in s["runs"]),
                         sorted(x["id"] for x in self.batches[0]["runs"]))
        self.assertEqual(self.d.get("/compare").status, 400)
        self.assertEqual(self.d.get("/compare?benchmark=smem_stride&latest=0").status, 400)


class SecurityTest(ErrorAssertions, unittest.TestCase):
    TOKEN = "s3cret-token-for-tests-0123456789"

    def token_file(self, d, lines):
        path = os.path.join(d.tmp, "tokens")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    def test_tokens_guard_what_changes_things(self):
        import hashlib
        d = Daemon()
        other = "another-token-kept-as-its-digest"
        path = self.token_file(d, ["# lab tokens", self.TOKEN, "",
                                   hashlib.sha256(other.encode()).hexdigest()])
        d.args += ["--token-file", path]
        d.start()
        try:
            body = {"benchmark": "smem_pattern"}
            r = d.post("/runs", body)
            self.assertError(r, 401, "unauthorized")
            self.assertTrue(r.header("WWW-Authenticate").startswith("Bearer"))
            self.assertError(d.post("/runs", body, headers={"Authorization": "Bearer nope"}),
                             401, "unauthorized")
            self.assertError(d.post("/runs/import", "", headers={"Authorization": "Basic x"}),
                             401, "unauthorized")
            self.assertEqual(d.get("/runs").json()["runs"], [], "a refused post stored a run")
            ok = d.post("/runs", body, headers={"Authorization": "Bearer " + self.TOKEN})
            self.assertEqual(ok.status, 202, ok)
            ok2 = d.post("/runs", body, headers={"Authorization": "Bearer " + other})
            self.assertEqual(ok2.status, 202, ok2)
            self.assertError(d.request("DELETE", "/runs/" + ok2.json()["id"]), 401, "unauthorized")
            # reads stay open
            self.assertEqual(d.get("/runs").status, 200)
            self.assertEqual(d.post("/predict", {"stride": 2}).status, 200)
        finally:
            self.assertEqual(d.stop(), 0)

    def test_auth_reads_closes_reads(self):
        d = Daemon()
        d.args += ["--token-file", self.token_file(d, [self.TOKEN]), "--auth-reads"]
        d.start()
        try:
            self.assertError(d.get("/runs"), 401, "unauthorized")
            self.assertEqual(d.get("/runs", headers={"Authorization": "Bearer " + self.TOKEN}).status, 200)
        finally:
            self.assertEqual(d.stop(), 0)

    def test_bad_token_file_refused(self):
        d = Daemon()
        d.args += ["--token-file", self.token_file(d, ["short"])]
        with self.assertRaises(RuntimeError) as ctx:
            d.start()
        self.assertIn("at least 16", str(ctx.exception))

    def test_refuses_beyond_loopback_without_tokens(self):
        import subprocess
        from harness import DAEMON
        r = subprocess.run([DAEMON, "--listen", "0.0.0.0:1", "--db", "/nonexistent/x.db"],
                           capture_output=True, text=True, timeout=10)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("without bearer tokens", r.stderr)

    def test_connection_limit_is_for_the_whole_daemon(self):
        import http.client
        import socket
        d = Daemon(args=["--max-connections", "8", "--http-threads", "4"]).start()
        conns = []
        try:
            # Eight open connections all get answers, however the four
            # threads share them out; a ninth is turned away.  The harness's
            # own /healthz connections count until the daemon has seen them
            # close (a moment, longer under the sanitizers), so a refusal
            # while they linger is retried, for at most two seconds.
            def open_one():
                for _ in range(20):
                    c = http.client.HTTPConnection("127.0.0.1", d.port, timeout=5)
                    try:
                        c.request("GET", "/healthz")
                        r = c.getresponse()
                        r.read()
                        self.assertEqual(r.status, 200)
                        return c
                    except (ConnectionResetError, http.client.RemoteDisconnected):
                        c.close()
                        time.sleep(0.1)
                self.fail("a connection within the limit was refused for 2 s")
            for _ in range(8):
                conns.append(open_one())
            extra = socket.create_connection(("127.0.0.1", d.port), timeout=5)
            extra.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            try:
                got = extra.recv(100)
            except (ConnectionResetError, socket.timeout):
                got = b""
            extra.close()
            self.assertEqual(got, b"", "a connection past the limit was served")
            for c in conns:  # the eight still work
                c.request("GET", "/healthz")
                self.assertEqual(c.getresponse().status, 200)
        finally:
            for c in conns:
                c.close()
            self.assertEqual(d.stop(), 0)

    def test_post_rate_limit(self):
        d = Daemon(args=["--rate-limit", "6", "--rate-burst", "3"]).start()
        try:
            for _ in range(3):
                self.assertEqual(d.post("/runs", {"benchmark": "smem_pattern"}).status, 202)
            r = d.post("/runs", {"benchmark": "smem_pattern"})
            self.assertError(r, 429, "rate_limited")
            self.assertGreaterEqual(int(r.header("Retry-After")), 1)
            self.assertEqual(d.get("/runs").status, 200, "reads are not rate limited")
        finally:
            self.assertEqual(d.stop(), 0)

    def test_static_files_are_safe(self):
        d = Daemon().start()
        try:
            page = d.get("/")
            self.assertEqual(page.status, 200)
            self.assertTrue(page.header("Content-Type").startswith("text/html"))
            self.assertIn("script-src 'self'", page.header("Content-Security-Policy"))
            self.assertEqual(page.header("X-Content-Type-Options"), "nosniff")
            js = d.get("/static/app.js")
            self.assertEqual(js.status, 200)
            self.assertTrue(js.header("Content-Type").startswith("text/javascript"))
            for path in ("/static/../gpubench.db", "/static/%2e%2e%2fgpubench.db",
                         "/static/..%2f..%2fetc%2fpasswd", "/static/.hidden", "/static/",
                         "/static", "/static/a/b.js", "/static/%2Fetc%2Fpasswd"):
                r = d.get(path)
                self.assertIn(r.status, (404,), (path, r))
                self.assertNotIn("root:", r.body)
            # The page's modules (issue 25): two fixed folders of web/, one
            # name deep, typed as JavaScript (a browser refuses a module
            # served as anything else).
            for path in ("/static/lib/dom.js", "/static/views/runs.js"):
                js = d.get(path)
                self.assertEqual(js.status, 200, (path, js))
                self.assertTrue(js.header("Content-Type").startswith("text/javascript"), path)
                self.assertIn("export ", js.body, path)
            for path in ("/static/lib/../index.html", "/static/lib/..%2f..%2fgpubench.db",
                         "/static/views/../../gpubench.db", "/static/lib/", "/static/lib/.hidden",
                         "/static/lib/a/b.js", "/static/views/%2e%2e%2fapp.js", "/static/libs/dom.js",
                         "/static/lib/nope.js"):
                r = d.get(path)
                self.assertEqual(r.status, 404, (path, r))
                self.assertNotIn("SQLite", r.body)
        finally:
            self.assertEqual(d.stop(), 0)


class NoGpuTest(unittest.TestCase):
    def test_no_gpu_refuses_runs_with_the_reason(self):
        d = Daemon(gpus=0).start()
        try:
            body = d.get("/devices").json()
            self.assertEqual(body["devices"], [])
            self.assertIn("GPUBENCH_FAKE_GPUS=0", body["reason"])
            r = d.post("/runs", {"benchmark": "smem_stride"})
            self.assertEqual(r.status, 409, r)
            self.assertIn("GPUBENCH_FAKE_GPUS=0", r.json()["error"]["message"])
            self.assertEqual(d.get("/runs").json()["runs"], [])
            self.assertEqual(d.get("/healthz").json()["gpus"], 0)
        finally:
            self.assertEqual(d.stop(), 0)

    def test_missing_worker_is_explained(self):
        d = Daemon(worker="/nonexistent/gpubench-worker").start()
        try:
            reason = d.get("/devices").json()["reason"]
            self.assertIn("/nonexistent/gpubench-worker", reason)
        finally:
            self.assertEqual(d.stop(), 0)


class CommandLineTest(unittest.TestCase):
    def run_daemon(self, *args):
        import subprocess
        from harness import DAEMON
        return subprocess.run([DAEMON] + list(args), capture_output=True, text=True, timeout=10)

    def test_help_and_version(self):
        r = self.run_daemon("--help")
        self.assertEqual(r.returncode, 0)
        for opt in ("--listen", "--db", "--web", "--worker", "--max-queue", "--run-timeout"):
            self.assertIn(opt, r.stdout)
        r = self.run_daemon("--version")
        self.assertEqual(r.returncode, 0)
        self.assertRegex(r.stdout, r"gpubenchd \d+\.\d+\.\d+")

    def test_bad_options(self):
        for args in (["--bogus"], ["--max-queue", "0"], ["--listen"], ["--run-timeout", "x"]):
            r = self.run_daemon(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertTrue(r.stderr.strip())

    def test_verbose_logs_each_request(self):
        d = Daemon(args=["--verbose"]).start()
        d.post("/predict", "{not json")
        self.assertEqual(d.stop(), 0)
        self.assertIn("debug POST /predict 400", d.read_log())
        quiet = Daemon().start()
        quiet.post("/predict", "{not json")
        self.assertEqual(quiet.stop(), 0)
        self.assertNotIn("POST /predict 400", quiet.read_log())

    def test_newer_database_is_refused(self):
        import sqlite3
        d = Daemon()
        con = sqlite3.connect(d.db)
        con.execute("PRAGMA user_version = 999")
        con.close()
        with self.assertRaises(RuntimeError) as ctx:
            d.start()
        self.assertIn("newer gpubench", str(ctx.exception))


if __name__ == "__main__":
    unittest.main(verbosity=2)
