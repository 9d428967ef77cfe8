"""Issue 32, deep checks: known_answer, memtest and soak through the daemon
and the worker TEST DOUBLE (tests/fake_deep.c draws their rows as
docs/DEEP_CHECKS.md has them; every number is synthetic).

- each benchmark runs and is stored valid, with its checks passed;
- a known_answer mismatch planted on one SM (the double's control word
  mismatch_sm=N) or a memtest error at one address (memtest_error=0xA) is
  a finding, not an invalid run: the card is degraded at once, the reason
  names the SM or the address, the floor alert is confirmed at once with no
  confirming run queued (the daemon runs with --confirm-runs 1), and it
  heals only once a later run of the benchmark passes AND a person
  acknowledges it, in either order;
- memtest's ECC counters going up are the same;
- soak's floors (sustained_share, the highest temperature under NVML's
  slowdown threshold) and its slowdown check are judged as floors are: a
  thermal slowdown is confirmed by a rerun; a power-capped GEMM is a note.
"""
import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402
from test_cards import card_of as card_of_uuid  # noqa: E402
from test_client import Client  # noqa: E402

H200 = {"GPUBENCH_FAKE_GPU_NAME": "NVIDIA H200", "GPUBENCH_FAKE_SM_COUNT": "132"}
KINDS = ["fp32_fma", "fp64_fma", "int_mix", "mma_bf16", "cublas_bf16"]
PATTERNS = ["inversions", "walking", "address", "random"]


def post_run(d, benchmark, params=None):
    body = {"benchmark": benchmark}
    if params is not None:
        body["params"] = params
    r = d.post("/runs?wait=30", body)
    assert r.status == 200, r.body
    assert r.json()["status"] == "done", r.body
    return d.get("/runs/" + r.json()["id"]).json()


def check(run_json, row):
    return next(c for c in run_json["checks"] if c["row"] == row)


def alerts_of(d, row, wait_for=None):
    """The alerts of row, waiting up to 10 s for one in state wait_for."""
    deadline = time.time() + 10
    while True:
        found = [a for a in d.get("/alerts").json()["alerts"] if a["row"] == row]
        if wait_for is None or any(a["state"] == wait_for for a in found) or time.time() > deadline:
            return found
        time.sleep(0.1)


def card_of(d):
    """GET /cards/UUID of the daemon's first GPU."""
    return card_of_uuid(d, d.get("/devices").json()["devices"][0]["uuid"])


