"""/metrics as collectors and its series budget (issue 33).

A daemon measures on its own (fake) card and holds 20 imported cards of 10
other hosts (the real H200 health runs of examples/h200_daemon_health,
each copy with its own id, host and card UUID).  Its /metrics:

- reports gpubench_scrape_collector_success and _duration_seconds for
  every collector, each once, all succeeding;
- exports per-row result gauges (gpubench_result_valid, the medians,
  gpubench_fleet_robust_z) for its own card only, while every imported
  card has its state, its coverage age per health benchmark, its outlier
  rows and the counts per host and model: under 20 series a card;
- passes promtool where it is installed.

With --metrics-peer-results the imported cards' result gauges are back.
"""
import json
import os
import shutil
import subprocess
import sys
import unittest
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Daemon  # noqa: E402

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
HEALTH = os.path.join(TOP, "examples", "h200_daemon_health", "health_runs.ndjson")
COLLECTORS = ["daemon", "gpus", "runs", "results", "alerts", "fleet", "coverage", "card_events",
              "canaries", "peers", "tls"]
HOSTS, CARDS = 10, 2


def imported_runs():
    """The health runs, cloned onto HOSTS hosts x CARDS cards."""
    with open(HEALTH) as f:
        templates = [json.loads(l) for l in f if l.strip()]
    out = []
    for h in range(HOSTS):
        for c in range(CARDS):
            card = "GPU-%s" % uuid.uuid4()
            for t in templates:
                r = json.loads(json.dumps(t))
                r["id"] = "01900000-0000-7000-8000-%012d" % len(out)
                r["host"] = "imported%02d" % h
                r["device"] = dict(r["device"], uuid=card, index=c)
                for k in ("origin", "seq", "url", "queue_position", "verdicts", "confirms",
                          "batch"):
                    r.pop(k, None)
                out.append(r)
    return out


def samples(text):
    return [l for l in text.splitlines() if l and not l.startswith("#")]


def start(args=()):
    d = Daemon(args=list(args)).start()
    runs = imported_runs()
    r = d.post("/runs/import", "".join(json.dumps(x) + "\n" for x in runs))
    assert r.status == 200 and r.json()["imported"] == len(runs), r.body
    r = d.post("/runs?wait=20", {"benchmark": "smem_stride", "params": {"strides": [1, 2, 32]}})
    assert r.status == 200 and r.json()["status"] == "done", r.body
    return d, r.json()


class BudgetTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d, cls.own = start()
        cls.text = cls.d.get("/metrics").body

    @classmethod
    def tearDownClass(cls):
        cls.d.stop()

    def test_collectors_reported(self):
        for family in ("gpubench_scrape_collector_success",
                       "gpubench_scrape_collector_duration_seconds"):
            self.assertIn("# TYPE %s gauge" % family, self.text)
            got = [l for l in samples(self.text) if l.startswith(family + "{")]
            self.assertEqual(sorted(l.split('"')[1] for l in got), sorted(COLLECTORS), got)
        for c in COLLECTORS:
            self.assertIn('gpubench_scrape_collector_success{collector="%s"} 1' % c, self.text)

    def test_results_own_cards_only(self):
        own = self.own["device"]["uuid"]
        for family in ("gpubench_result_valid{", "gpubench_fleet_robust_z{",
                       "gpubench_result_median_seconds{"):
            lines = [l for l in samples(self.text) if l.startswith(family)]
            self.assertFalse([l for l in lines if 'host="imported' in l], family)
        valid = [l for l in samples(self.text) if l.startswith("gpubench_result_valid{")]
        self.assertEqual(len(valid), 1, valid)
        self.assertIn('uuid="%s"' % own, valid[0])

    def test_peer_cards_state_ages_outliers(self):
        per_card = {}
        for l in samples(self.text):
            if 'host="imported' not in l or 'uuid="' not in l:
                continue
            card = l.split('uuid="')[1].split('"')[0]
            per_card.setdefault(card, []).append(l.split("{")[0])
        self.assertEqual(len(per_card), HOSTS * CARDS)
        for card, names in per_card.items():
            self.assertLess(len(names), 20, (card, names))
            self.assertEqual(names.count("gpubench_card_state"), 3, names)
            self.assertEqual(names.count("gpubench_card_outlier_rows"), 1, names)
            self.assertGreaterEqual(names.count("gpubench_coverage_age_seconds"), 5, names)
        per_host = [l for l in samples(self.text) if l.startswith("gpubench_fleet_cards{")]
        self.assertIn('gpubench_fleet_cards{host="imported03",card_model="NVIDIA H200"} %d'
                      % CARDS, per_host)

    def test_promtool(self):
        if not shutil.which("promtool"):
            self.skipTest("promtool is not installed")
        p = subprocess.run(["promtool", "check", "metrics"], input=self.text.encode(),
                           capture_output=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_fresh_after_a_run(self):
        """A small daemon's scrape is made again after a write (its builds
        are quick): the next run's card counts at once."""
        before = [l for l in samples(self.d.get("/metrics").body)
                  if l.startswith('gpubench_runs{status="done"}')]
        r = self.d.post("/runs?wait=20", {"benchmark": "transpose", "params": {"n": 256}})
        self.assertEqual(r.status, 200, r.body)
        text = self.d.get("/metrics").body
        after = [l for l in samples(text) if l.startswith('gpubench_runs{status="done"}')]
        self.assertNotEqual(before, after)
        self.assertTrue([l for l in samples(text) if l.startswith("gpubench_result_valid{")
                         and 'benchmark="transpose"' in l])


class PeerResultsTest(unittest.TestCase):
    def test_peer_results_given(self):
        d, _ = start(["--metrics-peer-results"])
        try:
            text = d.get("/metrics").body
        finally:
            d.stop()
        valid = [l for l in samples(text) if l.startswith("gpubench_result_valid{")]
        self.assertEqual(len([l for l in valid if 'host="imported' in l]),
                         HOSTS * CARDS * 6, valid[:3])
        self.assertTrue([l for l in samples(text) if l.startswith("gpubench_fleet_robust_z{")
                         and 'host="imported' in l])


if __name__ == "__main__":
    unittest.main(verbosity=2)
