"""Alerts whose confirming run a daemon restart interrupted or lost (issue
14): the daemon is killed (SIGKILL) while the confirming run is running,
restarted on the same database, and the alert must not stay `detected`
for good.  A restart is not the card's doing, so the confirmation is
queued again, once; interrupted a second time, the alert is cleared
saying so.  The worker is the test double (tests/fake_worker.c): mode
once:slow=1.05:hang makes one slow run and then hangs every job."""
import os
import sqlite3
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402
import test_alert_confirm as confirm  # noqa: E402


class ConfirmationAcrossRestartTest(unittest.TestCase):
    def setUp(self):
        self.d = Daemon(args=["--history-runs", "8", "--confirm-runs", "1"]).start()
        self.addCleanup(self.d.stop)

    # the same helpers as the confirmations that end without a verdict
    run_once = confirm.ConfirmationEndsTest.run_once
    confirmations_of = confirm.ConfirmationEndsTest.confirmations_of
    alerts_of = confirm.ConfirmationEndsTest.alerts_of

    def wait_state(self, run_id, state, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            mine = self.alerts_of(run_id)
            if mine and all(a["state"] == state for a in mine):
                return mine
            time.sleep(0.1)
        self.fail("alerts of %s never %s: %s" % (run_id, state, self.alerts_of(run_id)))

    def slow_run_with_hung_confirmation(self):
        """A slow run found by the card's history; its confirming run hangs."""
        for _ in range(8):  # a history long enough to judge by (common/shift.h)
            self.run_once("normal")
        slow = self.run_once("once:slow=1.05:hang")
        conf = self.confirmations_of(slow["id"])
        self.assertEqual(len(conf), 1)
        self.d.wait_status(conf[0], ("running",))
        self.assertEqual(len(self.alerts_of(slow["id"])), 3)  # three rows
        self.assertTrue(all(a["state"] == "detected" for a in self.alerts_of(slow["id"])))
        return slow, conf[0]

    def kill_and_restart(self, mode):
        self.d.kill()
        self.d.set_mode(mode)
        self.d.start()

    def test_interrupted_confirmation_is_queued_again_and_confirms(self):
        slow, first = self.slow_run_with_hung_confirmation()
        self.kill_and_restart("slow=1.05")  # the card is still slow
        got = self.d.get("/runs/" + first).json()
        self.assertEqual((got["status"], got["error"]["code"]), ("failed", "interrupted"))
        mine = self.wait_state(slow["id"], "confirmed")
        conf = self.confirmations_of(slow["id"])
        self.assertEqual(len(conf), 2, conf)  # the interrupted one and its replacement
        self.assertEqual(conf[0], first)
        again = self.d.get("/runs/" + conf[1]).json()
        self.assertEqual(again["status"], "done")
        self.assertEqual(again["confirms"], slow["id"])
        self.assertEqual(again["params"], slow["params"])
        self.assertEqual(again["device"]["uuid"], slow["device"]["uuid"])
        for a in mine:
            self.assertEqual(a["runs"]["confirmed"], conf[1])
        self.assertIn("interrupted by a daemon restart", self.d.read_log())

    def test_interrupted_twice_clears_with_a_reason(self):
        slow, first = self.slow_run_with_hung_confirmation()
        self.kill_and_restart("hang")  # the replacement hangs too
        conf = self.confirmations_of(slow["id"])
        self.assertEqual(len(conf), 2, conf)
        self.d.wait_status(conf[1], ("running",))
        self.kill_and_restart("normal")
        mine = self.wait_state(slow["id"], "cleared")
        for a in mine:
            self.assertEqual(a["reason"],
                             "its confirming run %s was interrupted by a daemon restart, as one "
                             "before it was: not queued again" % conf[1])
            self.assertEqual(a["runs"]["cleared"], conf[1])
            self.assertIsNone(a["runs"]["confirmed"])
        # not queued a third time, now or at the next start
        self.d.stop()
        self.d.start()
        time.sleep(0.3)
        self.assertEqual(self.confirmations_of(slow["id"]), conf)
        self.assertEqual(self.d.sql("SELECT count(*) FROM runs WHERE status = 'queued'"), [(0,)])

    def test_restart_with_confirmations_off_settles_instead(self):
        """Restarted with --confirm-runs 0, nothing is queued again: the
        operator turned confirmations off; the alert is cleared saying so."""
        slow, first = self.slow_run_with_hung_confirmation()
        self.d.kill()
        i = self.d.args.index("--confirm-runs")
        self.d.args[i + 1] = "0"
        self.d.set_mode("slow=1.05")
        self.d.start()
        mine = self.wait_state(slow["id"], "cleared")
        for a in mine:
            self.assertEqual(a["reason"], "its confirming run was lost to a daemon restart and "
                             "confirming runs are now off (--confirm-runs 0)")
        self.assertEqual(self.confirmations_of(slow["id"]), [first])
        self.assertEqual(self.d.sql("SELECT count(*) FROM runs WHERE status = 'queued'"), [(0,)])

    def test_lost_confirmation_is_queued_again(self):
        # the daemon killed between an alert and its confirming run's
        # queueing: as if the confirming run had never been stored
        slow, first = self.slow_run_with_hung_confirmation()
        self.d.kill()
        con = sqlite3.connect(self.d.db)
        with con:  # commits
            self.assertEqual(con.execute("DELETE FROM runs WHERE id = ?", (first,)).rowcount, 1)
        con.close()
        self.d.set_mode("normal")  # the card is itself again
        self.d.start()
        mine = self.wait_state(slow["id"], "cleared")
        conf = self.confirmations_of(slow["id"])
        self.assertEqual(len(conf), 1, conf)
        self.assertNotEqual(conf[0], first)
        for a in mine:
            self.assertEqual(a["reason"], "not repeated by its confirming run")
            self.assertEqual(a["runs"]["cleared"], conf[0])


if __name__ == "__main__":
    unittest.main(verbosity=2)
