"""Issue 24, coverage: GET /coverage (every card this daemon knows against
every health benchmark: fresh, stale, never; totals; max_age; host=), its
/metrics gauges, a peer's cards through a pull, and `gpubench check`
(exit statuses 0/2/3, its first line, --textfile).

Runs come from the worker TEST DOUBLE (the health suite through the
daemon) and from SYNTHETIC runs imported with an old date and another host
(test_verdicts.make_run), which stand for a card checked long ago."""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402
from test_client import Client  # noqa: E402
from test_fleet import wait_for  # noqa: E402
from test_verdicts import make_run, uuid_of  # noqa: E402


def members(d):
    for s in d.get("/benchmarks").json()["suites"]:
        if s["name"] == "health":
            return [m["name"] for m in s["members"]]
    raise AssertionError("no health suite")


def run_health(d, device):
    r = d.post("/runs?wait=60", {"benchmark": "health", "device": device})
    assert r.status in (200, 202), r
    for run in r.json()["runs"]:
        d.wait_status(run["id"], ("done",), timeout=60)
    return r.json()["runs"]


def days_ago(run, days):
    """run, made days before now."""
    when = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() - days * 86400))
    run.update(created_at=when, started_at=when, finished_at=when)
    return run


def cards_by_uuid(answer):
    return {c["uuid"]: c for c in answer["cards"]}


def cells(card):
    return {c["benchmark"]: c for c in card["cells"]}


class CoverageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Daemon(gpus=2).start()
        cls.health = members(cls.d)
        cls.runs = run_health(cls.d, 0)
        # A card of another host, measured on 2026-01-10: stale in a 24 h
        # window, fresh in a window of years; and its invalid later run
        # must not count as a check.
        cls.old = days_ago(make_run(7, 10, host="synth-old"), 3)
        cls.invalid = make_run(8, 12, host="synth-bad", noisy=True)
        body = "".join(json.dumps(x) + "\n" for x in (cls.old, cls.invalid))
        r = cls.d.post("/runs/import", body)
        assert r.status == 200, r

    @classmethod
    def tearDownClass(cls):
        assert cls.d.stop() == 0

    def test_own_cards_fresh_and_never(self):
        a = self.d.get("/coverage").json()
        self.assertEqual(a["benchmarks"], self.health)
        self.assertEqual(a["max_age_s"], 86400)
        own = [c for c in a["cards"] if c["own"]]
        self.assertEqual([c["index"] for c in own], [0, 1])
        ran = {r["benchmark"]: r["id"] for r in self.runs}
        c0, c1 = cells(own[0]), cells(own[1])
        for b, cell in c0.items():
            self.assertEqual(cell["state"], "fresh", b)
            self.assertEqual(cell["run_id"], ran[b], b)
            self.assertLess(cell["age_s"], 120)
        # the GPU with no run of its own is listed, every cell never but
        # p2p_bandwidth's and nccl_allreduce's: one run measures every GPU
        # of the node
        self.assertEqual(set(c1), set(self.health))
        node = ("p2p_bandwidth", "nccl_allreduce")
        for b in node:
            self.assertEqual(c1[b]["run_id"], ran[b], b)
            self.assertEqual(c1[b]["state"], "fresh", b)
        for b, cell in c1.items():
            if b not in node:
                self.assertEqual((cell["state"], cell["run_id"], cell["age_s"]),
                                 ("never", None, None), b)
        self.assertEqual((own[0]["state"], own[0]["coverage_reason"]), ("healthy", None))
        # its p2p run is recent, so GET /cards calls it healthy; coverage
        # names what it still lacks
        self.assertEqual(own[1]["coverage_reason"], "%s never checked" % self.health[0])

    def test_stale_and_an_invalid_run_is_no_check(self):
        a = self.d.get("/coverage").json()
        old = cards_by_uuid(a)[uuid_of(7)]
        self.assertFalse(old["own"])
        self.assertEqual(old["host"], "synth-old")
        c = cells(old)
        self.assertEqual(c["smem_stride"]["state"], "stale")
        self.assertEqual(c["smem_stride"]["run_id"], self.old["id"])
        self.assertEqual(c["smem_stride"]["at"], self.old["finished_at"])
        self.assertGreater(c["smem_stride"]["age_s"], 86400)
        self.assertEqual(c["transpose"]["state"], "never")
        self.assertEqual(old["state"], "unknown")
        self.assertEqual(old["coverage_reason"], "smem_stride last checked 3d ago (max 24h)")
        # p2p needs two GPUs: on a host with one known card it is left out
        self.assertNotIn("p2p_bandwidth", c)
        self.assertNotIn("nccl_allreduce", c)
        self.assertEqual([x["benchmark"] for x in old["left_out"]],
                         ["p2p_bandwidth", "nccl_allreduce"])
        # the card whose only run is invalid: known, never checked
        bad = cells(cards_by_uuid(a)[uuid_of(8)])
        self.assertEqual(bad["smem_stride"]["state"], "never")
        # a second card on one host: p2p is theirs to run
        self.assertIn("p2p_bandwidth", cells([c for c in a["cards"] if c["own"]][1]))

    def test_totals_count_every_cell(self):
        a = self.d.get("/coverage").json()
        counted = {"fresh": 0, "stale": 0, "never": 0}
        for card in a["cards"]:
            for cell in card["cells"]:
                counted[cell["state"]] += 1
        for k, v in counted.items():
            self.assertEqual(a["totals"][k], v, k)
        n = len(self.health)
        self.assertEqual(counted["fresh"], n + 2)  # and GPU 1's p2p and all-reduce
        self.assertEqual(counted["stale"], 1)

    def test_max_age(self):
        a = self.d.get("/coverage?max_age=7d").json()
        self.assertEqual(a["max_age_s"], 7 * 86400)
        self.assertEqual(cells(cards_by_uuid(a)[uuid_of(7)])["smem_stride"]["state"], "fresh")
        a = self.d.get("/coverage?max_age=1s").json()
        wait_for(lambda: self.d.get("/coverage?max_age=1").json()["totals"]["fresh"] == 0,
                 what="a 1 s window to leave nothing fresh")
        for bad in ("0", "-1h", "24 h", "h", "1w", "99999999d"):
            r = self.d.get("/coverage?max_age=" + bad.replace(" ", "%20"))
            self.assertEqual(r.status, 400, bad)
            self.assertEqual(r.json()["error"]["field"], "max_age")

    def test_host_filter(self):
        a = self.d.get("/coverage?host=synth-old").json()
        self.assertEqual([c["uuid"] for c in a["cards"]], [uuid_of(7)])
        self.assertEqual(a["totals"]["fresh"], 0)
        own_host = a["host"]
        a = self.d.get("/coverage?host=" + own_host).json()
        self.assertEqual([c["own"] for c in a["cards"]], [True, True])
        self.assertEqual(self.d.get("/coverage?host=nowhere").json()["cards"], [])
        self.assertEqual(self.d.get("/coverage?hots=x").status, 400)

    def test_metrics(self):
        text = self.d.get("/metrics").body
        run = cells([c for c in self.d.get("/coverage").json()["cards"] if c["own"]][0])
        m = re.search(r'^gpubench_coverage_age_seconds\{host="[^"]+",uuid="%s",gpu="0",'
                      r'benchmark="smem_stride"\} (\S+)$' % re.escape(uuid_of_gpu(0)), text, re.M)
        self.assertIsNotNone(m, text[-3000:])
        self.assertLess(float(m.group(1)), 120)
        self.assertIsNotNone(run)
        self.assertRegex(text, r'(?m)^gpubench_card_state\{host="synth-old",uuid="%s",gpu="0",'
                               r'state="unknown"\} 1$' % re.escape(uuid_of(7)))
        self.assertRegex(text, r'(?m)^gpubench_card_state\{host="[^"]+",uuid="%s",gpu="0",'
                               r'state="healthy"\} 1$' % re.escape(uuid_of_gpu(0)))
        # a cell never checked has no age series (absent, not a made-up age)
        self.assertNotRegex(text, r'gpubench_coverage_age_seconds\{[^}]*uuid="%s",gpu="1",'
                            r'benchmark="smem_stride"' % re.escape(uuid_of_gpu(1)))
        self.assertRegex(text, r'(?m)^gpubench_coverage_cells\{state="stale"\} 1$')


