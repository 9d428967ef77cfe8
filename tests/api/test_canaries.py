"""Checks on idle cards (--canary BENCHMARK@PERIOD, --canary-idle, GET
/canaries): a quiet card gets its canary, labelled canary, once a period
(across a restart too); a busy card defers it, saying why, then runs it
once quiet; a person's run goes before a canary; mistakes in the options
are refused at start; without a GPU /canaries says why.  The worker's test
double answers the watch probe from its control word (busy: pid 4242
python3; anything else: an idle card)."""
import os
import subprocess
import sys
import time
import unittest
from datetime import datetime, timedelta

sys.path.insert(0, os.path.dirname(__file__))
from harness import DAEMON, Daemon  # noqa: E402
from test_fleet import wait_for  # noqa: E402

CANARY = ["--watch-interval", "1", "--canary", "smem_stride@1h", "--canary-idle", "2s"]


def parse_time(text):
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ")


def canary(d, index=0):
    """The first canary of GPU index in GET /canaries."""
    return d.get("/canaries").json()["cards"][index]["canaries"][0]


def canary_runs(d):
    return d.get("/runs?label=canary").json()["runs"]


def last_done(d):
    c = canary(d)
    return c if c["last_run"] and c["last_run"]["outcome"] == "done" else None


def busy_deferral(d):
    c = canary(d)
    return c if (c["deferred"]["reason"] or "").startswith("card busy") else None


class CanaryTest(unittest.TestCase):
    def tearDown(self):
        self.d.stop()

    def test_quiet_card_gets_it_once_a_period_across_a_restart(self):
        self.d = Daemon(args=CANARY).start()
        c = wait_for(lambda: last_done(self.d), 30, "the canary ran")
        runs = canary_runs(self.d)
        self.assertEqual(len(runs), 1, runs)
        self.assertEqual(runs[0]["label"], "canary")
        self.assertEqual(runs[0]["benchmark"], "smem_stride")
        self.assertEqual(c["last_run"]["id"], runs[0]["id"])
        self.assertEqual(c["period_s"], 3600)
        self.assertIs(c["due"], False)
        self.assertEqual(parse_time(c["next_due_at"]) - parse_time(runs[0]["created_at"]),
                         timedelta(hours=1))
        # Quiet for long past --canary-idle, across a restart: no second run.
        self.d.stop()
        self.d.start()
        time.sleep(5)
        self.assertEqual([r["id"] for r in canary_runs(self.d)], [runs[0]["id"]])
        self.assertEqual(canary(self.d)["last_run"]["id"], runs[0]["id"])

    def test_busy_card_defers_saying_why_then_runs_when_quiet(self):
        self.d = Daemon(args=CANARY)
        self.d.set_mode("busy")
        self.d.start()
        c = wait_for(lambda: busy_deferral(self.d), 30, "a busy deferral")
        self.assertEqual(c["deferred"]["reason"], "card busy: pid 4242 python3 on the card")
        self.assertIs(c["deferred"]["now"], True)
        self.assertGreaterEqual(c["deferred"]["count"], 1)
        self.assertIs(c["due"], True)
        self.assertIsNone(c["last_run"])
        time.sleep(3)  # still busy: still no canary, and still one busy spell
        self.assertEqual(canary_runs(self.d), [])
        self.assertEqual(canary(self.d)["deferred"]["count"], c["deferred"]["count"])
        self.d.set_mode("normal")
        c = wait_for(lambda: last_done(self.d), 30, "the canary ran once quiet")
        self.assertIs(c["deferred"]["now"], False)
        self.assertEqual(len(canary_runs(self.d)), 1)

    def test_a_run_posted_while_a_canary_is_due_goes_first(self):
        self.d = Daemon(args=CANARY)
        # A run of 3 s, posted before the card can have been quiet 2 s.
        self.d.set_mode("once:quiet_wait")
        self.d.start()
        user = self.d.post("/runs", {"benchmark": "smem_stride"}).json()
        c = wait_for(lambda: last_done(self.d), 30, "the canary ran")
        user = self.d.get("/runs/" + user["id"]).json()
        run = self.d.get("/runs/" + c["last_run"]["id"]).json()
        self.assertEqual(user["status"], "done")
        self.assertGreaterEqual(parse_time(run["created_at"]), parse_time(user["finished_at"]))
        self.assertGreaterEqual(c["deferred"]["count"], 1)
        self.assertRegex(self.d.read_log(),
                         r"canary smem_stride on GPU 0 deferred: (a run is running|user runs)")

    def test_the_queue_takes_canaries_after_a_persons_runs(self):
        # A canary queued behind a running run, then a person's run: the
        # person's starts first, also before every member of a health
        # canary, and its queue position says so.
        self.d = Daemon(args=["--watch-interval", "1"]).start()
        self.d.set_mode("once:quiet_wait")
        first = self.d.post("/runs", {"benchmark": "smem_stride"}).json()
        self.d.wait_status(first["id"], ["running"])
        health = self.d.post("/runs", {"benchmark": "health", "label": "canary"}).json()
        user = self.d.post("/runs", {"benchmark": "smem_stride"}).json()
        self.assertEqual(user["queue_position"], 1, user)
        members = [r["id"] for r in health["runs"]]
        self.assertEqual(self.d.get("/runs/" + members[0]).json()["queue_position"], 2)
        user = self.d.wait_status(user["id"], ["done"], timeout=30)
        for m in members:
            run = self.d.wait_status(m, ["done"], timeout=30)
            self.assertGreater(parse_time(run["started_at"]), parse_time(user["started_at"]))

    def test_no_gpu_says_why(self):
        self.d = Daemon(gpus=0, args=CANARY).start()
        body = self.d.get("/canaries").json()
        self.assertEqual(body["cards"], [])
        self.assertTrue(body["reason"])
        self.assertEqual(body["idle_s"], 2)

    def test_no_canary_says_so(self):
        self.d = Daemon().start()
        body = self.d.get("/canaries").json()
        self.assertEqual(body["cards"], [])
        self.assertEqual(body["reason"], "no --canary given")
        self.assertEqual(body["idle_s"], 600)


class CanaryOptionsTest(unittest.TestCase):
    def refused(self, *args):
        p = subprocess.run([DAEMON, "--listen", "127.0.0.1:0", *args], capture_output=True,
                           text=True, timeout=10)
        self.assertEqual(p.returncode, 2, p.stderr)
        return p.stderr.strip()

    def test_mistakes_are_refused_saying_which(self):
        self.assertIn("--canary bogus@24h: unknown benchmark 'bogus'",
                      self.refused("--canary", "bogus@24h"))
        self.assertIn("--canary health@soon: period 'soon'",
                      self.refused("--canary", "health@soon"))
        self.assertIn("--canary health: expected BENCHMARK@PERIOD",
                      self.refused("--canary", "health"))
        self.assertIn("--canary health@1h: a canary of health is given twice",
                      self.refused("--canary", "health@24h", "--canary", "health@1h"))
        self.assertIn("--canary hbm_bandwidth@1h: the canary health runs hbm_bandwidth already",
                      self.refused("--canary", "health@24h", "--canary", "hbm_bandwidth@1h"))
        self.assertIn("--canary-idle 0s: expected a whole number then s, m, h or d",
                      self.refused("--canary-idle", "0s"))


if __name__ == "__main__":
    unittest.main()
