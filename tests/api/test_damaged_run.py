"""A damaged row is one damaged row (issue 31), with a real gpubenchd, the
worker test double and a database damaged the way the issue measured it:
one run's stored results cut short (substr(results, 1, 200)), a value
SQLite reads without complaint but that no longer is JSON.

- GET /runs/ID serves that run marked damaged ("damaged": true,
  "damaged_columns": ["results"], results null), every other field as
  stored; the list, the NDJSON export (also a peer's after_seq page) and
  the CSV go on past it, the run's own lines saying so;
- /healthz says the database is damaged, naming the run;
- a hub pulling the node stores it marked damaged as the node serves it
  (its cursor past it, its own health untouched), with every other run;
- --check-db calls the file damaged and names the run and its column;
- --recover leaves that run out and keeps every other one.
"""
import csv
import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import DAEMON, Daemon  # noqa: E402
from test_dataflow import get_raw, wait_for  # noqa: E402

RUNS = 4  # batches on two GPUs: 8 runs


def gpubenchd(*args):
    return subprocess.run([DAEMON] + list(args), capture_output=True, text=True, timeout=120)


class DamagedRunTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Daemon(gpus=2)
        cls.d.start()
        for _ in range(RUNS):
            r = cls.d.post("/runs?wait=30", {"benchmark": "smem_stride", "device": "all",
                                             "params": {"strides": list(range(1, 17))}})
            assert r.status == 200, r
        cls.ids = sorted(row[0] for row in cls.d.sql("SELECT id FROM runs"))
        assert len(cls.ids) == 2 * RUNS
        cls.max_seq = cls.d.sql("SELECT max(final_seq) FROM runs")[0][0]
        assert cls.d.stop() == 0
        # the damage: a middle run's results cut short, as the issue measured
        cls.bad = cls.ids[len(cls.ids) // 2]
        con = sqlite3.connect(cls.d.db)
        con.execute("UPDATE run_results SET results = substr(results, 1, 200) "
                    "WHERE run_id = ?", (cls.bad,))
        con.commit()
        con.close()
        cls.d.start()

    @classmethod
    def tearDownClass(cls):
        cls.d.stop()
        shutil.rmtree(cls.d.tmp, ignore_errors=True)

    def test_the_run_is_served_marked_damaged(self):
        run = self.d.get("/runs/" + self.bad)
        self.assertEqual(run.status, 200, run)
        run = run.json()
        self.assertIs(run["damaged"], True)
        self.assertEqual(run["damaged_columns"], ["results"])
        self.assertIsNone(run["results"])
        self.assertEqual(run["status"], "done")
        self.assertTrue(run["meta"])
        self.assertEqual(run["params"]["strides"], list(range(1, 17)))
        good = self.d.get("/runs/" + self.ids[0]).json()
        self.assertNotIn("damaged", good)
        self.assertTrue(good["results"]["rows"])
        # the list has every run
        listed = self.d.get("/runs?limit=500").json()["runs"]
        self.assertEqual(sorted(r["id"] for r in listed), self.ids)
        health = self.d.get("/healthz").json()
        self.assertEqual(health["database"], "database_corrupt", health)
        self.assertIn(self.bad, json.dumps(health))

    def test_exports_go_on_past_it(self):
        for path in ("/runs.ndjson", "/runs.ndjson?after_seq=0"):
            status, body, complete = get_raw(self.d, path)
            self.assertEqual((status, complete), (200, True), body[-300:])
            lines = [json.loads(line) for line in body.decode().splitlines() if line]
            self.assertEqual(sorted(r["id"] for r in lines), self.ids, path)
            self.assertFalse([r for r in lines if "error" in r and "id" not in r])
            marked = [r["id"] for r in lines if r.get("damaged")]
            self.assertEqual(marked, [self.bad], path)
        status, body, complete = get_raw(self.d, "/runs.csv")
        self.assertEqual((status, complete), (200, True))
        lines = list(csv.DictReader(io.StringIO(body.decode())))
        self.assertEqual({line["run_id"] for line in lines}, set(self.ids))
        self.assertEqual({line["run_id"] for line in lines if line["damaged"]}, {self.bad})
        self.assertEqual({line["damaged"] for line in lines if line["damaged"]}, {"results"})
        one = self.d.get("/runs/%s.csv" % self.bad)
        self.assertEqual(one.status, 200)
        self.assertEqual(list(csv.DictReader(io.StringIO(one.body)))[0]["damaged"], "results")

    def test_a_hub_stores_it_marked_damaged(self):
        node_url = "http://127.0.0.1:%d" % self.d.port
        hub = Daemon(gpus=0, args=["--peer", node_url, "--peer-interval", "1"]).start()
        self.addCleanup(shutil.rmtree, hub.tmp, True)
        try:
            def pulled():
                p = hub.get("/peers").json()["peers"][0]
                return p if p["cursor"] == self.max_seq else None
            peer = wait_for(pulled, timeout=30, what="the hub's cursor past every run")
            self.assertEqual(peer["skipped"]["count"], 0, peer)
            self.assertEqual(peer["runs_pulled"], len(self.ids), peer)
            got = sorted(r["id"] for r in hub.get("/runs?limit=500").json()["runs"])
            self.assertEqual(got, self.ids)
            run = hub.get("/runs/" + self.bad).json()
            self.assertIs(run["damaged"], True, run)
            self.assertEqual(run["damaged_columns"], ["results"])
            self.assertIsNone(run["results"])
            self.assertEqual(run["origin"], node_url)
            self.assertEqual(run["params"]["strides"], list(range(1, 17)))
            # the node's damage is not the hub's: its own database is whole
            self.assertNotEqual(hub.get("/healthz").json().get("database"), "database_corrupt")
            good = hub.get("/runs/" + self.ids[0]).json()
            self.assertNotIn("damaged", good)
            self.assertTrue(good["results"]["rows"])
            # and the hub's own export says so again, for a hub above it
            status, body, complete = get_raw(hub, "/runs.ndjson")
            self.assertEqual((status, complete), (200, True))
            marked = [json.loads(x)["id"] for x in body.decode().splitlines()
                      if x and json.loads(x).get("damaged")]
            self.assertEqual(marked, [self.bad])
        finally:
            hub.stop()

    def test_check_db_names_it_and_recover_leaves_it_out(self):
        copy = os.path.join(self.d.tmp, "copy.db")
        r = gpubenchd("--backup", copy, "--db", self.d.db)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        c = gpubenchd("--check-db", "--db", copy)
        self.assertEqual(c.returncode, 1, c.stdout + c.stderr)
        self.assertIn("DAMAGED", c.stdout)
        self.assertIn("run %s: its results" % self.bad, c.stdout)
        new = os.path.join(self.d.tmp, "recovered.db")
        r = gpubenchd("--recover", copy, "--db", new)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("run_results: 1 rows whose results no longer is JSON were dropped", r.stdout)
        con = sqlite3.connect(new)
        kept = sorted(row[0] for row in con.execute("SELECT id FROM runs"))
        con.close()
        self.assertEqual(kept, [i for i in self.ids if i != self.bad])
        c = gpubenchd("--check-db", "--db", new)
        self.assertEqual(c.returncode, 0, c.stdout + c.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
