"""A healthy card's ordinary run-to-run swing raises no alert (issue 21).

On one idle, healthy H200 eight alternating smem_stride runs of the
nightly health form (samples 5, quiet_wait_s 5) and a user's default form
(samples 20), one history since `samples` and `quiet_wait_s` left the key,
moved 1.5-3% from run to run on the ~1 ms rows while samples within a run
sat far tighter; judged by the pooled samples of a one-run history, stride
33 was `slower`, its confirming run confirmed it, and a healthy card got a
confirmed alert.  Here the fake worker replays those very runs
(data/h200_alternating_smem_runs.ndjson, oldest first; its replay=K mode
advances by itself, so the confirming run that today's main queues gets
the H200's real confirming run): no alert is confirmed, a short history
says too_few_runs with its counts, and a card made 10% slower after
enough history still raises an alert and confirms it."""
import json
import os
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                    "h200_alternating_smem_runs.ndjson")
HEALTH = {"strides": [1, 2, 32, 33], "samples": 5, "quiet_wait_s": 5}
DEFAULT = {"strides": [1, 2, 32, 33]}


def recorded():
    """The H200's runs, oldest first (the export lists the newest first),
    its confirming run among them: the replay gives that one to a
    confirming run only if the daemon queues one."""
    with open(DATA) as f:
        runs = [json.loads(line) for line in f]
    return sorted(runs, key=lambda r: r["created_at"])


class HistorySpreadTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        replay = os.path.join(self.tmp.name, "oldest_first.ndjson")
        with open(replay, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in recorded())
        self.d = Daemon(env={"GPUBENCH_FAKE_REPLAY": replay}).start()
        self.addCleanup(lambda: self.assertEqual(self.d.stop(), 0))

    def post(self, params):
        r = self.d.post("/runs?wait=20", {"benchmark": "smem_stride", "params": params})
        self.assertEqual(r.status, 200, r.body)
        self.assertEqual(r.json()["status"], "done", r.body)
        return r.json()

    def settle(self):
        """Waits until no run is queued or running (confirming runs)."""
        deadline = time.time() + 30
        while time.time() < deadline:
            busy = self.d.sql("SELECT count(*) FROM runs WHERE status IN ('queued', 'running')")
            if busy == [(0,)]:
                return
            time.sleep(0.1)
        self.fail("runs still queued or running")

    def replay_h200(self):
        """The H200's probe: four pairs of health and default runs."""
        runs = []
        self.d.set_mode("replay=0")
        for _ in range(4):
            for params in (HEALTH, DEFAULT):
                runs.append(self.post(params))
                self.settle()
        return runs

    def test_h200_swing_raises_no_alert(self):
        runs = self.replay_h200()
        # the replay is the H200's data: stride 33's medians moved > 1.4%
        medians = [r["results"]["rows"][3]["median_ms"] for r in recorded()]
        self.assertGreater(max(medians) / min(medians) - 1, 0.014)
        alerts = self.d.get("/alerts").json()["alerts"]
        self.assertEqual([a for a in alerts if a["state"] == "confirmed" or
                          a["confirmed_at"] is not None], [], alerts)
        self.assertEqual(alerts, [], "a swing of a healthy card opened alerts")
        # a short history says so, with how many runs it has and needs
        for i, run in enumerate(runs[1:], start=1):
            h = self.d.get("/runs/" + run["id"]).json()["verdicts"]["history"]
            self.assertEqual(len(h["runs"]), i)
            self.assertIs(h["too_few_runs"], True)
            self.assertEqual(h["verdict"], "too_few_runs")
            self.assertGreater(h["runs_needed"], i)
            for row in h["rows"]:
                self.assertEqual(row["verdict"], "too_few_runs")
                self.assertEqual(row["history_runs"], i)
        self.assertEqual(self.d.sql("SELECT count(*) FROM runs WHERE confirms IS NOT NULL"),
                         [(0,)])

    def test_ten_percent_slower_after_enough_history_is_confirmed(self):
        runs = self.replay_h200()
        needed = self.d.get("/runs/" + runs[-1]["id"]).json()["verdicts"]["history"][
            "runs_needed"]
        # more of the card's healthy runs, replayed on, until the last one
        # has a history long enough
        while len(runs) <= needed:
            runs.append(self.post(DEFAULT))
            self.settle()
        h = self.d.get("/runs/" + runs[-1]["id"]).json()["verdicts"]["history"]
        self.assertIs(h["too_few_runs"], False)
        self.assertNotIn("slower", [r["verdict"] for r in h["rows"]], h)
        self.assertEqual(self.d.get("/alerts").json()["alerts"], [])
        # the card gets 10% slower: its next run and its confirming run
        self.d.set_mode("replay=%d@1.10" % len(runs))
        slow = self.post(DEFAULT)
        self.settle()
        h = self.d.get("/runs/" + slow["id"]).json()["verdicts"]["history"]
        self.assertIs(h["too_few_runs"], False)
        self.assertEqual(h["verdict"], "slower", h)
        for row in h["rows"]:
            self.assertEqual(row["verdict"], "slower", row)
            self.assertGreater(row["z"], 3.5)
        alerts = self.d.get("/alerts").json()["alerts"]
        self.assertEqual(len(alerts), 4, alerts)
        for a in alerts:
            self.assertEqual(a["kind"], "history")
            self.assertEqual(a["state"], "confirmed", a)
            self.assertEqual(a["runs"]["detected"], slow["id"])
            self.assertAlmostEqual(a["shift"], 0.10, delta=0.03)


if __name__ == "__main__":
    unittest.main(verbosity=2)
