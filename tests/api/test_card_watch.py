"""Watching cards between runs (issue 24).  The watch probe: while a GPU's
runner is idle it writes {"watch":true} to its worker every
--watch-interval and reads {"event":"watch","reading":{...}}; GET /devices
shows whether the card is quiet and since when.  The worker test double
(tests/fake_worker.c) answers from its control word: busy is pid 4242
python3 at 80%, any other an idle card; GPUBENCH_FAKE_PROBE=old is a worker
from before the probe, =mute one that never answers it.  Synthetic
numbers."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402
from test_fleet import wait_for  # noqa: E402

SMALL_RUN = {"benchmark": "smem_stride", "params": {"strides": [1, 2]}}


def watch_of(d, index=0):
    return d.get("/devices").json()["devices"][index]["watch"]


def watch_state(d, state):
    return lambda: (lambda w: w if w["state"] == state else None)(watch_of(d))


class ProbeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Daemon(args=["--watch-interval", "1"]).start()

    @classmethod
    def tearDownClass(cls):
        assert cls.d.stop() == 0

    def test_quiet_then_busy_then_quiet_again(self):
        self.d.set_mode("normal")
        first = wait_for(watch_state(self.d, "quiet"), timeout=10, what="a quiet card")
        self.assertIsNotNone(first["quiet_since"])
        self.assertIsNone(first["reason"])
        self.assertEqual(first["missed_probes"], 0)

        self.d.set_mode("busy")
        busy = wait_for(watch_state(self.d, "busy"), timeout=10, what="a busy card")
        self.assertEqual(busy["reason"], "pid 4242 python3 on the card")
        self.assertIsNone(busy["quiet_since"])

        # Quiet again: since the first quiet reading after the busy one.
        self.d.set_mode("normal")
        again = wait_for(watch_state(self.d, "quiet"), timeout=10, what="quiet again")
        self.assertGreater(again["quiet_since"], first["quiet_since"])

    def test_runs_go_on_between_probes(self):
        self.d.set_mode("normal")
        for _ in range(3):
            r = self.d.post("/runs?wait=20", SMALL_RUN)
            self.assertEqual(r.status, 200, r)
            self.assertEqual(r.json()["status"], "done")


class OldWorkerTest(unittest.TestCase):
    """A worker from before the probe answers the probe line with an
    error (it takes it for a bad job): it is not probed again, and its
    runs are not disturbed."""

    def test_old_worker(self):
        d = Daemon(args=["--watch-interval", "1"], env={"GPUBENCH_FAKE_PROBE": "old"}).start()
        try:
            w = wait_for(lambda: (lambda w: w if "older" in (w["reason"] or "") else None)(
                watch_of(d)), timeout=10, what="the probe refused")
            self.assertEqual(w["state"], "unknown")
            for _ in range(2):
                r = d.post("/runs?wait=20", SMALL_RUN)
                self.assertEqual(r.status, 200, r)
                self.assertEqual(r.json()["status"], "done")
            self.assertEqual(d.get("/devices").json()["devices"][0]["worker"]["restarts"], 0)
        finally:
            self.assertEqual(d.stop(), 0)


class MuteWorkerTest(unittest.TestCase):
    """A worker that never answers the probe is noted, not killed: it still
    runs jobs."""

    def test_mute_worker(self):
        d = Daemon(args=["--watch-interval", "1"], env={"GPUBENCH_FAKE_PROBE": "mute"}).start()
        try:
            w = wait_for(lambda: (lambda w: w if w["missed_probes"] >= 1 else None)(
                watch_of(d)), timeout=20, what="a missed probe")
            self.assertEqual(w["state"], "unknown")
            self.assertIn("did not answer the watch probe", w["reason"])
            r = d.post("/runs?wait=30", SMALL_RUN)
            self.assertEqual(r.status, 200, r)
            self.assertEqual(r.json()["status"], "done")
            worker = d.get("/devices").json()["devices"][0]["worker"]
            self.assertEqual((worker["restarts"], worker["failures_in_row"]), (0, 0))
        finally:
            self.assertEqual(d.stop(), 0)


if __name__ == "__main__":
    unittest.main()