def read(path):
    with open(path) as f:
        return f.read()


def uuid_of_gpu(index, base=0):
    """The test double's card (tests/fake_worker.c, GPUBENCH_FAKE_UUID_BASE)."""
    return "GPU-00000000-fake-4000-8000-%012d" % (base + index)


class PeerCoverageTest(unittest.TestCase):
    def test_a_peers_cards_come_with_its_runs(self):
        a = Daemon(env={"GPUBENCH_FAKE_UUID_BASE": "100"}).start()
        b = Daemon(gpus=1)
        b.args += ["--peer", "http://127.0.0.1:%d" % a.port, "--peer-interval", "1"]
        b.start()
        try:
            runs = run_health(a, 0)
            wait_for(lambda: uuid_of_gpu(0, 100) in cards_by_uuid(b.get("/coverage").json()),
                     what="the peer's card in B's coverage")
            wait_for(lambda: cards_by_uuid(b.get("/coverage").json())[uuid_of_gpu(0, 100)]
                     ["cells"][0]["state"] == "fresh", what="the peer's runs pulled")
            card = cards_by_uuid(b.get("/coverage").json())[uuid_of_gpu(0, 100)]
            self.assertFalse(card["own"])
            pulled = {c["benchmark"]: c["run_id"] for c in card["cells"]}
            for r in runs:
                if r["benchmark"] in pulled:
                    wait_for(lambda: cells(cards_by_uuid(b.get("/coverage").json())
                                           [uuid_of_gpu(0, 100)])[r["benchmark"]]["run_id"]
                             == r["id"], what="run " + r["benchmark"])
            self.assertTrue(cards_by_uuid(b.get("/coverage").json())[uuid_of_gpu(0)]["own"])
        finally:
            b.stop()
            a.stop()


H200 = {"GPUBENCH_FAKE_GPU_NAME": "NVIDIA H200"}


