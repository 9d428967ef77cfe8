"""Change points and drift through the API (issue 34): made histories
imported (SYNTHETIC runs, test_verdicts.make_run, a run a day) and runs
measured by the worker test double.  A 3% step is one change at its run
(+-2) with its size and one alert of kind change; a method change is no
change; a 0.1%-a-run decline is a drift and one drift alert; GET /changes
filters by host, model and since; /metrics counts them; an acknowledged
step makes the new level the card's baseline for its history verdicts."""
import datetime
import http.server
import json
import os
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402
from test_client import Client  # noqa: E402
from test_verdicts import MODEL, make_run, uuid_of  # noqa: E402

DAY0 = datetime.datetime(2026, 3, 1, 10, 0, 0)


def at_day(run, day, seq):
    """run moved to DAY0 + day, with an id ordered as its time."""
    when = (DAY0 + datetime.timedelta(days=day)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    run["created_at"] = run["started_at"] = run["finished_at"] = when
    run["id"] = "0195%04x-0000-7000-8000-%012d" % (seq // 100000, seq)
    return run


def series(card, levels, host="synth", method=None, start=0):
    """One run a day on card: levels[i] the factor on stride 32's time."""
    runs = []
    for i, level in enumerate(levels):
        r = at_day(make_run(card, 10, shift={32: level}, host=host), i,
                   card * 1000 + start + i)
        if method is not None:
            r["method"] = method[i] if isinstance(method, list) else method
        runs.append(r)
    return runs


class ChangesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Daemon(gpus=0).start()
        method = cls.d.get("/benchmarks").json()
        method = {b["name"]: b for b in method["benchmarks"]}["smem_stride"]["method"]
        # Card 1: 3% slower on stride 32 from its 41st run on.
        cls.step = series(1, [1.0] * 40 + [1.03] * 20)
        # Card 2: 7% faster when its method changed (a new kernel).
        cls.method = series(2, [1.0] * 30 + [0.93] * 30,
                            method=[method - 1] * 30 + [method] * 30)
        # Card 3: 0.1% slower every run, on another host.
        cls.decline = series(3, [1.001 ** i for i in range(90)], host="synth-b")
        # Card 4: steady.
        cls.steady = series(4, [1.0] * 60)
        runs = cls.step + cls.method + cls.decline + cls.steady
        runs.sort(key=lambda r: r["created_at"])
        r = cls.d.post("/runs/import", "".join(json.dumps(x) + "\n" for x in runs))
        assert r.status == 200 and r.json()["imported"] == len(runs), r

    @classmethod
    def tearDownClass(cls):
        assert cls.d.stop() == 0

    def changes(self, card):
        r = self.d.get("/cards/%s/changes" % uuid_of(card))
        self.assertEqual(r.status, 200, r)
        return r.json()["changes"]

    def alerts(self, card, kind):
        return [a for a in self.d.get("/alerts").json()["alerts"]
                if a["card"]["device_uuid"] == uuid_of(card) and a["kind"] == kind]

    def test_step_found_at_its_run_with_its_size(self):
        steps = [c for c in self.changes(1) if c["kind"] == "step"]
        self.assertEqual(len(steps), 1, steps)
        c = steps[0]
        self.assertEqual(c["row"], 32)
        ids = [r["id"] for r in self.step]
        self.assertLessEqual(abs(ids.index(c["run_id"]) - 40), 2, c)
        self.assertAlmostEqual(c["shift"], 0.03, delta=0.01)
        self.assertLess(c["ci_low"], c["shift"])
        self.assertGreater(c["ci_high"], c["shift"])
        self.assertLess(c["p_value"], 1e-8)
        self.assertAlmostEqual(c["level_after"] / c["level_before"], 1.03, delta=0.01)
        self.assertEqual(c["card"]["host"], "synth")
        self.assertEqual(c["key"]["card_model"], MODEL)
        # one alert for the step, not one per run after it
        alerts = self.alerts(1, "change")
        self.assertEqual(len(alerts), 1, alerts)
        self.assertEqual(alerts[0]["state"], "confirmed")
        self.assertEqual(alerts[0]["verdict"], "slower")
        self.assertEqual(alerts[0]["runs"]["detected"], c["run_id"])

    def test_method_change_is_no_change(self):
        self.assertEqual(self.changes(2), [])
        self.assertEqual(self.alerts(2, "change"), [])

    def test_steady_card_has_none(self):
        self.assertEqual(self.changes(4), [])

    def test_decline_is_drift(self):
        cs = self.changes(3)
        self.assertEqual([c for c in cs if c["kind"] == "step"], [])
        drifts = [c for c in cs if c["kind"] == "drift"]
        self.assertGreaterEqual(len(drifts), 1, cs)
        self.assertTrue(all(c["row"] == 32 for c in drifts), drifts)
        self.assertAlmostEqual(drifts[-1]["per_month"], 1.001 ** 30 - 1, delta=0.01)
        self.assertGreater(drifts[-1]["ci_low"], 0)
        self.assertEqual(len(self.alerts(3, "drift")), 1)

    def test_fleet_list_filters(self):
        everything = self.d.get("/changes").json()["changes"]
        self.assertEqual({c["card"]["device_uuid"] for c in everything},
                         {uuid_of(1), uuid_of(3)})
        ats = [c["at"] for c in everything]
        self.assertEqual(ats, sorted(ats, reverse=True))
        b = self.d.get("/changes?host=synth-b").json()["changes"]
        self.assertEqual({c["card"]["device_uuid"] for c in b}, {uuid_of(3)})
        self.assertEqual(self.d.get("/changes?model=nothing").json()["changes"], [])
        self.assertEqual(len(self.d.get("/changes?model=%s" % MODEL.replace(" ", "%20"))
                             .json()["changes"]), len(everything))
        self.assertEqual(self.d.get("/changes?since=2030-01-01").json()["changes"], [])
        r = self.d.get("/changes?since=yesterday")
        self.assertEqual(r.status, 400, r)

    def test_markdown_report(self):
        r = self.d.get("/changes.md?host=synth")
        self.assertEqual(r.status, 200, r)
        self.assertTrue(r.header("Content-Type").startswith("text/markdown"), r)
        text = r.body
        step = [c for c in self.changes(1) if c["kind"] == "step"][0]
        self.assertIn("| step |", text)
        self.assertIn("%+.2f%%" % (100 * step["shift"]), text)
        self.assertIn(step["run_id"], text)
        self.assertNotIn(uuid_of(3), text)  # the drift's card is on synth-b
        self.assertEqual(self.d.get("/changes.md?since=never").status, 400)

    def test_client_lists_them(self):
        gb = Client(self.d)
        rc, out, err = gb("changes")
        self.assertEqual(rc, 0, err)
        self.assertIn("step", out)
        self.assertIn("drift", out)
        self.assertIn(uuid_of(1)[:20], out)
        rc, out, err = gb("changes", "--host", "synth-b")
        self.assertEqual(rc, 0, err)
        self.assertNotIn(uuid_of(1)[:20], out)
        self.assertIn(uuid_of(3)[:20], out)
        rc, out, err = gb("changes", "--since", "2030-01-01")
        self.assertEqual((rc, out), (0, "no change points or drifts found\n"), err)
        rc, out, err = gb("changes", "--since", "soon")
        self.assertEqual(rc, 3)
        self.assertIn("since", err)

    def test_metrics_count_recent_changes(self):
        # the made runs are in 2026-03: outside the last 30 days unless
        # the clock says otherwise; the family is there either way
        text = self.d.get("/metrics").body
        self.assertIn("# TYPE gpubench_changes_recent gauge", text)


class AckRebaselinesTest(unittest.TestCase):
    """Measured runs on the test double's card: a 5% step, one alert; its
    acknowledgement makes the history verdicts start at the step."""

    def setUp(self):
        self.d = Daemon(args=["--confirm-runs", "0"]).start()
        self.addCleanup(lambda: self.assertEqual(self.d.stop(), 0))

    def run_one(self):
        r = self.d.post("/runs?wait=20", {"benchmark": "smem_stride",
                                          "params": {"strides": [1, 32], "samples": 5}})
        self.assertEqual(r.status, 200, r.body)
        self.assertEqual(r.json()["status"], "done", r.body)
        return r.json()

    def test_one_alert_per_step_and_ack_rebaselines(self):
        before = [self.run_one()["id"] for _ in range(12)]
        self.d.set_mode("slow=1.05")
        after = []
        for _ in range(10):
            self.d.set_mode("slow=1.05")
            after.append(self.run_one()["id"])
        uuid = self.d.get("/runs/%s" % before[0]).json()["device"]["uuid"]
        steps = [c for c in self.d.get("/cards/%s/changes" % uuid).json()["changes"]
                 if c["kind"] == "step"]
        self.assertGreaterEqual(len(steps), 1, steps)
        self.assertEqual(steps[-1]["run_id"], after[0])
        alerts = [a for a in self.d.get("/alerts").json()["alerts"] if a["kind"] == "change"]
        self.assertEqual(len(alerts), len(steps))
        # before the acknowledgement the history still holds the old level
        last = self.d.get("/runs/%s" % after[-1]).json()
        self.assertTrue(set(last["verdicts"]["history"]["runs"]) & set(before))
        r = self.d.post("/alerts/%d/ack" % alerts[-1]["id"], {"reason": "new driver"})
        self.assertEqual(r.status, 200, r)
        self.d.set_mode("slow=1.05")
        run = self.run_one()
        history = run["verdicts"]["history"]["runs"]
        self.assertTrue(history)
        self.assertFalse(set(history) & set(before), history)
        self.assertTrue(set(history) <= set(after), history)


class Hook(http.server.BaseHTTPRequestHandler):
    """An --alert-webhook receiver: each post's path and alert kept."""
    posts = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        Hook.posts.append((self.path, body))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


class HubTest(unittest.TestCase):
    """A hub that pulls a node's runs finds the node's card's step too, and
    raises its one alert (the series are stepped as pulled runs are
    stored, as for every run); the node (an import) and the hub (a pull)
    each post their one change alert to their webhook."""

    def test_pulled_runs_find_the_step(self):
        Hook.posts = []
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hook)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        hook = "http://127.0.0.1:%d" % server.server_address[1]
        node = Daemon(gpus=0, args=["--alert-webhook", hook + "/node"]).start()
        self.addCleanup(lambda: self.assertEqual(node.stop(), 0))
        runs = series(6, [1.0] * 30 + [0.95] * 15)
        r = node.post("/runs/import", "".join(json.dumps(x) + "\n" for x in runs))
        self.assertEqual(r.status, 200, r)
        hub = Daemon(gpus=0, args=["--peer", "http://127.0.0.1:%d" % node.port,
                                   "--peer-interval", "1", "--alert-webhook", hook + "/hub"]).start()
        self.addCleanup(lambda: self.assertEqual(hub.stop(), 0))
        deadline = time.time() + 30
        while time.time() < deadline and (hub.sql("SELECT count(*) FROM runs") != [(len(runs),)]
                                          or len(Hook.posts) < 2):
            time.sleep(0.2)
        at_node = node.get("/cards/%s/changes" % uuid_of(6)).json()["changes"]
        at_hub = hub.get("/cards/%s/changes" % uuid_of(6)).json()["changes"]
        self.assertEqual(len(at_node), 1, at_node)
        self.assertEqual([(c["run_id"], c["shift"]) for c in at_hub],
                         [(c["run_id"], c["shift"]) for c in at_node])
        self.assertEqual(at_hub[0]["run_id"], runs[30]["id"])
        alerts = [a for a in hub.get("/alerts").json()["alerts"] if a["kind"] == "change"]
        self.assertEqual(len(alerts), 1, alerts)
        self.assertEqual(alerts[0]["verdict"], "faster")
        time.sleep(0.5)  # a second post of either would have come by now
        self.assertEqual(sorted((path, a["kind"], a["runs"]["detected"]) for path, a in Hook.posts),
                         [("/hub", "change", runs[30]["id"]), ("/node", "change", runs[30]["id"])])


class KeepSamplesTest(unittest.TestCase):
    """--keep-samples: old runs lose their samples after a database check,
    their medians stay; a card's newest --history-runs runs stay whole."""

    def test_old_samples_dropped_medians_kept(self):
        d = Daemon(gpus=0, args=["--keep-samples", "1d", "--db-check-delay", "0",
                                 "--db-check-interval", "1", "--history-runs", "8"]).start()
        self.addCleanup(lambda: self.assertEqual(d.stop(), 0))
        runs = series(5, [1.0] * 20)
        r = d.post("/runs/import", "".join(json.dumps(x) + "\n" for x in runs))
        self.assertEqual(r.status, 200, r)
        deadline = time.time() + 30
        while time.time() < deadline and "lost their samples" not in d.read_log():
            time.sleep(0.2)
        self.assertIn("lost their samples", d.read_log())
        # the VACUUM's copy of the file is not left in the WAL beside it
        wal = d.db + "-wal"
        self.assertLess(os.path.getsize(wal) if os.path.exists(wal) else 0,
                        os.path.getsize(d.db) // 4)
        for i, run in enumerate(runs):
            got = d.get("/runs/%s" % run["id"]).json()
            for row, made in zip(got["results"]["rows"], run["results"]["rows"]):
                self.assertAlmostEqual(row["median_ms"], made["median_ms"])
                if i < 12:
                    self.assertNotIn("samples", row)
                else:  # the card's newest 8 are its history: whole
                    self.assertEqual(len(row["samples"]), len(made["samples"]))


if __name__ == "__main__":
    unittest.main()
