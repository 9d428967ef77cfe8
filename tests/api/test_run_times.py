"""Issue 35, point 4: a run's times are believed only when they could be
true.  An import of a run dated ahead of the daemon's clock by more than
--max-clock-skew is refused (400 clock_skew), and a peer serving one has
it skipped and counted, the pull moving past it; times out of order, a
date that is not one (9999-99-99T99:99:99.999Z) and a negative time in a
result row are refused; and the one that is refused stores nothing, so a
card's freshness and its canary never come from the future."""
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402
from test_import_check import ImportFixture, count_runs, fake_peer, ndjson, pulled_to  # noqa: E402

FUTURE = "2099-01-01T00:00:00.000Z"


class RunTimesTest(ImportFixture):
    def refused(self, run, field, code):
        before = count_runs(self.d)
        r = self.d.post("/runs/import", ndjson([self.run_like(), run]))
        self.assertEqual(r.status, 400, r)
        err = r.json()["error"]
        self.assertEqual((err["code"], err.get("field")), (code, field), err)
        self.assertEqual(count_runs(self.d), before, "a refused import stored something")
        return err

    def test_a_run_from_the_future(self):
        err = self.refused(self.run_like(finished_at=FUTURE), "finished_at", "clock_skew")
        self.assertIn("--max-clock-skew", err["message"])
        # every one of its times, not only its end
        self.refused(self.run_like(created_at=FUTURE, started_at=FUTURE, finished_at=FUTURE),
                     "created_at", "clock_skew")

    def test_within_the_skew_is_taken(self):
        soon = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() + 60))
        r = self.d.post("/runs/import", ndjson([self.run_like(finished_at=soon)]))
        self.assertEqual(r.status, 200, r)

    def test_times_out_of_order(self):
        run = self.run_like()
        run["finished_at"], run["created_at"] = run["created_at"], run["finished_at"]
        self.refused(run, "started_at", "invalid_run")

    def test_a_date_that_is_not_one(self):
        for bad in ("9999-99-99T99:99:99.999Z", "2026-02-30T10:00:00.000Z",
                    "2026-11-30T24:00:00.000Z", "1969-12-31T23:59:59.999Z"):
            self.refused(self.run_like(finished_at=bad), "finished_at", "invalid_run")

    def test_a_negative_time(self):
        run = self.run_like()
        run["results"]["rows"][0]["median_ms"] = -1.0
        self.refused(run, "results.rows[0].median_ms", "out_of_bounds")
        run = self.run_like()
        run["results"]["rows"][1]["samples"][0] = -0.5
        self.refused(run, "results.rows[1].samples", "out_of_bounds")

    def test_a_peer_serving_one_has_it_skipped(self):
        ahead = self.run_like(finished_at=FUTURE)
        hub = Daemon(gpus=0)
        hub.args += ["--peer", fake_peer(self, [self.run_like(), ahead, self.run_like()]),
                     "--peer-interval", "1"]
        hub.start()
        try:
            peer = pulled_to(hub, 3)
            self.assertEqual(peer["cursor"], 3, peer)
            self.assertEqual(peer["runs_pulled"], 2, peer)
            self.assertEqual(peer["skipped"]["count"], 1, peer)
            self.assertIn(ahead["id"], peer["skipped"]["last_reason"])
            self.assertIn("ahead of this daemon's clock", peer["skipped"]["last_reason"])
            ids = {r["id"] for r in hub.get("/runs").json()["runs"]}
            self.assertNotIn(ahead["id"], ids)
        finally:
            self.assertEqual(hub.stop(), 0)


if __name__ == "__main__":
    unittest.main()