class FailingTest(unittest.TestCase):
    """A missed floor: the cell is failing at once; the card is degraded,
    and gpubench check exits 1 with the floor as its first line, once a
    rerun confirms it (the test double named an H200, slow=1.08 puts its
    triad under the floor: test_cards.py)."""

    def test_failing_then_degraded(self):
        d = Daemon(env=H200, args=["--confirm-runs", "1"]).start()
        try:
            client = Client(d)
            r = d.post("/runs?wait=30", {"benchmark": "hbm_bandwidth"})
            self.assertEqual(r.json()["status"], "done", r)
            card = d.get("/coverage").json()["cards"][0]
            self.assertEqual(cells(card)["hbm_bandwidth"]["state"], "fresh")
            d.set_mode("slow=1.08")
            r = d.post("/runs?wait=30", {"benchmark": "hbm_bandwidth"})
            self.assertEqual(r.json()["status"], "done", r)
            a = d.get("/coverage").json()
            self.assertEqual(cells(a["cards"][0])["hbm_bandwidth"]["state"], "failing")
            self.assertEqual(a["totals"]["failing"], 1)
            wait_for(lambda: d.get("/coverage").json()["cards"][0]["state"] == "degraded",
                     what="the confirming run")
            card = d.get("/coverage").json()["cards"][0]
            self.assertEqual(card["reason"], d.get("/cards/" + card["uuid"]).json()["reason"])
            rc, out, _ = client("check", "--max-age", "7d")
            self.assertEqual(rc, 1, out)
            first = out.splitlines()[0]
            self.assertEqual(first, "gpubench: GPU 0 (…0000) " + card["reason"])
            self.assertIn("triad", first)
            self.assertLess(len(first), 100)
            text = d.get("/metrics").body
            self.assertRegex(text, r'(?m)^gpubench_card_state\{[^}]*gpu="0",state="degraded"\} 1$')
            self.assertRegex(text, r'(?m)^gpubench_coverage_cells\{state="failing"\} 1$')
        finally:
            d.stop()

    def test_a_hub_sees_the_card_degraded_as_its_node_does(self):
        """The hub raises no alert for runs it pulled; the two runs that
        missed the floor in a row are its record (card_repeat_faults)."""
        d = Daemon(env=H200, args=["--confirm-runs", "1"]).start()
        hub = Daemon(gpus=0, args=["--peer", "http://127.0.0.1:%d" % d.port,
                                   "--peer-interval", "1"]).start()
        try:
            run_health(d, 0)
            d.set_mode("slow=1.08")
            r = d.post("/runs?wait=30", {"benchmark": "hbm_bandwidth"})
            self.assertEqual(r.json()["status"], "done", r)
            node = wait_for(lambda: (lambda c: c["state"] == "degraded" and c)(
                d.get("/coverage").json()["cards"][0]), what="the confirming run")
            confirming = [x for x in d.get("/runs?benchmark=hbm_bandwidth&limit=5").json()["runs"]
                          if x.get("confirms")]
            self.assertEqual(len(confirming), 1)
            wait_for(lambda: hub.get("/runs/" + confirming[0]["id"]).status == 200,
                     what="the hub to pull the confirming run")
            card = cards_by_uuid(hub.get("/coverage").json())[node["uuid"]]
            self.assertEqual((card["state"], card["reason"]), ("degraded", node["reason"]))
            self.assertEqual(hub.get("/alerts").json()["alerts"], [])
            rc, out, _ = Client(hub)("check", "--host", node["host"])
            self.assertEqual(rc, 1, out)
            self.assertEqual(out.splitlines()[0], "gpubench: GPU 0 (…0000) " + node["reason"])
            # A run that meets the floor again: healthy at the node and the hub.
            d.set_mode("normal")
            r = d.post("/runs?wait=30", {"benchmark": "hbm_bandwidth"})
            wait_for(lambda: hub.get("/runs/" + r.json()["id"]).status == 200,
                     what="the hub to pull the passing run")
            for where in (d, hub):
                card = cards_by_uuid(where.get("/coverage").json())[node["uuid"]]
                self.assertEqual(card["state"], "healthy", card)
            self.assertEqual(Client(hub)("check", "--host", node["host"])[0], 0)
        finally:
            hub.stop()
            d.stop()


def minutes_ago(run, minutes):
    when = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() - minutes * 60))
    run.update(created_at=when, started_at=when, finished_at=when)
    return run


def without_ages(answer):
    """answer's cards with each age_s left out (they move between reads)."""
    for card in answer["cards"]:
        for cell in card["cells"] + card["deep_cells"]:
            cell.pop("age_s")
    return answer


