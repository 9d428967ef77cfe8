"""Runs stored before the change-point series (issue 34, migration 0022)
are replayed into them at start.  A store is made old-shaped: a 3%-step
history and a 0.1%-a-run decline imported, then the series, the changes and
their alerts removed and the schema put back before 0022, as a store of
runs from before 0018 is once 0018-0021 have run (empty series).  Started
again, the daemon replays every run in pages (logged), finds the step at
its run and the drift, opens no alert for that history, and a further
start replays nothing."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402
from test_changes import series  # noqa: E402
from test_verdicts import uuid_of  # noqa: E402

import json  # noqa: E402

BEFORE_0022 = 21  # PRAGMA user_version once 0001-0021 have run


class ChangeReplayTest(unittest.TestCase):
    def test_old_store_replayed(self):
        d = Daemon(gpus=0).start()
        step = series(1, [1.0] * 40 + [1.03] * 20)
        decline = series(3, [1.001 ** i for i in range(90)], host="synth-b")
        runs = sorted(step + decline, key=lambda r: r["created_at"])
        r = d.post("/runs/import", "".join(json.dumps(x) + "\n" for x in runs))
        self.assertEqual(r.status, 200, r)
        before = d.get("/changes").json()["changes"]
        self.assertTrue(any(c["kind"] == "step" for c in before), before)
        self.assertEqual(d.stop(), 0)

        # old-shaped: no series, no changes, no change or drift alerts
        import sqlite3
        con = sqlite3.connect(d.db)
        con.executescript("DELETE FROM change_series; DELETE FROM changes; "
                          "DELETE FROM alerts WHERE kind IN ('change', 'drift'); "
                          "DROP TABLE change_replay; PRAGMA user_version = %d;" % BEFORE_0022)
        con.close()
        self.assertEqual(d.sql("SELECT count(*) FROM change_series"), [(0,)])

        d.start()
        try:
            with open(d.log_path) as f:
                log = f.read()
            self.assertIn("change series: replaying up to %d stored run(s)" % len(runs), log)
            self.assertIn("change series: %d run(s) replayed: done" % len(runs), log)
            cs = d.get("/cards/%s/changes" % uuid_of(1)).json()["changes"]
            steps = [c for c in cs if c["kind"] == "step"]
            self.assertEqual(len(steps), 1, cs)
            ids = [x["id"] for x in step]
            self.assertLessEqual(abs(ids.index(steps[0]["run_id"]) - 40), 2, steps)
            self.assertAlmostEqual(steps[0]["shift"], 0.03, delta=0.01)
            drifts = d.get("/cards/%s/changes" % uuid_of(3)).json()["changes"]
            self.assertTrue(drifts and all(c["kind"] == "drift" for c in drifts), drifts)
            # the same changes as when the runs were first stored
            self.assertEqual(sorted((c["kind"], c["run_id"]) for c in before),
                             sorted((c["kind"], c["run_id"])
                                    for c in d.get("/changes").json()["changes"]))
            # history: no alert opened by the replay
            alerts = [a for a in d.get("/alerts").json()["alerts"]
                      if a["kind"] in ("change", "drift")]
            self.assertEqual(alerts, [])
            self.assertEqual(d.sql("SELECT count(*) FROM change_replay"), [(0,)])
            n_series = d.sql("SELECT count(*) FROM change_series")[0][0]
            self.assertGreaterEqual(n_series, 2)
        finally:
            self.assertEqual(d.stop(), 0)
        # a further start: nothing to replay, nothing found twice
        d.start()
        try:
            with open(d.log_path) as f:
                self.assertEqual(f.read().count("replaying up to"), 1)
            self.assertEqual(len(d.get("/changes").json()["changes"]), len(before))
        finally:
            self.assertEqual(d.stop(), 0)


if __name__ == "__main__":
    unittest.main()
