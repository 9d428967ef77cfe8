"""Prometheus for real (issue 17): /metrics passes `promtool check metrics`,
no label takes a new value per run, the scrape configuration and rules in
packaging/prometheus/ pass promtool, and a real Prometheus scraping two
daemons answers, in PromQL, the latest stride-32 ratio of every card as the
daemons' own GET /runs says it.

Needs Debian's `prometheus` package (prometheus and promtool); without it
the tests are skipped, saying so.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Daemon  # noqa: E402

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
PACKAGING = os.path.join(TOP, "packaging", "prometheus")
PROMTOOL = shutil.which("promtool")
PROMETHEUS = shutil.which("prometheus")
MISSING = "SKIPPED: %s is not installed (Debian: apt-get install prometheus)"

STRIDES = {"strides": [1, 2, 32, 33]}


def series(text):
    """The series of a scrape: each sample line without its value."""
    return {l.rsplit(" ", 1)[0] for l in text.splitlines() if l and not l.startswith("#")}


def post_runs(d, gpus, mode="normal"):
    d.set_mode(mode)
    for dev in range(gpus):
        for body in ({"benchmark": "smem_stride", "params": STRIDES},
                     {"benchmark": "transpose", "params": {"n": 256}},
                     {"benchmark": "smem_pattern"}):
            r = d.post("/runs?wait=20", dict(body, device=dev))
            assert r.status == 200 and r.json()["status"] == "done", r


def ratio32(run):
    """A run's stride-32 ratio as /metrics writes it (9 significant digits)."""
    return float("%.9g" % [r["ratio"] for r in run["results"]["rows"] if r["stride"] == 32][0])


def latest_ratio32(d):
    """uuid -> the stride-32 ratio of that card's newest done smem_stride
    run, from the daemon's own GET /runs and GET /runs/ID."""
    out = {}
    for dev in d.get("/devices").json()["devices"]:
        runs = d.get("/runs?benchmark=smem_stride&status=done&limit=1&device=" +
                     dev["uuid"]).json()["runs"]
        run = d.get("/runs/" + runs[0]["id"]).json()
        out[dev["uuid"]] = ratio32(run)
    return out


@unittest.skipUnless(PROMTOOL, MISSING % "promtool")
class PromtoolTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Daemon(gpus=2).start()
        post_runs(cls.d, 2)

    @classmethod
    def tearDownClass(cls):
        cls.d.stop()

    def test_check_metrics(self):
        text = self.d.get("/metrics").body
        p = subprocess.run([PROMTOOL, "check", "metrics"], input=text.encode(),
                           capture_output=True)
        self.assertEqual(p.returncode, 0, (p.stdout + p.stderr).decode())
        for name in ("gpubench_result_ratio", "gpubench_result_median_seconds",
                     "gpubench_result_valid", "gpubench_worker_healthy"):
            self.assertIn("\n%s{" % name, text)

    def test_no_series_per_run(self):
        before = series(self.d.get("/metrics").body)
        # 8 runs of each card in all: the history a run is judged against
        # needs them (GB_HISTORY_MIN_RUNS) before the skewed runs can alert
        for _ in range(7):
            post_runs(self.d, 2)
        self.assertEqual(series(self.d.get("/metrics").body), before)
        # Other numbers on the same cards: the results move, and the runs
        # raise alerts (history), counted by card and row, never by id.
        post_runs(self.d, 2, "skewed")
        text = self.d.get("/metrics").body
        new = series(text) - before
        self.assertTrue(new)
        self.assertEqual({s.split("{")[0] for s in new}, {"gpubench_alert_open"}, new)
        self.assertFalse([s for s in new if re.search(r"[{,](alert|id|run)=", s)], new)
        self.assertEqual(series(text) - new, before)
        # and no run id is a label value anywhere
        for run in self.d.get("/runs?limit=500").json()["runs"]:
            self.assertNotIn(run["id"], text)
        values = set(re.findall(r'="([^"]*)"', text))
        self.assertFalse([v for v in values if re.fullmatch(r"[0-9a-f-]{36}", v)], values)

    def test_packaging_config_and_rules(self):
        for what, f in (("config", "gpubench.yml"), ("rules", "gpubench.rules.yml")):
            p = subprocess.run([PROMTOOL, "check", what, os.path.join(PACKAGING, f)],
                               capture_output=True)
            self.assertEqual(p.returncode, 0, (p.stdout + p.stderr).decode())


