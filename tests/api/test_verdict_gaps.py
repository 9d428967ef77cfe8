"""Issue 14, what the audit of the verdicts found untested or missing: a
pinned baseline by a card, its comparability key and a date range
(like_run), verdicts in cycles where a card's clock was held down, and the
alert webhook retried with back-off without holding up a run.

The fleet is SYNTHETIC (test_verdicts.make_run: seeded lognormal samples,
meta.synthetic true), imported through POST /runs/import; the worker is the
test double (tests/fake_worker.c)."""
import http.server
import json
import os
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402
from test_api import ErrorAssertions  # noqa: E402
from test_verdicts import make_run, uuid_of  # noqa: E402


def import_runs(d, runs):
    r = d.post("/runs/import", "".join(json.dumps(x) + "\n" for x in runs))
    assert r.status == 200 and r.json()["imported"] == len(runs), r


class BaselineByKeyTest(ErrorAssertions, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Daemon(gpus=0).start()
        # Card 1 runs two keys: three strides, and two; card 2 the first.
        cls.three = [make_run(1, day) for day in (10, 11, 12, 20)]
        cls.two = [make_run(1, day, strides=(1, 2)) for day in (10, 11, 12, 20)]
        cls.other = [make_run(2, day) for day in (10, 11)]
        import_runs(cls.d, cls.three + cls.two + cls.other)

    @classmethod
    def tearDownClass(cls):
        assert cls.d.stop() == 0

    def ids(self, runs, upto_day=31):
        return sorted((r["id"] for r in runs if int(r["created_at"][8:10]) <= upto_day),
                      reverse=True)

    def test_like_run_pins_one_card_one_key_one_range(self):
        r = self.d.post("/baselines", {"name": "two-strides-jan", "like_run": self.two[0]["id"],
                                       "until": "2026-01-15"})
        self.assertEqual(r.status, 201, r)
        b = r.json()
        self.assertEqual(b["runs"], self.ids(self.two, 15))  # not the other key, card, days
        self.assertEqual(b["spec"]["like_run"], self.two[0]["id"])
        r = self.d.post("/baselines", {"name": "three-strides", "like_run": self.three[1]["id"]})
        self.assertEqual(r.json()["runs"], self.ids(self.three), r)
        # judged by name: the whole baseline is of one key, none left out
        a = self.d.get("/compare?baseline=two-strides-jan&candidate=runs:" +
                       self.two[3]["id"]).json()
        self.assertEqual(a["baseline"]["excluded_other_key"], 0)
        self.assertEqual(a["baseline"]["n_runs"], 3)
        self.assertEqual(a["comparable"], True, a)

    def test_like_run_bad_input(self):
        self.assertError(self.d.post("/baselines", {"name": "x", "like_run": "nosuchrun"}),
                         400, "not_found", "like_run")
        self.assertError(self.d.post("/baselines", {"name": "x", "like_run": self.two[0]["id"],
                                                    "until": "2026-01-01"}),
                         400, "not_found", "like_run")
        self.assertError(self.d.post("/baselines", {"name": "x", "like_run": self.two[0]["id"],
                                                    "card": uuid_of(1)}),
                         400, "out_of_bounds", "runs")
        self.assertError(self.d.post("/baselines", {"name": "x", "like_run": self.two[0]["id"],
                                                    "benchmark": "smem_stride"}),
                         400, "out_of_bounds", "runs")


class CyclesTest(unittest.TestCase):
    """A card whose clock was held 5% low takes 5% longer: slower in time,
    the same in cycles; without clocks there is no cycles verdict."""

    def test_held_clock_is_slower_in_time_same_in_cycles(self):
        d = Daemon(gpus=0).start()
        self.addCleanup(d.stop)
        held = 1980.0 / 1.05
        runs = ([make_run(1, day, spread_evenly=True) for day in (10, 11)] +
                [make_run(2, day, shift={1: 1.05, 2: 1.05, 32: 1.05}, clock=held,
                          spread_evenly=True) for day in (10, 11)] +
                [make_run(3, day, clock=None, spread_evenly=True) for day in (10, 11)])
        import_runs(d, runs)
        a = d.get("/compare?baseline=card:%s&candidate=card:%s" % (uuid_of(1), uuid_of(2))).json()
        self.assertEqual(a["verdict"], "slower", a)
        for row in a["rows"]:
            self.assertEqual(row["verdict"], "slower", row)
            self.assertEqual(row["cycles"]["verdict"], "same", row)
            self.assertAlmostEqual(row["cycles"]["shift"], 0.0, delta=0.003)
            self.assertEqual(row["cycles"]["n_candidate"], 40)
        b = d.get("/compare?baseline=card:%s&candidate=card:%s" % (uuid_of(1), uuid_of(3))).json()
        self.assertEqual(b["verdict"], "same", b)
        self.assertTrue(all(row["cycles"] is None for row in b["rows"]), b["rows"])


class FlakyReceiver(http.server.BaseHTTPRequestHandler):
    """Answers 500 to its first two posts, the first after 3 s, then 200."""
    posts = []

    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(n))
        FlakyReceiver.posts.append((time.time(), body["id"]))
        if len(FlakyReceiver.posts) == 1:
            time.sleep(3)
        self.send_response(500 if len(FlakyReceiver.posts) <= 2 else 200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


class WebhookRetryTest(unittest.TestCase):
    def test_retried_with_back_off_and_never_holding_a_run(self):
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FlakyReceiver)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        hook = "http://127.0.0.1:%d/hook" % server.server_address[1]
        d = Daemon(args=["--alert-webhook", hook, "--history-runs", "8",
                         "--confirm-runs", "0"]).start()
        self.addCleanup(d.stop)
        body = {"benchmark": "smem_stride", "params": {"strides": [1, 2, 32]}}
        for mode in ["normal"] * 8:  # a history to judge by (common/shift.h)
            d.set_mode(mode)
            self.assertEqual(d.post("/runs?wait=20", body).json()["status"], "done")
        d.set_mode("slow=1.05")  # three rows slower: three alerts confirmed at once
        t0 = time.time()
        self.assertEqual(d.post("/runs?wait=20", body).json()["status"], "done")
        nxt = d.post("/runs?wait=20", body).json()
        held = time.time() - t0
        self.assertEqual(nxt["status"], "done")
        # the receiver was still sitting on the first post: the runs did not wait
        self.assertLess(held, 2.5, "runs held up by the webhook: %.1f s" % held)
        alerts = [a for a in d.get("/alerts").json()["alerts"] if a["state"] == "confirmed"]
        self.assertEqual(len(alerts), 3)
        deadline = time.time() + 20
        while len(FlakyReceiver.posts) < 5 and time.time() < deadline:
            time.sleep(0.1)
        posts = FlakyReceiver.posts
        self.assertEqual(len(posts), 5, posts)  # 2 refused, then the three alerts
        first = posts[0][1]
        self.assertEqual([p[1] for p in posts[:3]], [first] * 3)  # the same alert, again
        # back-off: 1 s after the first failure, then 2 s after the second
        self.assertGreaterEqual(posts[2][0] - posts[1][0], 1.9)
        self.assertEqual(sorted(p[1] for p in posts[2:]), sorted(a["id"] for a in alerts))
        text = d.get("/metrics").body
        self.assertIn('gpubench_alert_webhook_posts_total{result="delivered"} 3', text)
        self.assertIn('gpubench_alert_webhook_posts_total{result="failed"} 0', text)
        self.assertIn("trying again", d.read_log())


if __name__ == "__main__":
    unittest.main(verbosity=2)