class DeepRunsTest(unittest.TestCase):
    """Each deep check through the double, stored valid, its checks passed."""

    @classmethod
    def setUpClass(cls):
        cls.d = Daemon(env=H200).start()

    @classmethod
    def tearDownClass(cls):
        assert cls.d.stop() == 0

    def stored_valid(self, run):
        self.assertIs(run["validity"]["valid"], True, run["validity"])
        self.assertEqual(run["validity"]["reasons"], [])
        self.assertEqual(self.d.sql("SELECT valid FROM runs WHERE id = '%s'" % run["id"]), [(1,)])

    def test_known_answer(self):
        run = post_run(self.d, "known_answer")
        self.stored_valid(run)
        rows = run["results"]["rows"]
        self.assertEqual([r["kind"] for r in rows], KINDS)
        for r in rows:
            self.assertEqual((r["mismatches"], r["sms_covered"], r["sm_count"]), (0, 132, 132))
            self.assertIs(r["verified"], True)
            self.assertRegex(r["result_hash"], "^[0-9a-f]{16}$")
        self.assertEqual(run["results"]["summary"]["seconds"], 20)
        self.assertEqual([c["row"] for c in run["checks"]], KINDS)
        for c in run["checks"]:
            self.assertEqual((c["value"], c["ceiling"], c["pass"], c["exact"]), (0, 0, True, True))
            self.assertNotIn("message", c)

    def test_memtest(self):
        run = post_run(self.d, "memtest")
        self.stored_valid(run)
        rows = run["results"]["rows"]
        self.assertEqual([r["pattern"] for r in rows], PATTERNS + ["memcpy"])
        s = run["results"]["summary"]
        self.assertGreaterEqual(s["share_of_memory"] / (s["free_bytes"] / s["total_bytes"]), 0.9 - 1e-9)
        for r in rows[:4]:
            self.assertGreaterEqual(r["share_of_memcpy"], 0.7)
        self.assertEqual([c["row"] for c in run["checks"]], PATTERNS + ["memcpy", "ecc"])
        self.assertTrue(all(c["pass"] for c in run["checks"]), run["checks"])

    def test_soak(self):
        run = post_run(self.d, "soak", {"seconds": 30})
        self.stored_valid(run)
        s = run["results"]["summary"]
        self.assertEqual(len(s["series"]), 30)
        # a list of runs carries the summary without the series
        listed = [x for x in self.d.get("/runs?benchmark=soak").json()["runs"]
                  if x["id"] == run["id"]]
        self.assertNotIn("series", listed[0]["summary"])
        self.assertEqual(listed[0]["summary"]["max_temperature_c"], s["max_temperature_c"])
        self.assertEqual([r["label"] for r in run["results"]["rows"]],
                         ["gemm first_10s", "gemm last_30s", "gemm worst_10s",
                          "hbm first_10s", "hbm last_30s", "hbm worst_10s"])
        # the GEMM at its power cap is a note, not a reason, named as compute_peak's
        self.assertEqual([n["code"] for n in run["validity"]["notes"]], ["power_capped"])
        rows = {c["row"]: c for c in run["checks"]}
        self.assertEqual(sorted(rows), ["gemm sustained_share", "hbm sustained_share",
                                        "max_temperature_c", "slowdown"])
        self.assertTrue(all(c["pass"] for c in rows.values()), rows)
        self.assertEqual(rows["gemm sustained_share"]["floor"], 0.9)
        self.assertEqual(rows["max_temperature_c"]["ceiling"], 87)
        self.assertIn("H200 SXM", rows["max_temperature_c"]["source"])

    def test_unknown_model_still_exact(self):
        # exact checks need no card model: another daemon, a card no table knows
        d = Daemon(env={"GPUBENCH_FAKE_SM_COUNT": "132"}).start()
        try:
            d.set_mode("mismatch_sm=5")
            run = post_run(d, "known_answer", {"seconds": 2, "kinds": ["int_mix"]})
            self.assertIs(check(run, "int_mix")["pass"], False)
            self.assertEqual(card_of(d)["state"], "degraded")
            self.assertEqual(card_of(d)["reason"], "known_answer int_mix: 3 mismatches on SM 5")
            soak = post_run(d, "soak", {"seconds": 20})
            rows = {c["row"]: c for c in soak["checks"]}
            self.assertIsNone(rows["gemm sustained_share"]["pass"])  # no floors of the model
            self.assertIs(rows["slowdown"]["pass"], True)  # but slowdowns are judged
        finally:
            assert d.stop() == 0


class ImportedWrongResultTest(unittest.TestCase):
    """A wrong result this daemon did not measure (an import; a hub's
    pulled run) raises no alert, but the card is degraded by that one run
    all the same, and heals when its newest run of the benchmark passes."""

    def test_imported_mismatch_degrades_at_once(self):
        src = Daemon(env=dict(H200, GPUBENCH_FAKE_UUID_BASE="5")).start()
        d = Daemon(env=H200).start()
        try:
            src.set_mode("once:mismatch_sm=9")
            bad = post_run(src, "known_answer", {"seconds": 1})
            good = post_run(src, "known_answer", {"seconds": 1})
            lines = {json.loads(x)["id"]: x for x in src.get("/runs.ndjson").body.splitlines()}
            r = d.post("/runs/import", lines[bad["id"]] + "\n")
            self.assertEqual(r.status, 200, r.body)
            uuid = bad["device"]["uuid"]
            card = d.get("/cards/" + uuid).json()
            self.assertEqual(card["state"], "degraded", card)
            self.assertEqual(card["reason"], "known_answer fp32_fma: 3 mismatches on SM 9")
            self.assertEqual(d.get("/alerts").json()["alerts"], [])
            r = d.post("/runs/import", lines[good["id"]] + "\n")
            self.assertEqual(r.status, 200, r.body)
            self.assertNotEqual(d.get("/cards/" + uuid).json()["state"], "degraded")
        finally:
            assert src.stop() == 0
            assert d.stop() == 0


