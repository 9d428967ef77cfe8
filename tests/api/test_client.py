"""The command-line client (client/, bin/gpubench) driven as a user and a
CI job would, against a real gpubenchd with the worker's TEST DOUBLE, and
the markdown reports (GET /runs/ID.md, GET /compare.md) it points people
at.  The fleet for compare's exit statuses is SYNTHETIC (test_verdicts.py's
make_run, imported); nothing here was measured on a GPU.

The client's binary comes from GPUBENCH_CLIENT (ctest sets it)."""
import json
import os
import pty
import select
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402
from test_verdicts import make_run, uuid_of  # noqa: E402

CLIENT = os.environ.get("GPUBENCH_CLIENT", "build/bin/gpubench")
ESC = "\033"


class Client:
    def __init__(self, daemon, env=None):
        self.env = dict(os.environ)
        self.env.pop("NO_COLOR", None)
        self.env.pop("GPUBENCH_TOKEN", None)
        self.env["GPUBENCH_URL"] = "http://127.0.0.1:%d" % daemon.port
        self.env.update(env or {})

    def __call__(self, *args, env=None, timeout=60):
        e = dict(self.env)
        e.update(env or {})
        p = subprocess.run([CLIENT] + list(args), capture_output=True, text=True, env=e,
                           timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def pty(self, *args, env=None, timeout=60):
        """Runs the client with a terminal for stdout; all it wrote, and its exit status."""
        e = dict(self.env)
        e.update(env or {})
        master, slave = pty.openpty()
        p = subprocess.Popen([CLIENT] + list(args), stdout=slave, stderr=subprocess.PIPE, env=e)
        os.close(slave)
        out = b""
        deadline = time.time() + timeout
        while time.time() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the client closed its end
                    break
                if not chunk:
                    break
                out += chunk
            elif p.poll() is not None:
                break
        os.close(master)
        p.wait(10)
        err = p.stderr.read().decode()
        p.stderr.close()
        return p.returncode, out.decode(errors="replace"), err


def api_error(resp):
    return resp.json()["error"]


class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Daemon(gpus=2, env={"GPUBENCH_FAKE_DELAY_MS": "30"}).start()
        cls.gb = Client(cls.d)
        runs = []
        for card in (1, 2):  # the same distribution
            runs += [make_run(card, day) for day in (10, 11, 12)]
        runs += [make_run(3, day, shift={32: 1.03}) for day in (10, 11, 12)]  # stride 32 slower
        runs.append(make_run(4, 12, noise=0.035, spread_evenly=True))  # too noisy to say
        runs.append(make_run(5, 12, shift={32: 0.95}))  # faster
        cls.fleet = runs
        r = cls.d.post("/runs/import", "".join(json.dumps(x) + "\n" for x in runs))
        assert r.status == 200 and r.json()["imported"] == len(runs), r

    @classmethod
    def tearDownClass(cls):
        assert cls.d.stop() == 0

    # -- run ------------------------------------------------------------
    def test_run_wait_prints_the_table_without_a_bar(self):
        rc, out, err = self.gb("run", "smem_stride", "--strides", "1,2,32", "--label", "cli",
                               "--param", "samples=7", "--device", "1", "--wait")
        self.assertEqual(rc, 0, err)
        self.assertNotIn(ESC, out)  # no colour, no bar: stdout is a pipe
        self.assertNotIn("\r", out)
        run_id = out.split("run:")[1].split()[0]
        run = self.d.get("/runs/" + run_id).json()
        self.assertEqual(run["status"], "done")
        self.assertEqual(run["params"]["strides"], [1, 2, 32])
        self.assertEqual(run["params"]["samples"], 7)
        self.assertEqual(run["label"], "cli")
        self.assertEqual(run["device"]["index"], 1)
        table = [line.split() for line in out.splitlines() if line[:1].isdigit()]
        self.assertEqual([row[0] for row in table], ["1", "2", "32"])
        for row, api in zip(table, run["results"]["rows"]):
            self.assertAlmostEqual(float(row[2]), api["median_ms"], places=3)
        self.assertIn(run["device"]["name"], out)

    def test_run_json_is_the_daemons(self):
        rc, out, err = self.gb("run", "smem_stride", "--strides", "1,2", "--wait", "--json")
        self.assertEqual(rc, 0, err)
        run = json.loads(out)
        self.assertEqual(run["status"], "done")
        self.assertEqual(run, self.d.get("/runs/" + run["id"]).json())
        # Without --wait: the 202's run, queued or on its way.
        rc, out, err = self.gb("run", "smem_stride", "--strides", "1", "--json")
        self.assertEqual(rc, 0, err)
        self.assertIn(json.loads(out)["status"], ("queued", "running", "done"))

    def test_run_all_devices_waits_for_each(self):
        rc, out, err = self.gb("run", "smem_stride", "--strides", "1,4", "--device", "all",
                               "--wait")
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.count("run:"), 2)
        self.assertEqual(out.count("smem_stride, done"), 2)

    def wait_idle(self, timeout=30):
        """No run queued or running: the next job the double starts is the
        next run posted (test_run_json_is_the_daemons leaves one behind,
        which on a busy machine could take a fault mode meant for another)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            runs = self.d.get("/runs?limit=500").json()["runs"]
            if not [r for r in runs if r["status"] in ("queued", "running")]:
                return
            time.sleep(0.05)
        self.fail("runs still queued or running after %d s" % timeout)

    def test_run_that_fails_exits_1(self):
        self.wait_idle()
        self.d.set_mode("once:fault")
        rc, out, err = self.gb("run", "smem_stride", "--strides", "1", "--wait")
        self.assertEqual(rc, 1, out + err)
        self.assertIn("failed", out)
        self.assertIn("error:", out)

    def test_daemon_errors_are_passed_on(self):
        for args, method, path, body in [
            (("run", "nosuch"), "POST", "/runs", {"benchmark": "nosuch", "params": {}}),
            (("run", "smem_stride", "--param", "stides=[1]"), "POST", "/runs",
             {"benchmark": "smem_stride", "params": {"stides": [1]}}),
            (("show", "01900000-0000-7000-8000-0000000000ff"), "GET",
             "/runs/01900000-0000-7000-8000-0000000000ff", None),
            (("runs", "--status", "sleeping"), "GET", "/runs?status=sleeping", None),
            (("compare", "--baseline", "nope", "--candidate", "card:x"), "GET",
             "/compare?baseline=nope&candidate=card:x", None),
        ]:
            with self.subTest(args=args):
                want = api_error(self.d.request(method, path, body=body))
                rc, out, err = self.gb(*args)
                self.assertEqual(rc, 3, (out, err))
                self.assertIn(want["message"], err)
                self.assertIn(want["code"], err)
                rc, out, err = self.gb(*args, "--json")
                self.assertEqual(json.loads(out)["error"], want)
        rc, out, err = self.gb("runs", "--url", "http://127.0.0.1:1")
        self.assertEqual(rc, 3)
        self.assertIn("127.0.0.1:1", err)

    def test_usage_errors(self):
        for args in (("runs", "--strides", "1"), ("frobnicate",), ("run",), ("show",),
                     ("compare", "--baseline", "x"), ("run", "smem_stride", "--strides", "1,a")):
            with self.subTest(args=args):
                rc, out, err = self.gb(*args)
                self.assertEqual(rc, 3, (out, err))
                self.assertTrue(err.startswith("gpubench"), err)

    def test_help_of_each_command(self):
        rc, out, _ = self.gb("--help")
        self.assertEqual(rc, 0)
        for cmd, has, lacks in [("run", "--strides", "--baseline"), ("runs", "--status", "--wait"),
                                ("show", "--json", "--limit"), ("compare", "--margin", "--param"),
                                ("fleet", "--benchmark", "--candidate"), ("import", "--url", "--label")]:
            self.assertIn(cmd, out)
            rc, text, _ = self.gb(cmd, "--help")
            self.assertEqual(rc, 0)
            self.assertIn("usage: gpubench " + cmd, text)
            self.assertIn(has, text)
            self.assertNotIn(lacks, text)

    # -- runs, show, fleet ---------------------------------------------------
    def test_runs_and_show(self):
        rc, out, err = self.gb("runs", "--benchmark", "smem_stride", "--limit", "3", "--json")
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out), self.d.get("/runs?benchmark=smem_stride&limit=3").json())
        rc, out, err = self.gb("runs", "--valid", "false", "--limit", "500")
        self.assertEqual(rc, 0, err)
        invalid = {r["id"] for r in self.d.get("/runs?valid=false&limit=500").json()["runs"]}
        shown = {line.split()[0] for line in out.splitlines()[1:] if line[:1].isdigit()}
        self.assertEqual(shown, invalid)
        run = self.fleet[0]
        rc, out, err = self.gb("show", run["id"])
        self.assertEqual(rc, 0, err)
        for text in (run["id"], "Synthetic H200", uuid_of(1), "560.35", "synth"):
            self.assertIn(text, out)
        rc, out, err = self.gb("show", run["id"], "--json")
        self.assertEqual(json.loads(out), self.d.get("/runs/" + run["id"]).json())

    def test_fleet(self):
        rc, out, err = self.gb("fleet", "--benchmark", "smem_stride", "--json")
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out), self.d.get("/fleet?benchmark=smem_stride").json())
        rc, out, err = self.gb("fleet", "--benchmark", "smem_stride")
        self.assertEqual(rc, 0, err)
        self.assertIn("Synthetic H200", out)
        self.assertIn(uuid_of(3), out)

    # -- compare: the exit status is the verdict ------------------------------
    def compare(self, base, cand, *extra):
        return self.gb("compare", "--benchmark", "smem_stride", "--baseline", base,
                       "--candidate", cand, "--until", "2026-01-15", *extra)

    def test_compare_exit_statuses(self):
        cases = [(1, 2, 0, "same"), (1, 3, 1, "slower"), (1, 4, 2, "inconclusive"),
                 (1, 5, 0, "faster")]
        for base, cand, code, verdict in cases:
            with self.subTest(candidate=cand):
                b, c = "card:" + uuid_of(base), "card:" + uuid_of(cand)
                api = self.d.get("/compare?benchmark=smem_stride&baseline=%s&candidate=%s"
                                 "&until=2026-01-15" % (b, c)).json()
                self.assertEqual(api["verdict"], verdict)
                rc, out, err = self.compare(b, c)
                self.assertEqual(rc, code, out + err)
                self.assertIn("verdict: " + verdict, out)
                rc, out, err = self.compare(b, c, "--json")
                self.assertEqual(rc, code)
                self.assertEqual(json.loads(out), api)
        # A margin wide enough makes card 3's 3% the same.
        rc, out, _ = self.compare("card:" + uuid_of(1), "card:" + uuid_of(3), "--margin", "0.05")
        self.assertEqual(rc, 0, out)

    def test_compare_runs_of_the_double_slowed_down(self):
        ids = {}
        for label, mode in (("before", "normal"), ("after", "slow=1.05")):
            self.d.set_mode(mode)
            ids[label] = [self.d.post("/runs?wait=30", {"benchmark": "smem_stride", "device": 0,
                                                         "label": label,
                                                         "params": {"strides": [1, 32]}}).json()["id"]
                          for _ in range(2)]
        self.d.set_mode("normal")
        rc, out, err = self.gb("compare", "--baseline", "label:before", "--candidate",
                               "label:after", "--benchmark", "smem_stride")
        self.assertEqual(rc, 1, out + err)
        rc, out, err = self.gb("compare", "--baseline", "runs:" + ",".join(ids["before"]),
                               "--candidate", "runs:" + ids["before"][0])
        self.assertEqual(rc, 0, out + err)

    def test_not_comparable_exits_2(self):
        other = make_run(6, 12, strides=(1, 2))
        self.assertEqual(self.d.post("/runs/import", json.dumps(other) + "\n").status, 200)
        rc, out, err = self.compare("card:" + uuid_of(1), "card:" + uuid_of(6))
        self.assertEqual(rc, 2, out + err)
        self.assertIn("not comparable", out)

    # -- import -------------------------------------------------------------
    def test_import(self):
        runs = [make_run(7, 14, label="imported"), make_run(7, 15, label="imported")]
        with tempfile.NamedTemporaryFile("w", suffix=".ndjson", delete=False) as f:
            f.write("".join(json.dumps(r) + "\n" for r in runs))
        rc, out, err = self.gb("import", f.name)
        self.assertEqual(rc, 0, err)
        self.assertIn("imported 2 runs", out)
        for r in runs:
            self.assertEqual(self.d.get("/runs/" + r["id"]).status, 200)
        rc, out, err = self.gb("import", f.name, "--json")  # twice: nothing new
        self.assertEqual(json.loads(out)["imported"], 0)
        with open(f.name, "a") as g:
            g.write("{not json\n")
        with open(f.name) as g:
            want = api_error(self.d.post("/runs/import", g.read()))
        rc, out, err = self.gb("import", f.name)
        self.assertEqual(rc, 3)
        self.assertIn(want["message"], err)
        rc, out, err = self.gb("import", "/nonexistent/runs.ndjson")
        self.assertEqual(rc, 3)
        self.assertIn("No such file", err)
        os.unlink(f.name)

    # -- markdown reports ---------------------------------------------------------
    def test_run_markdown(self):
        run = self.fleet[0]
        r = self.d.get("/runs/%s.md" % run["id"])
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.header("Content-Type"), "text/markdown; charset=utf-8")
        lines = r.body.splitlines()
        self.assertTrue(lines[0].startswith("Synthetic H200 (%s), driver 560.35" % uuid_of(1)), lines[0])
        self.assertIn("2026-01-10", lines[0])
        self.assertIn("| Stride | Predicted degree | Time |", r.body)
        self.assertIn("valid", r.body)
        self.assertIn("Synthetic: no number here was measured on a GPU.", r.body)
        table = [line for line in lines if line.startswith("| ") and line[2].isdigit()]
        self.assertEqual(len(table), 3)
        for line, row in zip(table, run["results"]["rows"]):
            cells = [c.strip() for c in line.strip("|").split("|")]
            self.assertEqual(cells[0], str(row["stride"]))
            self.assertEqual(cells[1], str(row["predicted_degree"]))
            self.assertEqual(cells[2], "%.3f ms" % row["median_ms"])
        self.assertEqual(self.d.get("/runs/01900000-0000-7000-8000-0000000000ff.md").status, 404)
        self.assertEqual(self.d.get("/runs/%s.md?x=1" % run["id"]).status, 400)

    def test_compare_markdown(self):
        q = "benchmark=smem_stride&baseline=card:%s&candidate=card:%s&until=2026-01-15" % (
            uuid_of(1), uuid_of(3))
        api = self.d.get("/compare?" + q).json()
        r = self.d.get("/compare.md?" + q)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.header("Content-Type"), "text/markdown; charset=utf-8")
        self.assertIn("Baseline `card:%s`: Synthetic H200" % uuid_of(1), r.body)
        self.assertIn("driver 560.35", r.body)
        self.assertIn("2026-01-12", r.body)  # the newest run's date
        self.assertIn("| Stride | Baseline | Candidate | Shift | 95% interval | Verdict |", r.body)
        self.assertIn("Verdict: **slower** (stride 32)", r.body)
        rows = [line for line in r.body.splitlines() if line.startswith("| ") and line[2].isdigit()]
        self.assertEqual([line.split("|")[-2].strip() for line in rows],
                         [row["verdict"] for row in api["rows"]])
        # Without baseline/candidate: one column a card.
        r = self.d.get("/compare.md?benchmark=smem_stride&latest=3")
        self.assertEqual(r.status, 200, r)
        for card in (1, 2, 3):
            self.assertIn(uuid_of(card), r.body)
        self.assertIn("| Stride | Card 1 | Card 2 |", r.body)
        # The same refusals as /compare.
        for bad in ("", "benchmark=smem_stride&baseline=card:x", "benchmark=smem_stride&bogus=1"):
            want = self.d.get("/compare?" + bad)
            got = self.d.get("/compare.md?" + bad)
            self.assertEqual((got.status, got.json()), (want.status, want.json()))


class TerminalTest(unittest.TestCase):
    """The progress bar on a terminal (a pty), and NO_COLOR; a token."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="gpubench-client-")
        cls.tokens = os.path.join(cls.tmp, "tokens")
        with open(cls.tokens, "w") as f:
            f.write("s3cret-token-of-the-client\n")
        cls.d = Daemon(gpus=1, env={"GPUBENCH_FAKE_DELAY_MS": "60"},
                       args=["--token-file", cls.tokens]).start()
        cls.gb = Client(cls.d, env={"GPUBENCH_TOKEN": "s3cret-token-of-the-client"})

    @classmethod
    def tearDownClass(cls):
        assert cls.d.stop() == 0

    def test_bar_shows_the_queue_then_progress(self):
        blocker = self.d.post("/runs", {"benchmark": "smem_stride", "params": {"strides": list(range(1, 21))}},
                              headers={"Authorization": "Bearer s3cret-token-of-the-client"})
        self.assertEqual(blocker.status, 202, blocker)
        rc, out, err = self.gb.pty("run", "smem_stride", "--strides", ",".join(map(str, range(1, 31))),
                                   "--wait")
        self.assertEqual(rc, 0, err)
        self.assertIn("queued, position 1", out)
        self.assertRegex(out, r"\[#+-+\] \d+/30")  # a bar part way
        self.assertIn("\r\033[K", out)  # redrawn in place
        self.assertIn("\033[36m", out)  # in colour on a terminal
        self.assertIn("\033[1mstride", out)  # the table's bold header
        self.assertIn("smem_stride, done", out)

    def test_no_color(self):
        rc, out, err = self.gb.pty("run", "smem_stride", "--strides", "1,2,3,4", "--wait",
                                   env={"NO_COLOR": "1"})
        self.assertEqual(rc, 0, err)
        self.assertIn("\r\033[K", out)  # the bar is still drawn
        self.assertNotIn("\033[36m", out)
        self.assertNotIn("\033[1m", out)

    def test_token(self):
        rc, out, err = self.gb("run", "smem_stride", "--strides", "1", env={"GPUBENCH_TOKEN": ""})
        self.assertEqual(rc, 3)
        self.assertIn("unauthorized", err)
        rc, out, err = self.gb("run", "smem_stride", "--strides", "1", "--token-file", self.tokens,
                               env={"GPUBENCH_TOKEN": "wrong"})
        self.assertEqual(rc, 0, err)
        rc, out, err = self.gb("run", "smem_stride", "--strides", "1")  # GPUBENCH_TOKEN
        self.assertEqual(rc, 0, err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