class KeptCoverageTest(unittest.TestCase):
    """Issue 33: a hub's whole /coverage is kept per host and made again
    only for the hosts a write touched (server/http/coverage_cache.c).  An
    answer is never older than the last stored run: each write below is
    seen by the very next read, with no wait, and a host's cards read whole
    are those its ?host= read (made afresh) says."""

    def setUp(self):
        self.d = Daemon(gpus=0).start()
        self.addCleanup(lambda: self.assertEqual(self.d.stop(), 0))

    def imported(self, *runs):
        """runs stored as a hub stores what it pulls, each of them new."""
        r = self.d.post("/runs/import", "".join(json.dumps(x) + "\n" for x in runs))
        self.assertEqual((r.status, r.json()["imported"]), (200, len(runs)), r)

    def whole(self):
        return cards_by_uuid(self.d.get("/coverage").json())

    def test_a_stored_run_is_seen_at_once(self):
        a1, b1 = minutes_ago(make_run(41, 1, host="rack-a"), 90), \
            minutes_ago(make_run(42, 1, host="rack-b"), 90)
        self.imported(a1, b1)
        cards = self.whole()  # kept from here
        self.assertEqual(cells(cards[uuid_of(41)])["smem_stride"]["run_id"], a1["id"])
        self.assertEqual(cells(cards[uuid_of(42)])["smem_stride"]["run_id"], b1["id"])
        # a newer run of rack-a's card: the next read has it, rack-b's as it was
        a2 = minutes_ago(make_run(41, 2, host="rack-a"), 10)
        self.imported(a2)
        cards = self.whole()
        self.assertEqual(cells(cards[uuid_of(41)])["smem_stride"]["run_id"], a2["id"])
        self.assertEqual(cells(cards[uuid_of(42)])["smem_stride"]["run_id"], b1["id"])
        # its invalid run: no check, the valid one stays (the touch made it again)
        bad = minutes_ago(make_run(41, 3, host="rack-a", noisy=True), 5)
        self.imported(bad)
        self.assertEqual(cells(self.whole()[uuid_of(41)])["smem_stride"]["run_id"], a2["id"])
        # a host not seen before
        c1 = minutes_ago(make_run(43, 1, host="rack-c"), 1)
        self.imported(c1)
        cards = self.whole()
        self.assertEqual(cells(cards[uuid_of(43)])["smem_stride"]["state"], "fresh")
        # the card moved to another host: listed under both, each read whole
        # as its own host's read says
        d1 = minutes_ago(make_run(41, 4, host="rack-d"), 1)
        self.imported(d1)
        whole = without_ages(self.d.get("/coverage").json())
        for host in ("rack-a", "rack-b", "rack-c", "rack-d"):
            one = without_ages(self.d.get("/coverage?host=" + host).json())
            self.assertEqual([c for c in whole["cards"] if c["host"] == host], one["cards"], host)
        self.assertEqual(len(whole["cards"]), 4)

    def test_a_window_passing_is_seen(self):
        """Time alone: a cell fresh in a 3 s window is stale 3 s later,
        with no write in between (the kept text holds until then only)."""
        e1 = minutes_ago(make_run(44, 1, host="rack-e"), 0)
        self.imported(e1)
        first = cells(cards_by_uuid(self.d.get("/coverage?max_age=4").json())[uuid_of(44)])
        self.assertEqual(first["smem_stride"]["state"], "fresh")
        time.sleep(4.5)
        later = cards_by_uuid(self.d.get("/coverage?max_age=4").json())[uuid_of(44)]
        self.assertEqual(cells(later)["smem_stride"]["state"], "stale")
        self.assertGreaterEqual(cells(later)["smem_stride"]["age_s"], 4)
        self.assertEqual(later["state"], "unknown")