class ReadersTest(unittest.TestCase):
    """The client, /metrics and the fleet view read the deep checks."""

    def test_show_metrics_and_the_fleets_hashes(self):
        d = Daemon(env=H200, gpus=3).start()
        try:
            d.set_mode("mismatch_sm=5")
            bad = d.post("/runs?wait=30", {"benchmark": "known_answer", "device": 0,
                                           "params": {"seconds": 2}}).json()
            d.set_mode("normal")
            for dev in (1, 2):
                r = d.post("/runs?wait=30", {"benchmark": "known_answer", "device": dev,
                                             "params": {"seconds": 2}})
                self.assertEqual(r.json()["status"], "done", r.body)
            rc, out, err = Client(d)("show", bad["id"])
            self.assertEqual(rc, 0, err)
            self.assertIn("checked: 3 mismatches, 132 of 132 SMs covered in 2 s", out)
            self.assertRegex(out, r"fp32_fma\s+.*FAIL: known_answer fp32_fma: 3 mismatches on SM 5")
            self.assertRegex(out, r"fp64_fma\s+.*pass \(<= ceiling\)")
            md = d.get("/runs/%s.md" % bad["id"]).body
            self.assertIn("Failed: known_answer fp32_fma: 3 mismatches on SM 5.", md)
            self.assertIn("| Mismatches |", md)
            csv_text = d.get("/runs/%s.csv" % bad["id"]).body
            header = csv_text.splitlines()[0].split(",")
            # the deep checks' ten, then nccl_allreduce's two (issue 37)
            self.assertEqual(header[-12:-8], ["mismatches", "checked", "sms_covered", "result_hash"])
            self.assertEqual(header[-2:], ["algbw_gbps", "busbw_gbps"])
            metrics = d.get("/metrics").body
            line = [x for x in metrics.splitlines()
                    if x.startswith("gpubench_result_mismatches{") and 'label="fp32_fma"' in x
                    and bad["device"]["uuid"] in x]
            self.assertEqual(len(line), 1, metrics)
            self.assertTrue(line[0].endswith(" 3"), line)
            fleet = d.get("/fleet?benchmark=known_answer").json()
            group = fleet["groups"][0]
            hashes = {h["key"]: h for h in group["result_hashes"]}
            self.assertEqual((hashes["fp32_fma"]["cards"], hashes["fp32_fma"]["differ"]), (3, 1))
            self.assertEqual(hashes["fp64_fma"]["differ"], 0)
            differs = {c["device_uuid"]: c["hash_differs"] for c in group["cards"]}
            self.assertEqual(differs[bad["device"]["uuid"]], ["fp32_fma"])
            self.assertEqual(sorted(len(v) for v in differs.values()), [0, 0, 1])
            good = [r for r in self.rows(d, group) if r != bad["id"]]
            self.assertEqual(len(good), 2)
        finally:
            assert d.stop() == 0

    def rows(self, d, group):
        return [c["run_id"] for c in group["cards"]]


