"""Checks on idle cards (--canary BENCHMARK@PERIOD, --canary-idle, GET
/canaries): a quiet card gets its canary, labelled canary, once a period
(across a restart too); a busy card defers it, saying why, then runs it
once quiet; a person's run goes before a canary; mistakes in the options
are refused at start; without a GPU /canaries says why.  On a node of two
GPUs the cards' health canaries leave out p2p_bandwidth and nccl_allreduce
(issue 37), which hold every GPU: a node canary runs each once a period,
only once every card is quiet.  The worker's test
double answers the watch probe from its control word (busy: pid 4242
python3; anything else: an idle card)."""
import os
import re
import shutil
import subprocess
import sys
import time
import unittest
from datetime import datetime, timedelta, timezone

sys.path.insert(0, os.path.dirname(__file__))
from harness import DAEMON, Daemon  # noqa: E402
from test_fleet import wait_for  # noqa: E402

CANARY = ["--watch-interval", "1", "--canary", "smem_stride@1h", "--canary-idle", "2s"]


def parse_time(text):
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ")


def canary(d, index=0):
    """The first canary of GPU index in GET /canaries."""
    return d.get("/canaries").json()["cards"][index]["canaries"][0]


def canary_runs(d):
    return d.get("/runs?label=canary").json()["runs"]


def last_done(d):
    c = canary(d)
    return c if c["last_run"] and c["last_run"]["outcome"] == "done" else None


def busy_deferral(d):
    c = canary(d)
    return c if (c["deferred"]["reason"] or "").startswith("card busy") else None


class CanaryTest(unittest.TestCase):
    def tearDown(self):
        self.d.stop()

    def test_quiet_card_gets_it_once_a_period_across_a_restart(self):
        self.d = Daemon(args=CANARY).start()
        c = wait_for(lambda: last_done(self.d), 30, "the canary ran")
        runs = canary_runs(self.d)
        self.assertEqual(len(runs), 1, runs)
        self.assertEqual(runs[0]["label"], "canary")
        self.assertEqual(runs[0]["benchmark"], "smem_stride")
        self.assertEqual(c["last_run"]["id"], runs[0]["id"])
        self.assertEqual(c["period_s"], 3600)
        self.assertIs(c["due"], False)
        self.assertEqual(parse_time(c["next_due_at"]) - parse_time(runs[0]["created_at"]),
                         timedelta(hours=1))
        # Quiet for long past --canary-idle, across a restart: no second run.
        self.d.stop()
        self.d.start()
        time.sleep(5)
        self.assertEqual([r["id"] for r in canary_runs(self.d)], [runs[0]["id"]])
        self.assertEqual(canary(self.d)["last_run"]["id"], runs[0]["id"])

    def test_busy_card_defers_saying_why_then_runs_when_quiet(self):
        self.d = Daemon(args=CANARY)
        self.d.set_mode("busy")
        self.d.start()
        c = wait_for(lambda: busy_deferral(self.d), 30, "a busy deferral")
        self.assertEqual(c["deferred"]["reason"], "card busy: pid 4242 python3 on the card")
        self.assertIs(c["deferred"]["now"], True)
        self.assertGreaterEqual(c["deferred"]["count"], 1)
        self.assertIs(c["due"], True)
        self.assertIsNone(c["last_run"])
        time.sleep(3)  # still busy: still no canary, and still one busy spell
        self.assertEqual(canary_runs(self.d), [])
        self.assertEqual(canary(self.d)["deferred"]["count"], c["deferred"]["count"])
        self.d.set_mode("normal")
        c = wait_for(lambda: last_done(self.d), 30, "the canary ran once quiet")
        self.assertIs(c["deferred"]["now"], False)
        self.assertEqual(len(canary_runs(self.d)), 1)

    def test_a_run_posted_while_a_canary_is_due_goes_first(self):
        self.d = Daemon(args=CANARY)
        # A run of 3 s, posted before the card can have been quiet 2 s.
        self.d.set_mode("once:quiet_wait")
        self.d.start()
        user = self.d.post("/runs", {"benchmark": "smem_stride"}).json()
        c = wait_for(lambda: last_done(self.d), 30, "the canary ran")
        user = self.d.get("/runs/" + user["id"]).json()
        run = self.d.get("/runs/" + c["last_run"]["id"]).json()
        self.assertEqual(user["status"], "done")
        self.assertGreaterEqual(parse_time(run["created_at"]), parse_time(user["finished_at"]))
        self.assertGreaterEqual(c["deferred"]["count"], 1)
        self.assertRegex(self.d.read_log(),
                         r"canary smem_stride on GPU 0 deferred: (a run is running|user runs)")

    def test_the_queue_takes_canaries_after_a_persons_runs(self):
        # A canary queued behind a running run, then a person's run: the
        # person's starts first, also before every member of a health
        # canary, and its queue position says so.
        self.d = Daemon(args=["--watch-interval", "1"]).start()
        self.d.set_mode("once:quiet_wait")
        first = self.d.post("/runs", {"benchmark": "smem_stride"}).json()
        self.d.wait_status(first["id"], ["running"])
        health = self.d.post("/runs", {"benchmark": "health", "label": "canary"}).json()
        user = self.d.post("/runs", {"benchmark": "smem_stride"}).json()
        self.assertEqual(user["queue_position"], 1, user)
        members = [r["id"] for r in health["runs"]]
        self.assertEqual(self.d.get("/runs/" + members[0]).json()["queue_position"], 2)
        user = self.d.wait_status(user["id"], ["done"], timeout=30)
        for m in members:
            run = self.d.wait_status(m, ["done"], timeout=30)
            self.assertGreater(parse_time(run["started_at"]), parse_time(user["started_at"]))

    def test_no_gpu_says_why(self):
        self.d = Daemon(gpus=0, args=CANARY).start()
        body = self.d.get("/canaries").json()
        self.assertEqual(body["cards"], [])
        self.assertTrue(body["reason"])
        self.assertEqual(body["idle_s"], 2)

    def test_no_canary_says_so(self):
        self.d = Daemon().start()
        body = self.d.get("/canaries").json()
        self.assertEqual(body["cards"], [])
        self.assertEqual(body["reason"], "no --canary given")
        self.assertEqual(body["idle_s"], 600)


