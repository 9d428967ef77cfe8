"""Why a run is not measuring yet (issue 13): the worker's progress lines
carry a "message" while it waits for a quiet card; the daemon keeps it as
the run's progress.message while the run waits and drops it once the
samples begin.  The worker test double's quiet_wait mode (tests/fake_worker.c)
prints such lines for GPUBENCH_FAKE_WAIT_MS, then runs.  Synthetic numbers."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402
from test_fleet import wait_for  # noqa: E402

WAITING = "waiting for a quiet card: pid 4242 python3; utilisation 87%"


class ProgressMessageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Daemon(env={"GPUBENCH_FAKE_WAIT_MS": "2500",
                            "GPUBENCH_FAKE_DELAY_MS": "300"}).start()

    @classmethod
    def tearDownClass(cls):
        assert cls.d.stop() == 0

    def progress(self, run_id):
        return self.d.get("/runs/" + run_id).json().get("progress")

    def test_message_while_waiting_then_gone(self):
        self.d.set_mode("quiet_wait")
        r = self.d.post("/runs", {"benchmark": "smem_stride", "params": {"strides": [1, 2, 32]}})
        self.assertEqual(r.status, 202, r)
        run_id = r.json()["id"]

        waiting = wait_for(lambda: (lambda p: p if p and p.get("message") else None)(
            self.progress(run_id)), timeout=10, what="a progress message")
        self.assertEqual(waiting["message"], WAITING)
        self.assertEqual((waiting["done"], waiting["total"]), (0, 0))
        run = self.d.get("/runs/" + run_id).json()
        self.assertEqual(run["status"], "running")
        # The list shows the same progress as the run.
        listed = [x for x in self.d.get("/runs").json()["runs"] if x["id"] == run_id]
        self.assertEqual(listed[0]["progress"]["message"], WAITING)

        # Once the samples begin the message goes (not left showing a wait
        # while it measures), and the run ends valid: the wait outlasted
        # the other process.
        measuring = wait_for(lambda: (lambda p: p if p and p.get("total", 0) > 0 else None)(
            self.progress(run_id)), timeout=10, what="samples")
        self.assertIsNone(measuring["message"])
        done = self.d.wait_status(run_id, ("done",))
        run = self.d.get("/runs/" + run_id).json()
        self.assertEqual(run["status"], "done", done)
        self.assertIsNone(run["progress"]["message"])
        self.assertIs(run["validity"]["valid"], True, run["validity"])
        self.assertEqual(run["meta"]["watch"]["quiet"]["found"], [{"pid": 4242, "name": "python3"}])

    def test_no_message_for_a_plain_run(self):
        self.d.set_mode("normal")
        r = self.d.post("/runs?wait=20", {"benchmark": "smem_stride", "params": {"strides": [1, 2]}})
        self.assertEqual(r.status, 200, r)
        self.assertIsNone(r.json()["progress"]["message"])


if __name__ == "__main__":
    unittest.main()
