"""A confirmed alert's webhook post survives the daemon (issue 14, "nothing
lost on a crash"): the daemon is killed (SIGKILL) while its posts are
being refused and retried, and the next start posts them.  Each post's
outcome is kept with the alert (alerts.webhook: delivered, failed, none),
so a delivered alert is never posted twice and an alert confirmed with no
webhook configured is not posted by a later daemon that has one.  The
worker is the test double (tests/fake_worker.c); --confirm-runs 0
confirms an alert at once."""
import http.server
import json
import os
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402

BODY = {"benchmark": "smem_stride", "params": {"strides": [1, 2, 32]}}


class Receiver(http.server.BaseHTTPRequestHandler):
    """Refuses (500) while `refuse` is set; records every post's alert id
    and the answer it got."""
    refuse = True
    posts = []

    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(n))
        status = 500 if Receiver.refuse else 200
        Receiver.posts.append((body["id"], status))
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


class WebhookAcrossRestartTest(unittest.TestCase):
    def setUp(self):
        Receiver.refuse, Receiver.posts = True, []
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        self.hook = "http://127.0.0.1:%d/hook" % server.server_address[1]

    def confirm_three(self, d):
        """Two runs at the card's pace, then one 5% slower on every row:
        three alerts confirmed at once.  Their ids."""
        for mode in ["normal"] * 8 + ["slow=1.05"]:  # 8: a history to judge by
            d.set_mode(mode)
            self.assertEqual(d.post("/runs?wait=20", BODY).json()["status"], "done")
        ids = sorted(a["id"] for a in d.get("/alerts").json()["alerts"]
                     if a["state"] == "confirmed")
        self.assertEqual(len(ids), 3)
        return ids

    def outcomes(self, d):
        return dict(d.sql("SELECT id, webhook FROM alerts"))

    def delivered(self):
        return sorted(i for i, s in Receiver.posts if s == 200)

    def wait_for(self, cond, what, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if cond():
                return
            time.sleep(0.1)
        self.fail("never: %s (posts %s)" % (what, Receiver.posts))

    def test_posts_refused_when_killed_are_posted_after_the_restart(self):
        d = Daemon(args=["--alert-webhook", self.hook, "--history-runs", "8",
                         "--confirm-runs", "0"]).start()
        self.addCleanup(d.stop)
        ids = self.confirm_three(d)
        self.wait_for(lambda: len(Receiver.posts) >= 1, "a refused post")
        d.kill()  # between the first alert's tries; two more still queued
        self.assertEqual(self.outcomes(d), {i: None for i in ids})
        Receiver.refuse = False
        d.set_mode("normal")
        d.start()
        self.wait_for(lambda: self.delivered() == ids, "the three alerts delivered")
        self.wait_for(lambda: set(self.outcomes(d).values()) == {"delivered"},
                      "the posts recorded as delivered")
        # delivered once: another restart posts nothing again
        n = len(Receiver.posts)
        d.stop()
        d.start()
        time.sleep(1.0)
        self.assertEqual(len(Receiver.posts), n, Receiver.posts)
        self.assertIn("not posted before the restart: posting them now", d.read_log())

    def test_alerts_confirmed_without_a_webhook_are_not_posted_later(self):
        d = Daemon(args=["--history-runs", "8", "--confirm-runs", "0"]).start()
        self.addCleanup(d.stop)
        ids = self.confirm_three(d)
        self.wait_for(lambda: self.outcomes(d) == {i: "none" for i in ids},
                      "the alerts recorded as told to no webhook")
        d.stop()
        Receiver.refuse = False
        d.args += ["--alert-webhook", self.hook]
        d.start()
        time.sleep(1.0)
        self.assertEqual(Receiver.posts, [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
