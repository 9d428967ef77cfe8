"""Runs judged at their end, confirming runs, alerts and the fleet view
(issue 14, part B), through the API.  The fleet is SYNTHETIC: cards made up
here (meta.synthetic true) and imported beside the worker test double's one
card (tests/fake_worker.c, whose numbers are synthetic too; its mode
slow=F makes its times F times longer, once:MODE for one job only)."""
import http.server
import json
import os
import random
import re
import shutil
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402

PARAMS = {"strides": [1, 2, 32]}
RNG = random.Random(1414)


class Receiver(http.server.BaseHTTPRequestHandler):
    bodies = []

    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        Receiver.bodies.append(json.loads(self.rfile.read(n)))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def synthetic_card(template, card, factor):
    """A made-up run of template's request on another card of its model:
    its rows' times times factor, with 0.2% noise."""
    run = json.loads(json.dumps(template))
    run["id"] = "01900000-0000-7000-8000-%012d" % card
    run["host"] = "synth"
    run["device"] = {"index": 0, "uuid": "GPU-5e1ec7ed-%04d-4000-8000-000000000000" % card,
                     "name": template["device"]["name"]}
    run["meta"]["synthetic"] = True
    for row in run["results"]["rows"]:
        f = factor * (1 + RNG.gauss(0, 0.002))
        row["samples"] = [x * f for x in row["samples"]]
        for k in ("median_ms", "min_ms", "max_ms"):
            row[k] *= f
    for k in ("origin", "seq", "url", "queue_position", "verdicts", "confirms", "validity"):
        run.pop(k, None)
    return run


class AlertsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        hook = "http://127.0.0.1:%d/hook" % cls.server.server_address[1]
        cls.d = Daemon(args=["--alert-webhook", hook, "--history-runs", "8",
                                  "--confirm-runs", "1"]).start()
        cls.first = cls.run_once("normal")
        # Seven other cards of the model: six alike, one 10% slow.
        fleet = [synthetic_card(cls.first, c, 1.10 if c == 7 else 1.0) for c in range(1, 8)]
        r = cls.d.post("/runs/import", "".join(json.dumps(x) + "\n" for x in fleet))
        assert r.status == 200 and r.json()["imported"] == len(fleet), r.body
        # a history long enough to judge by (GB_HISTORY_MIN_RUNS, common/shift.h)
        cls.earlier = [cls.first] + [cls.run_once("normal") for _ in range(7)]
        cls.second = cls.run_once("normal")

    @classmethod
    def tearDownClass(cls):
        assert cls.d.stop() == 0
        cls.server.shutdown()

    @classmethod
    def run_once(cls, mode):
        cls.d.set_mode(mode)
        r = cls.d.post("/runs?wait=20", {"benchmark": "smem_stride", "params": PARAMS})
        assert r.status == 200, r.body
        run = r.json()
        assert run["status"] == "done", run
        return run

    def confirmations_of(self, run_id):
        runs = self.d.get("/runs?limit=100").json()["runs"]
        return [r for r in runs if self.d.get("/runs/" + r["id"]).json().get("confirms") == run_id]

    def alerts(self):
        return self.d.get("/alerts").json()["alerts"]

    def wait_alerts(self, pred, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            a = self.alerts()
            if pred(a):
                return a
            time.sleep(0.1)
        raise AssertionError("alerts never as expected: %s" % json.dumps(self.alerts(), indent=1))

    def test_1_verdicts_stored_at_run_end(self):
        run = self.d.get("/runs/" + self.second["id"]).json()
        v = run["verdicts"]
        self.assertIs(v["judged"], True)
        self.assertIsNone(v["confirms"])
        self.assertEqual(v["history"]["runs"], [r["id"] for r in reversed(self.earlier)])
        self.assertEqual(v["history"]["verdict"], "same")
        self.assertEqual([r["key"] for r in v["history"]["rows"]], [1, 2, 32])
        self.assertEqual(v["fleet"]["cards"], 8)
        self.assertEqual(v["fleet"]["outlier_rows"], [])
        self.assertTrue(all(abs(r["z"]) < 3.5 for r in v["fleet"]["rows"]))
        # stored with the run, not made up when asked
        self.assertEqual(self.d.sql("SELECT count(*) FROM run_verdicts WHERE run_id = '%s'"
                                    % run["id"]), [(1,)])
        # the first run had no history and a fleet of one
        first = self.d.get("/runs/" + self.first["id"]).json()["verdicts"]
        self.assertIsNone(first["history"])
        self.assertEqual(first["fleet"]["cards"], 1)
        self.assertTrue(all(r["z"] is None for r in first["fleet"]["rows"]))
        # imported runs are not judged here
        self.assertIsNone(self.d.get("/runs/01900000-0000-7000-8000-000000000001").json()["verdicts"])

    def test_2_fleet_outlier_first(self):
        r = self.d.get("/fleet?benchmark=smem_stride")
        self.assertEqual(r.status, 200, r.body)
        groups = r.json()["groups"]
        self.assertEqual(len(groups), 1)
        g = groups[0]
        self.assertEqual(g["key"]["card_model"], self.first["device"]["name"])
        self.assertEqual(len(g["cards"]), 8)
        top = g["cards"][0]
        self.assertEqual(top["device_uuid"], "GPU-5e1ec7ed-0007-4000-8000-000000000000")
        self.assertIs(top["outlier"], True)
        self.assertTrue(all(c["z"] > 3.5 and c["outlier"] for c in top["rows"]))
        self.assertTrue(all(not c["outlier"] for c in g["cards"][1:]))
        for row in g["rows"]:
            self.assertEqual(row["cards"], 8)
            self.assertGreater(row["mad_ms"], 0)
        self.assertEqual(self.d.get("/fleet").status, 400)
        self.assertEqual(self.d.get("/fleet?benchmark=nope").json()["groups"], [])

    def test_3_life_cycle(self):
        before = len(Receiver.bodies)
        slow = self.run_once("slow=1.05")
        v = self.d.get("/runs/" + slow["id"]).json()["verdicts"]
        self.assertEqual(v["history"]["verdict"], "slower")
        self.assertEqual(v["fleet"]["outlier_rows"], [1, 2, 32])
        # detected, and one confirming run queued on the same card
        conf = self.confirmations_of(slow["id"])
        self.assertEqual(len(conf), 1)
        self.assertEqual(conf[0]["device"]["uuid"], slow["device"]["uuid"])
        self.assertEqual(conf[0]["params"], slow["params"])
        done = self.d.wait_status(conf[0]["id"], ("done",))
        self.assertEqual(done["verdicts"]["confirms"], slow["id"])
        # the confirmation repeated it: six alerts (history and fleet, three rows) confirmed
        alerts = self.wait_alerts(lambda a: sum(x["state"] == "confirmed" for x in a) == 6)
        mine = [a for a in alerts if a["runs"]["detected"] == slow["id"]]
        self.assertEqual(sorted((a["kind"], a["row"]) for a in mine),
                         sorted((k, s) for k in ("history", "fleet") for s in (1, 2, 32)))
        for a in mine:
            self.assertEqual(a["runs"]["confirmed"], conf[0]["id"])
            self.assertEqual(a["card"]["device_uuid"], slow["device"]["uuid"])
            self.assertEqual(a["verdict"], "slower" if a["kind"] == "history" else "outlier")
            self.assertAlmostEqual(a["shift"], 0.05, delta=0.01)
        # a confirmation never queues another
        time.sleep(0.5)
        self.assertEqual(self.confirmations_of(conf[0]["id"]), [])
        # the webhook got each confirmed alert
        deadline = time.time() + 10
        while len(Receiver.bodies) < before + 6 and time.time() < deadline:
            time.sleep(0.1)
        got = Receiver.bodies[before:]
        self.assertEqual(sorted(b["id"] for b in got), sorted(a["id"] for a in mine))
        self.assertTrue(all(b["state"] == "confirmed" for b in got))

        # /metrics: a gauge per confirmed alert, the fleet z per row of
        # this daemon's own card only (issue 33's series budget: the seven
        # imported cards have their outlier rows, not their z)
        text = self.d.get("/metrics").body
        open_lines = [l for l in text.splitlines() if l.startswith("gpubench_alert_open{")]
        self.assertEqual(len(open_lines), 6)
        z = [l for l in text.splitlines() if l.startswith("gpubench_fleet_robust_z{")]
        self.assertEqual(len(z), 1 * 3)
        self.assertTrue(all('uuid="%s"' % slow["device"]["uuid"] in l for l in z), z)
        outl = [l for l in text.splitlines() if l.startswith("gpubench_card_outlier_rows{")]
        self.assertEqual(len(outl), 8)
        self.assertIn('gpubench_alert_webhook_posts_total{result="delivered"} 6', text)
        for l in z + open_lines:
            self.assertRegex(l, r'^[a-z_]+\{([a-z_]+="[^"]*",?)+\} -?[0-9.e+-]+$')
        if shutil.which("promtool"):
            p = subprocess.run(["promtool", "check", "metrics"], input=text.encode(),
                               capture_output=True)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

        # acknowledged with a reason (write access, like POST /runs)
        hist = [a for a in mine if a["kind"] == "history"]
        r = self.d.post("/alerts/%d/ack" % hist[0]["id"], {"reason": "HBM stack swapped"})
        self.assertEqual(r.status, 200, r.body)
        self.assertEqual(r.json()["state"], "acknowledged")
        self.assertEqual(r.json()["reason"], "HBM stack swapped")
        self.assertEqual(self.d.post("/alerts/%d/ack" % hist[0]["id"], {"reason": "x"}).status, 409)
        self.assertEqual(self.d.post("/alerts/%d/ack" % hist[1]["id"], {}).status, 400)
        self.assertEqual(self.d.post("/alerts/999999/ack", {"reason": "x"}).status, 404)

        # back to normal: the fleet alerts clear at once; the history ones
        # once the card's last two runs are normal again and one more is same
        self.run_once("normal")
        alerts = {a["id"]: a for a in self.alerts()}
        for a in mine:
            if a["kind"] == "fleet":
                self.assertEqual(alerts[a["id"]]["state"], "cleared")
        self.run_once("normal")
        last = self.run_once("normal")
        self.assertEqual(self.d.get("/runs/" + last["id"]).json()["verdicts"]["history"]["verdict"],
                         "same")
        alerts = {a["id"]: a for a in self.alerts()}
        for a in mine:
            self.assertEqual(alerts[a["id"]]["state"], "cleared", alerts[a["id"]])
        self.assertEqual(alerts[hist[0]["id"]]["reason"], "HBM stack swapped")
        text = self.d.get("/metrics").body
        self.assertNotIn("gpubench_alert_open{", text)

    def test_4_not_repeated_clears(self):
        for _ in range(8):
            self.run_once("normal")
        slow = self.run_once("once:slow=1.05")
        conf = self.confirmations_of(slow["id"])
        self.assertEqual(len(conf), 1)
        self.d.wait_status(conf[0]["id"], ("done",))
        alerts = [a for a in self.wait_alerts(
            lambda a: all(x["state"] == "cleared" for x in a if x["runs"]["detected"] == slow["id"]))
            if a["runs"]["detected"] == slow["id"]]
        self.assertEqual(len(alerts), 6)
        for a in alerts:
            self.assertEqual(a["reason"], "not repeated by its confirming run")
            self.assertIsNone(a["runs"]["confirmed"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
