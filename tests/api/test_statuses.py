"""Run statuses come from one table (server/core/run_status.c): GET /benchmarks
publishes them for the page, and the /runs filter and /metrics take the
same five names."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import DaemonCase  # noqa: E402

STATUSES = ["queued", "running", "done", "failed", "cancelled"]


class StatusTableTest(DaemonCase):
    def test_benchmarks_publishes_the_statuses(self):
        r = self.d.get("/benchmarks")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.json()["run_statuses"], STATUSES)

    def test_filter_and_metrics_take_every_status(self):
        for s in STATUSES:
            self.assertEqual(self.d.get("/runs?status=" + s).status, 200, s)
        self.assertEqual(self.d.get("/runs?status=finished").status, 400)
        metrics = self.d.get("/metrics").body
        for s in STATUSES:
            self.assertIn('gpubench_runs{status="%s"}' % s, metrics)


if __name__ == "__main__":
    unittest.main(verbosity=2)