class WrongResultTest(unittest.TestCase):
    """A planted wrong result degrades the card at once; healed only by a
    passing run and an acknowledgement."""

    def setUp(self):
        self.d = Daemon(env=H200, args=["--confirm-runs", "1"]).start()

    def tearDown(self):
        assert self.d.stop() == 0

    def found_at_once(self, benchmark, params, plant, row, reason, note="unverified"):
        self.d.set_mode("once:" + plant)
        bad = post_run(self.d, benchmark, params)
        # a finding, not an invalid run
        self.assertIs(bad["validity"]["valid"], True, bad["validity"])
        self.assertIn(note, [n["code"] for n in bad["validity"]["notes"]])
        c = check(bad, row)
        self.assertIs(c["pass"], False)
        self.assertIs(c["exact"], True)
        self.assertEqual(c["message"], reason)
        alerts = alerts_of(self.d, row, "confirmed")
        self.assertEqual(len(alerts), 1, alerts)
        a = alerts[0]
        self.assertEqual((a["kind"], a["state"], a["verdict"]), ("floor", "confirmed", "wrong_result"))
        card = card_of(self.d)
        self.assertEqual(card["state"], "degraded", card)
        self.assertEqual(card["reason"], reason)
        # no confirming run: only the one run of the benchmark
        time.sleep(0.5)
        runs = self.d.sql("SELECT count(*), count(confirms) FROM runs WHERE benchmark = '%s'"
                          % benchmark)
        self.assertEqual(runs, [(1, 0)])
        return a

    def test_mismatch_pass_then_ack(self):
        a = self.found_at_once("known_answer", {"seconds": 2}, "mismatch_sm=17", "fp32_fma",
                               "known_answer fp32_fma: 3 mismatches on SM 17")
        good = post_run(self.d, "known_answer", {"seconds": 3})  # other params: same benchmark
        self.assertIs(check(good, "fp32_fma")["pass"], True)
        # a passing run alone does not heal it
        self.assertEqual(alerts_of(self.d, "fp32_fma")[0]["state"], "confirmed")
        self.assertEqual(card_of(self.d)["state"], "degraded")
        ack = self.d.post("/alerts/%d/ack" % a["id"], {"reason": "reseated, known_answer passes"})
        self.assertEqual(ack.status, 200, ack.body)
        self.assertEqual(ack.json()["state"], "cleared", ack.body)
        self.assertEqual(ack.json()["runs"]["cleared"], good["id"])
        self.assertNotEqual(card_of(self.d)["state"], "degraded")

    def test_pass_then_fail_again_then_ack_stays(self):
        a = self.found_at_once("known_answer", {"seconds": 1}, "mismatch_sm=2", "fp32_fma",
                               "known_answer fp32_fma: 3 mismatches on SM 2")
        post_run(self.d, "known_answer", {"seconds": 1})  # passes
        self.d.set_mode("once:mismatch_sm=4")
        post_run(self.d, "known_answer", {"seconds": 1})  # fails again: no new alert, one open
        ack = self.d.post("/alerts/%d/ack" % a["id"], {"reason": "seen"})
        self.assertEqual(ack.json()["state"], "acknowledged", ack.body)  # its newest check failed
        self.assertEqual(card_of(self.d)["state"], "degraded")
        post_run(self.d, "known_answer", {"seconds": 1})
        self.assertEqual(alerts_of(self.d, "fp32_fma", "cleared")[0]["state"], "cleared")
        self.assertNotEqual(card_of(self.d)["state"], "degraded")

    def test_memtest_error_ack_then_pass(self):
        a = self.found_at_once("memtest", {"fraction": 0.5}, "memtest_error=0x1f4000", "walking",
                               "memtest walking: 2 errors, first at 0x1f4000")
        ack = self.d.post("/alerts/%d/ack" % a["id"], {"reason": "RMA asked"})
        self.assertEqual(ack.status, 200, ack.body)
        self.assertEqual(ack.json()["state"], "acknowledged")
        # an acknowledgement alone does not heal it
        self.assertEqual(card_of(self.d)["state"], "degraded")
        self.assertEqual(card_of(self.d)["reason"], "memtest walking: 2 errors, first at 0x1f4000")
        post_run(self.d, "memtest", {"fraction": 0.5})
        self.assertEqual(alerts_of(self.d, "walking", "cleared")[0]["state"], "cleared")
        self.assertNotEqual(card_of(self.d)["state"], "degraded")

    def test_memtest_ecc_increase(self):
        self.found_at_once("memtest", {"fraction": 0.2, "patterns": ["address"]}, "memtest_ecc",
                           "ecc", "memtest ecc: the ECC counters rose during the test "
                           "(volatile_corrected +1)", note="ecc_errors")

    def test_mismatch_in_an_invalid_run_still_degrades(self):
        # another process on the card spoils the run, not the wrong answer:
        # ",contended" after the planted word makes the double's watch see one
        self.d.set_mode("once:mismatch_sm=3,contended")
        run = post_run(self.d, "known_answer", {"seconds": 1, "kinds": ["fp64_fma"]})
        self.assertIs(run["validity"]["valid"], False)
        self.assertEqual([r["code"] for r in run["validity"]["reasons"]], ["contended"])
        self.assertEqual(alerts_of(self.d, "fp64_fma", "confirmed")[0]["state"], "confirmed")
        self.assertEqual(card_of(self.d)["state"], "degraded")
        self.assertEqual(card_of(self.d)["reason"], "known_answer fp64_fma: 3 mismatches on SM 3")

    def test_planted_sm_past_the_card_is_its_last(self):
        self.d.set_mode("once:mismatch_sm=999")
        run = post_run(self.d, "known_answer", {"seconds": 1, "kinds": ["fp32_fma"]})
        self.assertEqual(check(run, "fp32_fma")["message"],
                         "known_answer fp32_fma: 3 mismatches on SM 131")