class CheckTest(unittest.TestCase):
    """`gpubench check`: Slurm's HealthCheckProgram reads its exit status
    and the first line as the drain reason."""

    def setUp(self):
        self.d = Daemon(gpus=2).start()
        self.client = Client(self.d)

    def tearDown(self):
        self.d.stop()

    def test_exit_statuses_and_first_line(self):
        rc, out, err = self.client("check")
        self.assertEqual(rc, 2, (out, err))
        first = out.splitlines()[0]
        self.assertRegex(first, r"^gpubench: GPU 0 \(…0000\) smem_stride never checked$")
        self.assertLess(len(first), 100)
        run_health(self.d, 0)
        rc, out, _ = self.client("check")
        self.assertEqual(rc, 2)
        self.assertTrue(out.startswith("gpubench: GPU 1 (…0001) smem_stride never checked\n"), out)
        run_health(self.d, 1)
        rc, out, err = self.client("check")
        self.assertEqual(rc, 0, (out, err))
        self.assertRegex(out.splitlines()[0], r"^gpubench: 2 GPUs of \S+ healthy, checked within 24h$")
        # every card on its own line after the first
        self.assertEqual(len(out.splitlines()), 3, out)
        rc, out, _ = self.client("check", "--max-age", "1s")
        wait_for(lambda: self.client("check", "--max-age", "1s")[0] == 2, what="stale in 1 s")
        rc, out, _ = self.client("check", "--max-age", "1s")
        self.assertRegex(out.splitlines()[0], r"^gpubench: GPU 0 \(…0000\) smem_stride last "
                                             r"checked \d+s ago \(max 1s\)$")

    def test_host_and_no_gpu(self):
        rc, out, _ = self.client("check", "--host", "nowhere")
        self.assertEqual(rc, 2)
        self.assertEqual(out.splitlines()[0], "gpubench: no GPU of nowhere known")
        r = self.d.post("/runs/import",
                        json.dumps(days_ago(make_run(9, 10, host="synth-old"), 3)) + "\n")
        self.assertEqual(r.status, 200, r)
        rc, out, _ = self.client("check", "--host", "synth-old", "--max-age", "7d")
        self.assertEqual(rc, 2, out)  # transpose and the rest never ran there
        self.assertTrue(out.startswith("gpubench: GPU 0 (…%s) transpose never checked\n"
                                       % uuid_of(9)[-4:]), out)

    def test_errors_exit_3(self):
        rc, out, err = self.client("check", "--max-age", "soon")
        self.assertEqual(rc, 3)
        self.assertIn("--max-age", err)
        rc, out, err = self.client("check", env={"GPUBENCH_URL": "http://127.0.0.1:1"})
        self.assertEqual(rc, 3)
        self.assertTrue(out.startswith("gpubench: "), out)

    def test_textfile(self):
        folder = tempfile.mkdtemp(prefix="gpubench-textfile-")
        path = os.path.join(folder, "gpubench.prom")
        rc, _, _ = self.client("check", "--textfile", folder)
        self.assertEqual(rc, 2)
        text = read(path)
        self.assertRegex(text, r'(?m)^gpubench_node_healthy\{host="[^"]+"\} 0$')
        self.assertRegex(text, r'(?m)^gpubench_check_status\{host="[^"]+"\} 2$')
        self.assertRegex(text, r'(?m)^gpubench_check_card_state\{host="[^"]+",uuid="%s",gpu="1",'
                               r'state="unknown"\} 1$' % re.escape(uuid_of_gpu(1)))
        run_health(self.d, 0)
        run_health(self.d, 1)
        rc, _, _ = self.client("check", "--textfile", folder)
        self.assertEqual(rc, 0)
        text = read(path)
        self.assertRegex(text, r'(?m)^gpubench_node_healthy\{host="[^"]+"\} 1$')
        self.assertRegex(text, r'(?m)^gpubench_check_card_state\{host="[^"]+",uuid="%s",gpu="1",'
                               r'state="healthy"\} 1$' % re.escape(uuid_of_gpu(1)))
        # written whole by a rename: no temporary file left beside it
        self.assertEqual(os.listdir(folder), ["gpubench.prom"])
        # the daemon down: the node is not healthy, and the file says so
        rc, _, _ = self.client("check", "--textfile", folder,
                               env={"GPUBENCH_URL": "http://127.0.0.1:1"})
        self.assertEqual(rc, 3)
        text = read(path)
        self.assertRegex(text, r'(?m)^gpubench_node_healthy\{host="[^"]*"\} 0$')
        self.assertRegex(text, r'(?m)^gpubench_check_status\{host="[^"]*"\} 3$')
        promtool = subprocess.run(["sh", "-c", "command -v promtool"], capture_output=True,
                                  text=True).stdout.strip()
        if promtool:
            p = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                               text=True)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        else:
            print("promtool not found: the textfile's lint skipped", file=sys.stderr)
        rc, _, err = self.client("check", "--textfile", os.path.join(folder, "missing"))
        self.assertEqual(rc, 3)
        self.assertIn("missing", err)


if __name__ == "__main__":
    unittest.main()