HEALTH = ["--watch-interval", "1", "--canary", "health@24h", "--canary-idle", "2s"]


def canary_metrics(d):
    """{(gpu, canary): {family suffix: value}} from /metrics' gpubench_canary_* series."""
    out = {}
    for line in d.get("/metrics").body.splitlines():
        m = re.match(r'gpubench_canary_(\w+)\{host="[^"]*",uuid="([^"]*)",gpu="([^"]*)",'
                     r'canary="([^"]*)"\} (\S+)$', line)
        if m:
            out.setdefault((m.group(3), m.group(4)), {})[m.group(1)] = float(m.group(5))
    return out


def assert_metrics_match(test, d, body):
    """Each canary of GET /canaries has its series in /metrics, saying the
    same.  The scheduler may move between the two reads (a card's first
    watch reading turning "no reading yet" into "card busy"): the answer
    is read again around /metrics until it did not move (body is the
    first read)."""
    def seen(b):
        return [(k["benchmark"], k["due"], k["deferred"]["now"], k["deferred"]["count"],
                 (k["last_run"] or {}).get("created_at"))
                for k in [k for c in b["cards"] for k in c["canaries"]] + b["node"]]

    for _ in range(20):
        series = canary_metrics(d)
        after = d.get("/canaries").json()
        if seen(after) == seen(body):
            break
        body = after
    entries = [(str(card["index"]), k) for card in body["cards"] for k in card["canaries"]] + \
        [("all", k) for k in body["node"]]
    test.assertEqual(set(series), {(gpu, k["benchmark"]) for gpu, k in entries})
    for gpu, k in entries:
        got = series[(gpu, k["benchmark"])]
        test.assertEqual(got["due"], float(k["due"]), (gpu, k))
        test.assertEqual(got["deferred"], float(k["deferred"]["now"]), (gpu, k))
        test.assertEqual(got["deferrals_total"], k["deferred"]["count"], (gpu, k))
        if k["last_run"] is None:
            test.assertNotIn("last_run_timestamp_seconds", got)
        else:
            test.assertAlmostEqual(got["last_run_timestamp_seconds"],
                                   parse_time(k["last_run"]["created_at"])
                                   .replace(tzinfo=timezone.utc).timestamp(), places=2)


def node_deferral(d):
    n = d.get("/canaries").json()["node"]
    return n if n and "card busy" in (n[0]["deferred"]["reason"] or "") else None


def all_done(d):
    body = d.get("/canaries").json()
    lasts = [c["canaries"][0]["last_run"] for c in body["cards"]] + \
        [n["last_run"] for n in body["node"]]
    return body if all(last and last["outcome"] == "done" for last in lasts) else None


