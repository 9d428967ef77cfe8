"""Alerts whose confirming runs end without a verdict (issue 14, fix b): a
confirming run that fails, is cancelled or times out counts as one that
did not repeat the change, and the alert is cleared saying which run and
how, instead of staying `detected` for good.  And /metrics' alert gauge
takes no label per alert (fix a).  The worker is the test double
(tests/fake_worker.c): its mode once:slow=1.05:fault makes one slow run
and then fails every job, once:slow=1.05:hang one slow run then hangs."""
import os
import re
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402

PARAMS = {"strides": [1, 2, 32]}
HISTORY = 8  # the fewest history runs a run is judged against


class ConfirmationEndsTest(unittest.TestCase):
    def start(self, confirm_runs):
        # a history long enough to judge by (GB_HISTORY_MIN_RUNS, common/shift.h)
        self.d = Daemon(args=["--history-runs", str(HISTORY), "--confirm-runs",
                              str(confirm_runs)]).start()
        self.addCleanup(lambda: self.assertEqual(self.d.stop(), 0))

    def run_once(self, mode, timeout_s=None):
        self.d.set_mode(mode)
        body = {"benchmark": "smem_stride", "params": PARAMS}
        if timeout_s:
            body["timeout_s"] = timeout_s
        r = self.d.post("/runs?wait=20", body)
        self.assertEqual(r.status, 200, r.body)
        self.assertEqual(r.json()["status"], "done", r.body)
        return r.json()

    def confirmations_of(self, run_id):
        rows = self.d.sql("SELECT id FROM runs WHERE confirms = '%s' ORDER BY id" % run_id)
        return [r[0] for r in rows]

    def alerts_of(self, run_id):
        return [a for a in self.d.get("/alerts").json()["alerts"]
                if a["runs"]["detected"] == run_id]

    def wait_cleared(self, run_id, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            mine = self.alerts_of(run_id)
            if mine and all(a["state"] == "cleared" for a in mine):
                return mine
            time.sleep(0.1)
        self.fail("alerts of %s never cleared: %s" % (run_id, self.alerts_of(run_id)))

    def test_failed_confirmation_clears(self):
        self.start(1)
        for _ in range(HISTORY):
            self.run_once("normal")
        slow = self.run_once("once:slow=1.05:fault")  # then every job fails
        conf = self.confirmations_of(slow["id"])
        self.assertEqual(len(conf), 1)
        self.assertEqual(self.d.wait_status(conf[0], ("failed",))["status"], "failed")
        mine = self.wait_cleared(slow["id"])
        self.assertEqual(len(mine), 3)  # history, three rows (a fleet of one judges nothing)
        for a in mine:
            self.assertEqual(a["reason"], "its confirming run %s failed" % conf[0])
            self.assertEqual(a["runs"]["cleared"], conf[0])
            self.assertIsNone(a["runs"]["confirmed"])
        # nothing queued again: the next run that finds it opens a new alert
        time.sleep(0.3)
        self.assertEqual(self.confirmations_of(conf[0]), [])
        self.assertEqual(self.d.sql("SELECT count(*) FROM runs WHERE status = 'queued'"), [(0,)])

    def test_cancelled_and_timed_out_confirmations_clear(self):
        # two confirming runs: the first hangs (and times out), the
        # second waits behind it and is cancelled; the alert awaits both
        self.start(2)
        for _ in range(HISTORY):
            self.run_once("normal", 2)
        slow = self.run_once("once:slow=1.05:hang", 2)
        conf = self.confirmations_of(slow["id"])
        self.assertEqual(len(conf), 2)
        self.d.wait_status(conf[0], ("running",))
        r = self.d.request("DELETE", "/runs/" + conf[1])
        self.assertEqual(r.status, 200, r.body)
        # one of two spent: still detected
        time.sleep(0.3)
        self.assertTrue(all(a["state"] == "detected" for a in self.alerts_of(slow["id"])))
        self.d.set_mode("normal")
        self.assertEqual(self.d.wait_status(conf[0], ("failed",), timeout=30)["status"], "failed")
        mine = self.wait_cleared(slow["id"])
        self.assertEqual(len(mine), 3)
        for a in mine:
            self.assertEqual(a["reason"], "its confirming run %s failed" % conf[0])

    def test_metrics_gauge_has_no_alert_label(self):
        # confirmed at once (no confirming runs): the gauge counts them per
        # card, row and kind, and a second alert of the same row later
        # keeps the same series
        self.start(0)
        for _ in range(HISTORY):
            self.run_once("normal")
        self.run_once("slow=1.05")
        text = self.d.get("/metrics").body
        lines = [l for l in text.splitlines() if l.startswith("gpubench_alert_open{")]
        self.assertEqual(len(lines), 3, text)
        for l in lines:
            labels = dict(re.findall(r'([a-z_]+)="([^"]*)"', l))
            self.assertEqual(sorted(labels), ["benchmark", "host", "kind", "row", "state", "uuid"])
            self.assertEqual(labels["state"], "confirmed")
            self.assertTrue(l.endswith("} 1"), l)
        before = sorted(l.rsplit(" ", 1)[0] for l in lines)
        # acknowledged: the same card and row, counted under its state
        a = [x for x in self.d.get("/alerts").json()["alerts"] if x["state"] == "confirmed"]
        self.assertEqual(self.d.post("/alerts/%d/ack" % a[0]["id"], {"reason": "known"}).status, 200)
        text = self.d.get("/metrics").body
        lines = [l for l in text.splitlines() if l.startswith("gpubench_alert_open{")]
        self.assertEqual(sum('state="acknowledged"' in l for l in lines), 1)
        self.assertEqual(sorted(l.rsplit(" ", 1)[0].replace("acknowledged", "confirmed")
                                for l in lines), before)


if __name__ == "__main__":
    unittest.main(verbosity=2)
