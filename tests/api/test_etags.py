"""ETag and If-None-Match -> 304 (issue 33, point 5).

GET /runs/ID has a strong ETag, the hash of the run's JSON; list pages
(GET /runs) and the exports (GET /runs.ndjson, /runs.csv) a weak one, the
database's state and the query (store_state_tag, reply_state_etag).  The
test asserts, on a real daemon:

- each answers 200 with an ETag, and 304 without a body when
  If-None-Match names it (strong or W/: the weak comparison; in a list of
  several; "*"), 200 again for another tag;
- a run's ETag changes when the run does (queued -> cancelled), and the
  old tag then gets the new run, 200;
- a list page's and an export's ETag change with a write (the cancel, an
  import), and differ between two queries of the same path;
- the body a 304 stands for is the one a 200 sends (same ETag, same bytes);
- the card watch's readings, stored every --watch-interval, change no
  run: a list page's and an export's tags stay (store_query_no_run_rows).
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402
from test_fleet import wait_for  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def imported(d, path):
    with open(os.path.join(ROOT, path), "rb") as f:
        r = d.post("/runs/import", f.read())
    assert r.status == 200, r


class ETags(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Daemon(args=["--test-benchmarks", "--shutdown-grace", "1"])
        cls.d.start()
        imported(cls.d, "examples/h200x2_daemon/runs.ndjson")

    @classmethod
    def tearDownClass(cls):
        cls.d.stop()

    def cond(self, path, tag):
        return self.d.get(path, headers={"If-None-Match": tag})

    def assert_cached(self, path, weak):
        """path answers 200 with an ETag (weak or strong as said) and 304
        to it; returns (etag, body)."""
        first = self.d.get(path)
        self.assertEqual(first.status, 200, first)
        tag = first.header("ETag")
        self.assertIsNotNone(tag, path)
        self.assertEqual(tag.startswith('W/"'), weak, tag)
        self.assertTrue(tag.endswith('"'), tag)
        again = self.d.get(path)
        self.assertEqual((again.header("ETag"), again.body), (tag, first.body))
        for inm in (tag, tag[2:] if weak else "W/" + tag, '"x", ' + tag, "*"):
            r = self.cond(path, inm)
            self.assertEqual(r.status, 304, (path, inm))
            self.assertEqual(r.body, "")
            self.assertEqual(r.header("ETag"), tag)
        r = self.cond(path, '"not-this-one"')
        self.assertEqual(r.status, 200)
        self.assertEqual(r.body, first.body)
        return tag, first.body

    def test_run_list_and_exports_answer_304(self):
        run_id = self.d.get("/runs?limit=1").json()["runs"][0]["id"]
        self.assert_cached("/runs/" + run_id, weak=False)
        page, _ = self.assert_cached("/runs?limit=5", weak=True)
        other, _ = self.assert_cached("/runs?limit=4", weak=True)
        self.assertNotEqual(page, other)
        self.assert_cached("/runs.ndjson", weak=True)
        self.assert_cached("/runs.csv?benchmark=smem_stride", weak=True)

    def test_tags_change_when_runs_do(self):
        hang = self.d.post("/runs", {"benchmark": "test_hang", "timeout_s": 30}).json()
        self.d.wait_status(hang["id"], ("running",))
        queued = self.d.post("/runs", {"benchmark": "smem_stride"}).json()
        self.assertEqual(queued["status"], "queued")
        run_tag, run_body = self.assert_cached("/runs/" + queued["id"], weak=False)
        list_tag, _ = self.assert_cached("/runs?limit=3", weak=True)
        export_tag, export_body = self.assert_cached("/runs.ndjson", weak=True)

        r = self.d.request("DELETE", "/runs/" + queued["id"])
        self.assertEqual(r.status, 200, r)
        # The run: a new tag, and the old one gets the cancelled run.
        r = self.cond("/runs/" + queued["id"], run_tag)
        self.assertEqual(r.status, 200)
        self.assertEqual(r.json()["status"], "cancelled")
        self.assertNotEqual(r.header("ETag"), run_tag)
        self.assertNotEqual(r.body, run_body)
        # The list page that shows it, and the export.
        r = self.cond("/runs?limit=3", list_tag)
        self.assertEqual(r.status, 200)
        self.assertNotEqual(r.header("ETag"), list_tag)
        self.assertIn("cancelled", [x["status"] for x in r.json()["runs"]])
        r = self.cond("/runs.ndjson", export_tag)
        self.assertEqual(r.status, 200)
        self.assertNotEqual(r.header("ETag"), export_tag)
        # An import changes what the export holds: its tag moves on.
        export_tag = r.header("ETag")
        imported(self.d, "examples/h200_daemon_trust/trust_runs.ndjson")
        r = self.cond("/runs.ndjson", export_tag)
        self.assertEqual(r.status, 200)
        self.assertGreater(len(r.body), len(export_body))
        self.d.request("DELETE", "/runs/" + hang["id"])  # 409 (running): ends at stop


class WatchReadings(unittest.TestCase):
    def test_readings_leave_list_tags_alone(self):
        d = Daemon(args=["--test-benchmarks", "--watch-interval", "1"]).start()
        try:
            imported(d, "examples/h200x2_daemon/runs.ndjson")
            quiet = wait_for(lambda: d.get("/devices").json()["devices"][0]["watch"]["quiet_since"],
                             timeout=10, what="a first watch reading")
            tags = {p: d.get(p).header("ETag") for p in ("/runs?limit=5", "/runs.ndjson")}
            # A busy reading, then a quiet one again: each stored, as the
            # new quiet_since says.
            d.set_mode("busy")
            wait_for(lambda: d.get("/devices").json()["devices"][0]["watch"]["state"] == "busy",
                     timeout=10, what="a busy reading")
            d.set_mode("normal")
            wait_for(lambda: (d.get("/devices").json()["devices"][0]["watch"]["quiet_since"] or "")
                     > quiet, timeout=10, what="a quiet reading again")
            for path, tag in tags.items():
                r = self.d_cond(d, path, tag)
                self.assertEqual(r.status, 304, path)
        finally:
            self.assertEqual(d.stop(), 0)

    @staticmethod
    def d_cond(d, path, tag):
        return d.get(path, headers={"If-None-Match": tag})


if __name__ == "__main__":
    unittest.main()