class SoakFloorsTest(unittest.TestCase):
    def test_thermal_slowdown_is_a_finding_confirmed_by_a_rerun(self):
        d = Daemon(env=H200, args=["--confirm-runs", "1"]).start()
        try:
            d.set_mode("soak_thermal")
            run = post_run(d, "soak", {"seconds": 90})
            self.assertIs(run["validity"]["valid"], True, run["validity"])
            rows = {c["row"]: c for c in run["checks"]}
            self.assertIs(rows["gemm sustained_share"]["pass"], False)
            self.assertIs(rows["max_temperature_c"]["pass"], False)
            self.assertIs(rows["slowdown"]["pass"], False)
            self.assertNotIn("exact", [k for k, v in rows["slowdown"].items() if v is True])
            self.assertEqual(rows["slowdown"]["message"],
                             "soak: hw_thermal_slowdown from 60 s (30 s of slowdown)")
            # judged as floors are: detected, then confirmed by its rerun
            alerts = alerts_of(d, "slowdown", "confirmed")
            self.assertEqual(alerts[0]["state"], "confirmed", alerts)
            self.assertEqual(alerts[0]["verdict"], "below_floor")
            confirms = d.sql("SELECT count(*) FROM runs WHERE confirms = '%s'" % run["id"])
            self.assertEqual(confirms, [(1,)])
            self.assertEqual(card_of(d)["state"], "degraded")
        finally:
            assert d.stop() == 0