class NodeCanaryTest(unittest.TestCase):
    def tearDown(self):
        self.d.stop()

    def test_p2p_runs_once_for_the_node_after_every_card_is_quiet(self):
        self.d = Daemon(gpus=2, args=HEALTH)
        self.d.set_mode("busy")  # the control word is every card's
        self.d.start()
        node = wait_for(lambda: node_deferral(self.d), 30, "the node canary deferred")
        self.assertEqual([n["benchmark"] for n in node], ["p2p_bandwidth", "nccl_allreduce"])
        self.assertEqual(node[0]["period_s"], 86400)
        self.assertRegex(node[0]["deferred"]["reason"],
                         r"^GPU [01]: card busy: pid 4242 python3 on the card$")
        self.assertIs(node[0]["due"], True)
        self.assertIsNone(node[0]["last_run"])
        self.assertEqual(canary_runs(self.d), [])
        # /metrics says the same while held back (the card is still busy)
        assert_metrics_match(self, self.d, self.d.get("/canaries").json())
        self.assertEqual(canary_metrics(self.d)[("all", "p2p_bandwidth")]["deferred"], 1)
        self.d.set_mode("normal")
        body = wait_for(lambda: all_done(self.d), 60, "every canary ran once quiet")
        assert_metrics_match(self, self.d, self.d.get("/canaries").json())
        if shutil.which("promtool"):
            p = subprocess.run(["promtool", "check", "metrics"],
                               input=self.d.get("/metrics").body.encode(), capture_output=True)
            self.assertEqual(p.returncode, 0, (p.stdout + p.stderr).decode())
        runs = canary_runs(self.d)
        p2p = [r for r in runs if r["benchmark"] == "p2p_bandwidth"]
        self.assertEqual(len(p2p), 1, [(r["benchmark"], r["device"]["index"]) for r in runs])
        self.assertEqual(body["node"][0]["last_run"]["id"], p2p[0]["id"])
        nccl = [r for r in runs if r["benchmark"] == "nccl_allreduce"]
        self.assertEqual(len(nccl), 1, [(r["benchmark"], r["device"]["index"]) for r in runs])
        self.assertEqual(body["node"][1]["last_run"]["id"], nccl[0]["id"])
        # Each card's health batch ran on its card without p2p, and the
        # node's p2p was queued only after both had ended.
        for card in body["cards"]:
            last = card["canaries"][0]["last_run"]
            batch = self.d.get("/runs?batch=" + last["batch"]).json()["runs"]
            self.assertTrue(batch)
            self.assertNotIn("p2p_bandwidth", [r["benchmark"] for r in batch])
            self.assertNotIn("nccl_allreduce", [r["benchmark"] for r in batch])
            self.assertEqual({r["device"]["index"] for r in batch}, {card["index"]})
            self.assertGreaterEqual(parse_time(p2p[0]["created_at"]),
                                    parse_time(last["finished_at"]))
        # Quiet long past --canary-idle, across a restart: no second p2p.
        self.d.stop()
        self.d.start()
        time.sleep(5)
        self.assertEqual([r["id"] for r in canary_runs(self.d)
                          if r["benchmark"] == "p2p_bandwidth"], [p2p[0]["id"]])
        self.assertIs(self.d.get("/canaries").json()["node"][0]["due"], False)

    def test_one_gpu_has_no_node_canary_and_says_what_it_leaves_out(self):
        self.d = Daemon(args=HEALTH).start()
        body = self.d.get("/canaries").json()
        self.assertEqual(body["node"], [])
        self.assertEqual(body["left_out"], [
            {"canary": "health", "benchmark": b, "reason": "needs 2 GPUs; this node has 1"}
            for b in ("p2p_bandwidth", "nccl_allreduce")])
        # the card's own health canary is still there, without p2p
        self.assertEqual([k["benchmark"] for k in body["cards"][0]["canaries"]], ["health"])
        self.assertIn("canary health: p2p_bandwidth is left out: it needs 2 GPUs; "
                      "this node has 1", self.d.read_log())

    def test_a_p2p_canary_on_one_gpu_is_not_silently_dropped(self):
        self.d = Daemon(args=["--canary", "p2p_bandwidth@7d"]).start()
        body = self.d.get("/canaries").json()
        self.assertEqual((body["node"], body["cards"][0]["canaries"]), ([], []))
        self.assertEqual(body["left_out"], [
            {"canary": "p2p_bandwidth", "benchmark": "p2p_bandwidth",
             "reason": "needs 2 GPUs; this node has 1"}])

    def test_two_gpus_leave_nothing_out(self):
        self.d = Daemon(gpus=2, args=HEALTH).start()
        self.assertEqual(self.d.get("/canaries").json()["left_out"], [])


class CanaryOptionsTest(unittest.TestCase):
    def refused(self, *args):
        p = subprocess.run([DAEMON, "--listen", "127.0.0.1:0", *args], capture_output=True,
                           text=True, timeout=10)
        self.assertEqual(p.returncode, 2, p.stderr)
        return p.stderr.strip()

    def test_mistakes_are_refused_saying_which(self):
        self.assertIn("--canary bogus@24h: unknown benchmark 'bogus'",
                      self.refused("--canary", "bogus@24h"))
        self.assertIn("--canary health@soon: period 'soon'",
                      self.refused("--canary", "health@soon"))
        self.assertIn("--canary health: expected BENCHMARK@PERIOD",
                      self.refused("--canary", "health"))
        self.assertIn("--canary health@1h: a canary of health is given twice",
                      self.refused("--canary", "health@24h", "--canary", "health@1h"))
        self.assertIn("--canary hbm_bandwidth@1h: the canary health runs hbm_bandwidth already",
                      self.refused("--canary", "health@24h", "--canary", "hbm_bandwidth@1h"))
        self.assertIn("--canary-idle 0s: expected a span such as 90s, 10m, 1.5h, 24h or 7d",
                      self.refused("--canary-idle", "0s"))


if __name__ == "__main__":
    unittest.main()