@unittest.skipUnless(PROMETHEUS, MISSING % "prometheus")
class RealPrometheusTest(unittest.TestCase):
    def setUp(self):
        # Two nodes, two cards each, told apart by their UUIDs.
        self.nodes = [Daemon(gpus=2, env={"GPUBENCH_FAKE_UUID_BASE": str(base)}).start()
                      for base in (0, 100)]
        self.tmp = tempfile.mkdtemp(prefix="gpubench-prom-")
        self.prom = None

    def tearDown(self):
        if self.prom and self.prom.poll() is None:
            self.prom.terminate()
            self.prom.wait(20)
        for d in self.nodes:
            d.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def listening_port(self, timeout=30):
        """Prometheus on port 0 logs the one it got:
        msg="Listening on" address=127.0.0.1:PORT (no race for a free port)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            with open(self.log_path, errors="replace") as f:
                m = re.search(r'msg="Listening on" address=127\.0\.0\.1:(\d+)', f.read())
            if m:
                return int(m.group(1))
            self.assertIsNone(self.prom.poll(), "prometheus exited:\n" + open(self.log_path).read())
            time.sleep(0.1)
        self.fail("prometheus never said where it listens:\n" + open(self.log_path).read())

    def query(self, promql):
        url = "http://127.0.0.1:%d/api/v1/query?query=%s" % (self.port,
                                                             urllib.parse.quote(promql))
        with urllib.request.urlopen(url, timeout=10) as r:
            answer = json.load(r)
        self.assertEqual(answer["status"], "success", answer)
        return answer["data"]["result"]

    def wait_for(self, promql, expect, timeout=60):
        """expect: {(instance, uuid): value}; polls until the answer is it."""
        deadline = time.time() + timeout
        got = None
        while time.time() < deadline:
            try:
                got = {(r["metric"].get("instance"), r["metric"]["uuid"]): float(r["value"][1])
                       for r in self.query(promql)}
            except OSError:
                got = None
            if got == expect:
                return got
            time.sleep(0.5)
        self.fail("Prometheus answered %s with %s, not %s\n%s" %
                  (promql, got, expect, open(self.log_path, errors="replace").read()[-3000:]))

    def test_latest_stride32_ratio_of_every_card(self):
        a, b = self.nodes
        # The latest run must win: on a the second run is skewed (another
        # ratio), on b the first.
        post_runs(a, 2)
        post_runs(a, 2, "skewed")
        post_runs(b, 2, "skewed")
        post_runs(b, 2)
        expect = {}
        for d in self.nodes:
            for uuid, ratio in latest_ratio32(d).items():
                expect[("127.0.0.1:%d" % d.port, uuid)] = ratio
        self.assertEqual(len(expect), 4)
        self.assertEqual(len(set(expect.values())), 2, "both ratios should be there")

        config = os.path.join(self.tmp, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    "rule_files:\n  - %s\n"
                    "scrape_configs:\n  - job_name: gpubench\n    static_configs:\n"
                    "      - targets: ['127.0.0.1:%d', '127.0.0.1:%d']\n" %
                    (os.path.join(os.path.abspath(PACKAGING), "gpubench.rules.yml"),
                     a.port, b.port))
        self.log_path = os.path.join(self.tmp, "prometheus.log")
        with open(self.log_path, "wb") as log:
            self.prom = subprocess.Popen(
                [PROMETHEUS, "--config.file=" + config,
                 "--storage.tsdb.path=" + os.path.join(self.tmp, "data"),
                 "--web.listen-address=127.0.0.1:0"],
                stdout=log, stderr=subprocess.STDOUT)
        self.port = self.listening_port()

        self.wait_for('gpubench_result_ratio{benchmark="smem_stride",stride="32"}', expect)
        # the recording rule from packaging/: one series a card, no instance
        rule = {(None, uuid): v for (_, uuid), v in expect.items()}
        self.wait_for("card:gpubench_smem_stride_ratio_32:latest", rule)
        # every target up, and the two nodes' queues seen
        up = self.query('up{job="gpubench"}')
        self.assertEqual(sorted(float(r["value"][1]) for r in up), [1.0, 1.0])

        # A run after the scrape began moves the gauge, without a new series.
        a.set_mode("normal")
        r = a.post("/runs?wait=20", {"benchmark": "smem_stride", "params": STRIDES, "device": 0})
        self.assertEqual(r.status, 200)
        expect[("127.0.0.1:%d" % a.port, r.json()["device"]["uuid"])] = ratio32(r.json())
        self.wait_for('gpubench_result_ratio{benchmark="smem_stride",stride="32"}', expect)
        # every series the scrapes ever made: one a card and stride
        n = self.query('count(last_over_time(gpubench_result_ratio{benchmark="smem_stride"}[1h]))')
        self.assertEqual(float(n[0]["value"][1]), 4 * len(STRIDES["strides"]))


if __name__ == "__main__":
    unittest.main(verbosity=2)