class HealthDeepSuiteTest(unittest.TestCase):
    def test_suite_runs_every_member_and_says_how_long(self):
        d = Daemon(env=H200).start()
        try:
            suites = {s["name"]: s for s in d.get("/benchmarks").json()["suites"]}
            deep, health = suites["health_deep"], suites["health"]
            names = [m["name"] for m in deep["members"]]
            # the health members first, the soak last: its heat must not
            # reach the other runs (common/bench_suite.h)
            self.assertEqual(names[-3:], ["known_answer", "memtest", "soak"])
            self.assertEqual(names[:-3], [m["name"] for m in health["members"]])
            self.assertLess(deep["expected_s"], 300)
            self.assertGreater(deep["expected_s"], health["expected_s"])
            self.assertIn("examples/h200_daemon_deep", deep["expected_source"])
            self.assertEqual(deep["members"][-1]["health_params"]["seconds"], 120)
            r = d.post("/runs?wait=60", {"benchmark": "health_deep"})
            self.assertIn(r.status, (200, 202), r.body)
            batch = r.json()["batch"] if "batch" in r.json() else r.json()["id"]
            deadline = time.time() + 60
            while time.time() < deadline:
                runs = d.get("/runs?batch=%s&limit=50" % batch).json()["runs"]
                if runs and all(x["status"] in ("done", "failed") for x in runs):
                    break
                time.sleep(0.2)
            ran = {x["benchmark"]: x for x in runs}
            # p2p_bandwidth and nccl_allreduce are left out on a node of one GPU
            self.assertEqual(sorted(ran), sorted(n for n in names
                                                 if n not in ("p2p_bandwidth", "nccl_allreduce")))
            self.assertTrue(all(x["status"] == "done" for x in runs), runs)
            order = [x["benchmark"] for x in sorted(runs, key=lambda x: x["started_at"])]
            self.assertEqual(order, [n for n in names if n in ran], "the order they ran in")
            self.assertEqual(ran["known_answer"]["params"]["seconds"], 20)
            self.assertEqual(ran["soak"]["params"]["seconds"], 120)
            self.assertEqual(ran["memtest"]["params"]["fraction"], 0.9)
            for b in ("known_answer", "memtest", "soak"):
                run = d.get("/runs/" + ran[b]["id"]).json()
                self.assertIs(run["validity"]["valid"], True, (b, run["validity"]))
            # GET /coverage counts the deep checks against their own window
            cov = d.get("/coverage").json()
            self.assertEqual(cov["deep_benchmarks"], ["known_answer", "memtest", "soak"])
            self.assertEqual(cov["deep_max_age_s"], 7 * 86400)
            card = cov["cards"][0]
            self.assertEqual({c["benchmark"]: c["state"] for c in card["deep_cells"]},
                             {"known_answer": "fresh", "memtest": "fresh", "soak": "fresh"})
            self.assertEqual(cov["deep_totals"]["fresh"], 3)
            self.assertNotIn("soak", cov["benchmarks"])
            self.assertEqual(card["state"], "healthy", card)
            stale = d.get("/coverage?deep_max_age=1s")
            self.assertEqual(stale.status, 200)
            time.sleep(1.2)
            stale = d.get("/coverage?deep_max_age=1s").json()
            self.assertEqual(stale["deep_totals"]["stale"], 3)
            self.assertEqual(stale["cards"][0]["state"], "healthy")  # never the state
            self.assertEqual(d.get("/coverage?deep_max_age=soon").status, 400)
            # gpubench check shows them on the card's line
            rc, out, _ = Client(d)("check")
            self.assertEqual(rc, 0, out)
            self.assertIn("; deep: known_answer fresh, memtest fresh, soak fresh",
                          out.splitlines()[1])
        finally:
            assert d.stop() == 0

    def test_canary_periods_side_by_side(self):
        d = Daemon(args=["--canary", "health_deep@7d", "--canary", "health@24h",
                         "--canary-idle", "1h"]).start()
        try:
            listed = d.get("/canaries").json()["cards"][0]["canaries"]
            periods = {c["benchmark"]: c["period_s"] for c in listed}
            self.assertEqual(periods, {"health_deep": 7 * 86400, "health": 86400})
        finally:
            assert d.stop() == 0
        # a member alone beside its suite is still refused
        bad = Daemon(args=["--canary", "health_deep@7d", "--canary", "soak@1d"])
        with self.assertRaises(RuntimeError) as e:
            bad.start()
        self.assertIn("the canary health_deep runs soak already", str(e.exception))


if __name__ == "__main__":
    unittest.main()
