"""SIGTERM with requests parked on ?wait (issue 31, part 3), end to end with
a real gpubenchd and the worker test double on two GPUs.

At the signal three requests wait: GET /runs/H?wait on a run that hangs
on GPU 0 (put back in the queue when --shutdown-grace is over), POST
/runs?wait for a run queued behind it (never started), and GET /runs/S?wait
on a run of GPU 1 that ends within the grace, slower than its card's
history, so that its end queues a confirming run.  The test asserts:

- no connection is dropped: every request gets an HTTP answer;
- the queued run's request is answered at once (within a second) with 202
  and the run, `queued`; the hung run's with 202 and the run `queued`
  again (put back) once the grace is over; the run that ended in the
  grace with 200 and the run `done`;
- gpubenchd exits 0 within --shutdown-grace + 1 s of the signal;
- no run started after the signal: no run's started_at is later than it,
  the daemon logged no run started after "SIGTERM: stopping", and the
  confirming run that S's end queued is still queued, never started.
"""
import os
import signal
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402

PARAMS = {"strides": [1, 2, 32]}  # three rows
HISTORY = 8  # the fewest history runs a run is judged against (common/shift.h)
GRACE_S = 4
ROW_DELAY_MS = 700  # S takes three rows of it: it ends inside the grace


def iso_ms(t):
    """Unix time t as the API writes times (RFC 3339, UTC, milliseconds)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%03dZ" % int(t % 1 * 1000)


class Waiter(threading.Thread):
    """One request sent from a thread of its own: its answer, or the
    exception that ended it (a dropped connection), and when."""

    def __init__(self, d, method, path, body=None):
        super().__init__(daemon=True)
        self.d, self.method, self.path, self.body = d, method, path, body
        self.response = self.error = self.answered_at = None

    def run(self):
        try:
            self.response = self.d.request(self.method, self.path, body=self.body, timeout=60)
        except Exception as e:  # noqa: BLE001 - whatever ended it is the finding
            self.error = e
        self.answered_at = time.monotonic()

    def answer(self):
        """(status, run) of the answer; fails saying how it ended if none."""
        if self.error is not None or self.response is None:
            raise AssertionError("%s %s got no HTTP answer: %r" % (self.method, self.path, self.error))
        return self.response.status, self.response.json()


class ShutdownWithWaiters(unittest.TestCase):
    def setUp(self):
        # --test-benchmarks: H is test_hang, which hangs whatever the
        # control file says when the worker reads it (set_mode("hang") raced
        # with the set_mode for S: the worker may read the file after the
        # run shows "running").
        self.d = Daemon(gpus=2, args=["--history-runs", str(HISTORY), "--confirm-runs", "1",
                                      "--shutdown-grace", str(GRACE_S), "--test-benchmarks"])
        self.addCleanup(self.kill_if_running)

    def kill_if_running(self):
        if self.d.proc and self.d.proc.poll() is None:
            self.d.proc.kill()
            self.d.proc.wait()
            self.d.log.close()

    def post_run(self, device, wait=""):
        body = {"benchmark": "smem_stride", "params": PARAMS, "device": device}
        return self.d.post("/runs" + wait, body)

    def test_every_wait_is_answered_and_nothing_starts(self):
        d = self.d
        # GPU 1's history, at full speed; then the same daemon again with a
        # slow worker, so that a run lasts seconds.
        d.start()
        for _ in range(HISTORY):
            r = self.post_run(1, "?wait=20")
            self.assertEqual((r.status, r.json()["status"]), (200, "done"), r.body)
        self.assertEqual(d.stop(), 0)
        d.extra_env = {"GPUBENCH_FAKE_DELAY_MS": str(ROW_DELAY_MS)}
        d.start()

        r = d.post("/runs", {"benchmark": "test_hang", "device": 0})
        self.assertEqual(r.status, 202, r.body)
        hung = r.json()["id"]
        d.wait_status(hung, ("running",))
        d.set_mode("slow=1.05")  # what S (and a confirming run) would read
        slow = self.post_run(1).json()["id"]
        d.wait_status(slow, ("running",))

        on_hung = Waiter(d, "GET", "/runs/%s?wait=60" % hung)
        on_queued = Waiter(d, "POST", "/runs?wait=60",
                           {"benchmark": "smem_stride", "params": PARAMS, "device": 0})
        on_slow = Waiter(d, "GET", "/runs/%s?wait=60" % slow)
        waiters = (on_hung, on_queued, on_slow)
        for w in waiters:
            w.start()
        deadline = time.time() + 10
        while d.sql("SELECT count(*) FROM runs WHERE status = 'queued'")[0][0] < 1:
            self.assertLess(time.time(), deadline, "the POST ?wait never queued its run")
            time.sleep(0.05)
        time.sleep(0.5)  # each request parked
        self.assertEqual(d.get("/runs/" + slow).json()["status"], "running",
                         "S must still run at the signal")

        signalled = time.time()
        t0 = time.monotonic()
        d.proc.send_signal(signal.SIGTERM)
        try:
            code = d.proc.wait(GRACE_S + 10)
        except Exception:  # noqa: BLE001
            code = None
        exited = time.monotonic() - t0
        for w in waiters:
            w.join(5)

        # Every request answered, none dropped.
        status, run = on_queued.answer()
        self.assertEqual((status, run["status"]), (202, "queued"), run)
        self.assertIsNone(run["started_at"])
        self.assertLess(on_queued.answered_at - t0, 1.0, "the queued run's wait is answered at once")
        status, run = on_hung.answer()
        self.assertEqual((status, run["id"], run["status"]), (202, hung, "queued"), run)
        self.assertIsNone(run["started_at"], "put back in the queue")
        status, run = on_slow.answer()
        self.assertEqual((status, run["id"], run["status"]), (200, slow, "done"), run)
        for w in waiters:
            self.assertLessEqual(w.answered_at - t0, GRACE_S + 1)

        # Out within the grace and a second, cleanly.
        self.assertIsNotNone(code, "gpubenchd still runs %d s after SIGTERM" % (GRACE_S + 10))
        self.assertLessEqual(exited, GRACE_S + 1.0)
        self.assertEqual(code, 0)
        d.log.close()

        # No run started after the signal, a confirming run included.
        starts = d.sql("SELECT id, started_at FROM runs WHERE started_at IS NOT NULL")
        late = [(i, s) for i, s in starts if s >= iso_ms(signalled)]
        self.assertEqual(late, [], "runs started after SIGTERM at %s" % iso_ms(signalled))
        log = d.read_log()
        after = log[log.rindex("SIGTERM: stopping"):]
        self.assertNotIn(") started", after)
        confirming = d.sql("SELECT status, started_at FROM runs WHERE confirms = '%s'" % slow)
        self.assertEqual(confirming, [("queued", None)], "S's confirming run waits for the restart")
        self.assertEqual(d.sql("SELECT status FROM runs WHERE id = '%s'" % hung), [("queued",)])


if __name__ == "__main__":
    unittest.main()
