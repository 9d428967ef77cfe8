"""The command-line client (client/, bin/gpubench) driven as a user and a
CI job would, against a real gpubenchd with the worker's TEST DOUBLE, and
the markdown reports (GET /runs/ID.md, GET /compare.md) it points people
at.  The fleet for compare's exit statuses is SYNTHETIC (test_verdicts.py's
make_run, imported); the runs of ExamplesTest are REAL H200 runs, the
exports in examples/ imported, so that `show` is checked on every
benchmark's rows as the worker writes them.

The client's binary comes from GPUBENCH_CLIENT (ctest sets it)."""
import glob
import json
import math
import os
import pty
import re
import select
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import DAEMON, Daemon  # noqa: E402
from test_verdicts import make_run, uuid_of  # noqa: E402

CLIENT = os.environ.get("GPUBENCH_CLIENT", "build/bin/gpubench")
ESC = "\033"
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")


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


def cells(line):
    """A printed table's line as its cells (columns are 2 or more spaces apart)."""
    return re.split(r"\s{2,}", line.strip())


def close(text, want, rel=1e-3):
    """A printed number (4 significant digits) is the API's to within rel."""
    return abs(float(text) - want) <= rel * abs(want) + 1e-12


def run_ids(out):
    """The run ids of a `gpubench runs` listing."""
    return [line.split()[0] for line in out.splitlines()[1:] if re.match(r"[0-9a-f]{8}-", line)]


def example_age_days():
    """Days since the newest run of the examples finished (they were
    measured in 2026-12): a check of them needs a window at least this
    wide, and max_age's cap is a year."""
    newest = ""
    for path in glob.glob(os.path.join(EXAMPLES, "*", "*.ndjson")):
        with open(path) as f:
            for line in f:
                if line.strip():
                    newest = max(newest, json.loads(line).get("finished_at") or "")
    then = time.mktime(time.strptime(newest[:19], "%Y-%m-%dT%H:%M:%S")) - time.timezone
    return (time.time() - then) / 86400


def example_window(test):
    """A --max-age that holds the examples' runs (their age and a week), in
    hours and as a decimal of days; the test is skipped, saying why, once
    they are older than a year can hold."""
    days = example_age_days() + 7
    if days > 366:
        test.skipTest("the example runs are %.0f days old: past max_age's cap of 366d" % days)
    return "%dh" % (days * 24), "%.1fd" % days


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
            self.assertTrue(close(row[2], api["median_ms"]), (row, api["median_ms"]))
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

    def test_errors_name_the_clients_options(self):
        rc, out, err = self.gb("fleet")
        self.assertEqual(rc, 3, (out, err))
        self.assertIn("--benchmark", err)
        self.assertNotIn("benchmark=", err)  # the daemon's word, not the client's

    def test_version(self):
        rc, out, err = self.gb("--version")
        self.assertEqual(rc, 0, err)
        daemon = subprocess.run([DAEMON, "--version"], capture_output=True, text=True,
                                timeout=10).stdout
        # "gpubenchd 0.2.0 (commit ...)": the same build, the same words.
        self.assertRegex(out, r"^gpubench \S+ \(commit \S+\)\n$")
        self.assertEqual(out.split()[1:], daemon.split()[1:])

    def test_help_of_each_command(self):
        rc, out, _ = self.gb("--help")
        self.assertEqual(rc, 0)
        for cmd, has, lacks in [("run", "--strides", "--baseline"), ("runs", "--status", "--wait"),
                                ("show", "--json", "--limit"), ("compare", "--margin", "--param"),
                                ("fleet", "--benchmark", "--candidate"),
                                ("import", "--url", "--label"), ("runs", "--batch", "--strides")]:
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

    def test_compare_exits_2_only_when_a_row_could_be_slower(self):
        # Issue 21: a row entirely faster with its estimate inside the
        # margin (stride 33's -1.59% .. -0.72%) is faster and passes; an
        # inconclusive row that cannot be slower by more than the margin
        # passes too.  Both exited 2 before.
        faster = [make_run(7, 12, shift={32: 0.991}, spread_evenly=True)]
        only_faster = [make_run(8, 12, noise=0.02, spread_evenly=True,
                                shift={1: 0.995, 2: 0.995, 32: 0.995})]
        r = self.d.post("/runs/import", "".join(json.dumps(x) + "\n" for x in faster + only_faster))
        self.assertEqual(r.status, 200, r)
        for card, verdict in ((7, "faster"), (8, "inconclusive")):
            with self.subTest(candidate=card):
                b, c = "card:" + uuid_of(1), "card:" + uuid_of(card)
                api = self.d.get("/compare?benchmark=smem_stride&baseline=%s&candidate=%s"
                                 "&until=2026-01-15" % (b, c)).json()
                self.assertEqual(api["verdict"], verdict, api)
                self.assertTrue(all(row["ci_high"] <= 0.01 for row in api["rows"]), api)
                rc, out, err = self.compare(b, c)
                self.assertEqual(rc, 0, out + err)
                self.assertIn("no row can be slower by more than the margin", out)
        row32 = {r["key"]: r for r in api["rows"]}[32]
        self.assertIsNone(row32["undecidable"])
        self.assertGreater(row32["more_samples"], 0)

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
        rc, out, err = self.gb("import", f.name)  # twice: nothing new, and it says so
        self.assertEqual(rc, 0, err)
        self.assertIn("imported 0 runs; 2 were already here", out)
        rc, out, err = self.gb("import", f.name, "--json")
        self.assertEqual(json.loads(out), {"imported": 0, "already_here": 2, "conflicts": 0})
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
            # at least three decimals, median_ms's 4 significant digits below
            # (common/result_fields.c gb_format_ms, as the terminal writes it)
            x = row["median_ms"]
            decimals = max(3, 3 - math.floor(math.log10(x)))
            self.assertEqual(cells[2], "%.*f ms" % (decimals, x))
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
        self.assertIn("| Stride | Baseline | Candidate | Shift | 95% interval | More samples | "
                      "Verdict |", r.body)
        self.assertIn("Median times in ms per %s;" % api["time_per"], r.body)
        self.assertIn("Verdict: **slower** (stride 32)", r.body)
        rows = [line for line in r.body.splitlines() if line.startswith("| ") and line[2].isdigit()]
        self.assertEqual([line.split("|")[-2].strip() for line in rows],
                         [row["verdict"] for row in api["rows"]])
        # the shift is a fraction in the answer: printed as it is, in per cent
        self.assertEqual([line.split("|")[4].strip() for line in rows],
                         ["%+.2f%%" % (100 * row["shift"]) for row in api["rows"]])
        self.assertEqual([line.split("|")[6].strip() for line in rows],
                         [row["undecidable"] or ("-" if row["more_samples"] is None
                                                 else "%d" % row["more_samples"])
                          for row in api["rows"]])
        # Without baseline/candidate: one column a card.
        r = self.d.get("/compare.md?benchmark=smem_stride&latest=3")
        self.assertEqual(r.status, 200, r)
        for card in (1, 2, 3):
            self.assertIn(uuid_of(card), r.body)
        self.assertIn("| Stride | Card 1 | Card 2 |", r.body)
        self.assertIn("in ms per iteration; one column a card", r.body)
        # The same refusals as /compare.
        for bad in ("", "benchmark=smem_stride&baseline=card:x", "benchmark=smem_stride&bogus=1"):
            want = self.d.get("/compare?" + bad)
            got = self.d.get("/compare.md?" + bad)
            self.assertEqual((got.status, got.json()), (want.status, want.json()))


class ExamplesTest(unittest.TestCase):
    """The H200 runs of examples/ (every benchmark, one and two GPU nodes)
    imported with the client, then listed, shown and set side by side."""

    @classmethod
    def setUpClass(cls):
        # Two of the files hold the daemon check's test_fault and test_hang
        # runs, which only a daemon that offers them imports.
        cls.d = Daemon(gpus=0, args=["--test-benchmarks"]).start()
        cls.gb = Client(cls.d)
        cls.files = sorted(glob.glob(os.path.join(EXAMPLES, "*", "*.ndjson")))
        assert cls.files, EXAMPLES
        cls.counts = {}
        for path in cls.files:
            with open(path) as f:
                body = f.read()
            cls.counts[path] = sum(1 for line in body.splitlines() if line.strip())
            r = cls.d.post("/runs/import", body)
            assert r.status == 200 and r.json()["imported"] == cls.counts[path], r
        # Runs of another host, so that --host has something to leave out.
        other = [make_run(8, 20, host="lab2", label="lab2-check") for _ in range(2)]
        r = cls.d.post("/runs/import", "".join(json.dumps(r) + "\n" for r in other))
        assert r.status == 200, r
        cls.runs = cls.d.get("/runs?limit=500").json()["runs"]
        cls.fields = {f["name"]: f for f in cls.d.get("/benchmarks").json()["result_fields"]}

    @classmethod
    def tearDownClass(cls):
        assert cls.d.stop() == 0

    def header(self, name):
        """A column's header as the client makes it from the result-field table."""
        f = self.fields[name]
        if f["unit"] in ("", "share", "x") or f["unit"] in f["short_label"]:
            return f["short_label"]
        return "%s (%s)" % (f["short_label"], f["unit"])

    def show(self, run_id):
        rc, out, err = self.gb("show", run_id)
        self.assertEqual(rc, 0, err)
        return out

    def test_import_says_what_was_already_here(self):
        for path in self.files:  # imported by setUpClass: all of them already here
            rc, out, err = self.gb("import", path)
            self.assertEqual(rc, 0, err)
            self.assertEqual(out, "imported 0 runs; %d were already here\n" % self.counts[path])
        new = make_run(9, 21, host="lab3")
        with tempfile.NamedTemporaryFile("w", suffix=".ndjson", delete=False) as f:
            f.write(json.dumps(new) + "\n")
        with open(self.files[0]) as g:
            with open(f.name, "a") as out_file:
                out_file.write(g.read())
        rc, out, err = self.gb("import", f.name)
        os.unlink(f.name)
        self.assertEqual(rc, 0, err)
        self.assertEqual(out, "imported 1 run; %d were already here\n"
                         % self.counts[self.files[0]])

    def test_show_every_benchmark(self):
        shown = set()
        for listed in self.d.get("/runs?status=done&limit=500").json()["runs"]:
            if listed["benchmark"] in shown:
                continue
            run = self.d.get("/runs/" + listed["id"]).json()
            if not (run.get("results") or {}).get("rows"):
                continue
            shown.add(run["benchmark"])
            with self.subTest(benchmark=run["benchmark"], run=run["id"]):
                out = self.show(run["id"])
                self.check_rows(run, out)
                # a calibrated sample of several units says how many; the
                # benchmarks timed per unit already say nothing
                units = ((run["results"].get("summary") or {}).get("launch") or {}).get(
                    "iterations_per_sample")
                said = "times are per sample: one sample is %d iterations" % (units or 0)
                if run["benchmark"] in ("smem_stride", "smem_pattern") and units and units > 1:
                    self.assertIn(said, out)
                else:
                    self.assertNotIn("times are per sample", out)
        self.assertEqual(shown, {"smem_stride", "smem_pattern", "transpose", "gmem_stride",
                                 "hbm_bandwidth", "compute_peak", "pcie_bandwidth",
                                 "p2p_bandwidth", "known_answer", "memtest", "soak"})

    def check_rows(self, run, out):
        rows = run["results"]["rows"]
        key = next(k for k in ("stride", "variant", "pattern", "label")
                   if any(k in r for r in rows))
        lines = out.split("\n\n")[1].splitlines()  # the rows' table, after the run's lines
        head = cells(lines[0])
        self.assertEqual(head[0], self.fields[key]["short_label"], lines[0])
        # the deep checks (known_answer, memtest, soak) time no samples
        timed = any("median_ms" in r for r in rows)
        if timed:
            self.assertIn(self.header("median_ms"), head)
        else:
            self.assertNotIn(self.header("median_ms"), head)
        self.assertEqual(len(lines), len(rows) + 1)
        for line, row in zip(lines[1:], rows):
            got = dict(zip(head, cells(line)))
            self.assertEqual(got[head[0]], str(row[key]), line)
            if timed:
                self.assertTrue(close(got[self.header("median_ms")], row["median_ms"]), line)
            if isinstance(row.get("value"), (int, float)):  # issue 16's rows: value and unit
                number, unit = got[self.header("value")].split(" ")
                self.assertEqual(unit, row["unit"], line)
                self.assertTrue(close(number, row["value"]), line)
            if isinstance(row.get("peak"), (int, float)):
                self.assertEqual(got[self.header("peak")].split(" ")[1], row["unit"], line)
            if isinstance(row.get("share_of_peak"), (int, float)):
                share = got[self.header("share_of_peak")]
                self.assertTrue(share.endswith("%"), line)
                self.assertTrue(close(share[:-1], 100 * row["share_of_peak"]), line)
            if isinstance(row.get("gbps"), (int, float)):
                self.assertTrue(close(got[self.header("gbps")], row["gbps"]), line)
            if isinstance(row.get("ratio"), (int, float)):
                self.assertTrue(got[self.header("ratio")].endswith("×"), line)
        units = {"hbm_bandwidth": "GB/s", "pcie_bandwidth": "GB/s", "compute_peak": "TFLOP/s",
                 "p2p_bandwidth": "GB/s"}
        if run["benchmark"] in units:
            self.assertRegex(out, r"(?m)\d %s( |$)" % re.escape(units[run["benchmark"]]))
        if run["benchmark"] == "p2p_bandwidth":
            self.check_matrix(run, out)

    def check_matrix(self, run, out):
        """p2p's summary.matrix: a table of GB/s, a row a source GPU, a column a destination."""
        m = run["results"]["summary"]["matrix"]
        self.assertGreater(len(m["devices"]), 1)
        table = out.split("bandwidth, GB/s, from the GPU of a row to the GPU of a column:\n")[1]
        lines = table.split("\n\n")[0].splitlines()
        self.assertEqual(cells(lines[0]), ["from \\ to"] + ["GPU %d" % d for d in m["devices"]])
        for line, src, values in zip(lines[1:], m["devices"], m["gbps"]):
            got = cells(line)
            self.assertEqual(got[0], "GPU %d" % src)
            for text, v in zip(got[1:], values):
                if v is None:
                    self.assertEqual(text, "-")
                else:
                    self.assertTrue(close(text, v), line)
        self.assertIn("latency, us", out)

    def test_show_p2p_of_one_gpu_says_why_it_has_no_rows(self):
        p2p = [self.d.get("/runs/" + r["id"]).json() for r in self.runs
               if r["benchmark"] == "p2p_bandwidth"]
        run = next(r for r in p2p if r["results"]["summary"].get("no_pair"))
        out = self.show(run["id"])
        self.assertIn("no rows: " + run["results"]["summary"]["no_pair"], out)
        self.assertNotIn("bandwidth, GB/s", out)  # no matrix of dashes

    def test_runs_filters_narrow_the_list(self):
        by_uuid = next(r for r in self.runs if r["device"]["index"] == 1)["device"]["uuid"]
        batch = next(r["batch"] for r in self.runs if r.get("batch"))
        for option, value in (("device", by_uuid), ("device", "1"), ("host", "lab2"),
                              ("label", "daemon-check"), ("status", "failed"), ("batch", batch)):
            with self.subTest(option=option, value=value):
                want = [r["id"] for r in self.d.get("/runs?%s=%s&limit=500" % (option, value))
                        .json()["runs"]]
                self.assertTrue(0 < len(want) < len(self.runs), want)  # it narrows
                rc, out, err = self.gb("runs", "--" + option, value, "--limit", "500")
                self.assertEqual(rc, 0, err)
                self.assertEqual(run_ids(out), want)
        rc, out, err = self.gb("runs", "--host", "lab2", "--label", "lab2-check", "--json")
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out),
                         self.d.get("/runs?host=lab2&label=lab2-check").json())
        rc, out, err = self.gb("runs", "--host", "nowhere")
        self.assertEqual((rc, out), (0, "no runs match these filters\n"))

    def test_runs_name_cards_as_the_page_does(self):
        rc, out, err = self.gb("runs", "--benchmark", "hbm_bandwidth", "--limit", "500")
        self.assertEqual(rc, 0, err)
        listed = [r for r in self.runs if r["benchmark"] == "hbm_bandwidth"]
        self.assertGreater(len({r["device"]["uuid"] for r in listed}), 1)
        lines = {line.split()[0]: line for line in out.splitlines()[1:]}
        for r in listed:
            uuid = r["device"]["uuid"]
            tag = "%s #%d (%s…%s)" % (r["device"]["name"], r["device"]["index"],
                                      uuid[4:12], uuid[-4:])
            self.assertIn(tag, lines[r["id"]])
        # One card listed: its model and index alone, as on the page.
        uuid = listed[0]["device"]["uuid"]
        rc, out, err = self.gb("runs", "--device", uuid, "--benchmark", "hbm_bandwidth")
        self.assertEqual(rc, 0, err)
        self.assertIn("NVIDIA H200 #%d  " % listed[0]["device"]["index"], out)
        self.assertNotIn(uuid[4:12], out)

    def test_fleet_lines_are_whole(self):
        api = self.d.get("/fleet?benchmark=hbm_bandwidth").json()
        rc, out, err = self.gb("fleet", "--benchmark", "hbm_bandwidth")
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        for g in api["groups"]:
            title = "%s on %s, method %s, params %s" % (
                g["key"]["benchmark"], g["key"]["card_model"],
                json.dumps(g["key"]["method"], separators=(",", ":")),
                json.dumps(g["key"]["params"], separators=(",", ":")))
            self.assertIn(title, lines)
            if len(g["cards"]) < 3:  # a 0.1.0 build of its own, too few cards to judge
                continue
            lines = out.splitlines()[out.splitlines().index(title):]  # this group's tables
            for card in g["cards"]:
                self.assertIn(card["device_uuid"], out)
                self.assertIn(card["run_id"], out)
            head = cells(next(line for line in lines if line.startswith("median ms")))
            tags = ["%s…%s" % (c["device_uuid"][4:12], c["device_uuid"][-4:]) for c in g["cards"]]
            self.assertEqual(head, ["median ms per %s" % g["time_per"], "fleet"] + tags)
            for row in g["rows"]:
                got = cells(next(line for line in lines if line.startswith(str(row["key"]) + " ")))
                if row["median_ms"] is None:  # too few cards for a fleet median: "-"
                    self.assertEqual(got[1], "-", got)
                else:
                    self.assertTrue(close(got[1], row["median_ms"]), got)
                for text, card in zip(got[2:], g["cards"]):
                    value = next(c["value_ms"] for c in card["rows"] if c["key"] == row["key"])
                    self.assertTrue(close(text.rstrip(" *"), value), (got, card["device_uuid"]))


class DemoTest(unittest.TestCase):
    """`gpubench demo`: the example H200 runs as a small made-up fleet
    (REAL runs, each example set on its own host, and copies of three of
    them, marked in their label), so /fleet, /coverage and `gpubench check`
    show something real on a daemon without a GPU."""

    SETS_HOSTS = {  # the examples' hosts, as their READMEs say
        "h200_daemon_trust": "h200-a", "h200_daemon_health": "h200-a",
        "h200_daemon_health_i18": "h200-b", "h200_daemon_canary": "h200-c",
        "h200_run_end": "h200-d", "h200x2_daemon": "h200x2-a",
        "h200x2_daemon_counters": "h200x2-b", "h200x2_daemon_health": "h200x2-c",
        "h200_daemon_deep": "h200-e",
    }

    @classmethod
    def setUpClass(cls):
        cls.d = Daemon(gpus=0).start()
        cls.gb = Client(cls.d)
        cls.rc, cls.out, cls.err = cls.gb("demo")

    @classmethod
    def tearDownClass(cls):
        assert cls.d.stop() == 0

    def test_each_example_set_has_its_own_host(self):
        seen = {}
        for path in sorted(glob.glob(os.path.join(EXAMPLES, "*", "*.ndjson"))):
            folder = os.path.basename(os.path.dirname(path))
            want = self.SETS_HOSTS[folder]
            with open(path) as f:
                runs = [json.loads(line) for line in f if line.strip()]
            for r in runs:
                self.assertEqual((r["host"], (r.get("meta") or {}).get("host", want)),
                                 (want, want), path)
                seen.setdefault(want, set()).add(r["device"]["uuid"])
            with open(os.path.join(EXAMPLES, folder, "README.md")) as f:
                self.assertIn("`%s`" % want, f.read(), folder)
        # one host, one machine: no card shows up under two hosts
        cards = [u for uuids in seen.values() for u in uuids]
        self.assertEqual(len(cards), len(set(cards)), seen)

    def test_demo_makes_a_fleet_of_cards_marked_as_copies(self):
        self.assertEqual(self.rc, 0, self.err)
        self.assertIn("demo copy of", self.out)
        fleet = self.d.get("/fleet?benchmark=hbm_bandwidth").json()
        judged = [g for g in fleet["groups"] if not g.get("too_few_cards")]
        self.assertEqual(len(judged), 1, fleet)
        cards = judged[0]["cards"]
        self.assertEqual(len(cards), 6, cards)
        copies = [c for c in cards if (c.get("label") or "").startswith("demo copy of ")]
        self.assertEqual(len(copies), 3, cards)
        self.assertEqual(len({c["host"] for c in cards}), 6)
        self.assertEqual(len({c["device_uuid"] for c in cards}), 6)
        by_host = {c["host"]: c for c in cards}
        for c in copies:  # a copy's numbers are its source's, never made up
            source = by_host[c["host"][:-len("-copy1")]]
            self.assertIn("demo copy of %s run %s" % (source["host"], source["run_id"][:8]),
                          c["label"])
            self.assertEqual([r["value_ms"] for r in c["rows"]],
                             [r["value_ms"] for r in source["rows"]])
        # the page's other views see the same cards
        hosts = {c["host"] for c in self.d.get("/coverage").json()["cards"]}
        self.assertEqual(hosts, {"h200-a", "h200-a-copy1", "h200-b", "h200-c", "h200-c-copy1",
                                 "h200-d", "h200-d-copy1", "h200x2-c"})
        hours, days = example_window(self)
        rc, out, err = self.gb("check", "--host", "h200-c-copy1", "--max-age", days)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("healthy", out)

    def test_fleet_table_says_per_launch_and_gives_gbps(self):
        rc, out, err = self.gb("fleet", "--benchmark", "hbm_bandwidth")
        self.assertEqual(rc, 0, err)
        self.assertIn("median ms per launch", out)
        gbps = [line for line in out.splitlines() if line.startswith("GB/s")]
        self.assertTrue(gbps, out)
        triad = [cells(line) for line in out.splitlines() if line.startswith("triad")]
        # the time table's triad, then the GB/s table's: thousands of GB/s
        self.assertGreater(float(triad[-1][1]), 1000, out)
        rc, out, err = self.gb("fleet", "--benchmark", "nope")
        self.assertEqual(rc, 3)
        self.assertIn('there is no benchmark "nope" (there are: smem_stride', err)

    def test_check_says_no_valid_run_rather_than_never_checked(self):
        hours, days = example_window(self)
        rc, out, err = self.gb("check", "--host", "h200x2-c", "--max-age", hours)
        self.assertEqual(rc, 2, out + err)
        self.assertIn("no valid run: compute_peak throttled", out + err)
        self.assertNotIn("never checked", out + err)

    def test_runs_pages_with_after_and_all(self):
        total = len(self.d.get("/runs?limit=500").json()["runs"])
        self.assertGreater(total, 50)
        rc, out, err = self.gb("runs", "--limit", "25")
        self.assertEqual(rc, 0, err)
        first = run_ids(out)
        self.assertEqual(len(first), 25)
        more = re.search(r"--after (\S+), or --all", out)
        self.assertTrue(more, out)
        self.assertNotIn("GET /runs", out)  # no hint the client cannot follow
        rc, out, err = self.gb("runs", "--limit", "25", "--after", more.group(1))
        self.assertEqual(rc, 0, err)
        second = run_ids(out)
        self.assertEqual(len(second), 25)
        self.assertFalse(set(first) & set(second))
        rc, out, err = self.gb("runs", "--limit", "25", "--all")
        self.assertEqual(rc, 0, err)
        every = run_ids(out)
        self.assertEqual(len(every), total)
        self.assertEqual(every[:50], first + second)
        self.assertNotIn("--after", out)
        rc, out, err = self.gb("runs", "--help")
        self.assertIn("1 to 500", out)
        rc, out, err = self.gb("runs", "--limit", "600")
        self.assertEqual(rc, 3)
        self.assertIn("1 to 500", err)

    def test_bounds_of_durations_are_said(self):
        rc, out, err = self.gb("check", "--max-age", "400d")
        self.assertEqual(rc, 3)
        self.assertIn("up to a year (366d)", err)
        hours, days = example_window(self)
        rc, out, err = self.gb("check", "--host", "h200-a", "--max-age", hours)
        self.assertEqual(rc, 0, out + err)  # 1.5h-style spans: the one parser
        rc, out, err = self.gb("check", "--host", "h200-a", "--max-age", days)
        self.assertEqual(rc, 0, out + err)

    def test_demo_twice_changes_nothing(self):
        n = len(self.d.get("/runs?limit=500").json()["runs"])
        rc, out, err = self.gb("demo")
        self.assertEqual(rc, 0, err)
        self.assertIn("imported 0 runs; %d were already here" % n, out)

    def test_demo_from_a_folder_without_the_examples_says_so(self):
        rc, out, err = self.gb("demo", "/nonexistent")
        self.assertEqual(rc, 3)
        self.assertIn("/nonexistent/h200_daemon_health/health_runs.ndjson", err)
        self.assertIn("gpubench demo DIR", err)


class BigImportTest(unittest.TestCase):
    """An export larger than the daemon's 64 MiB import body: `gpubench
    import` pages it by itself (REAL H200 health runs of examples/, each
    line given a new run id and batch, about 7,000 runs)."""

    CAP = 64 * 1024 * 1024

    def test_import_over_the_cap_is_paged(self):
        d = Daemon(gpus=0).start()
        try:
            gb = Client(d)
            with open(os.path.join(EXAMPLES, "h200_daemon_health", "health_runs.ndjson")) as f:
                runs = [json.loads(line) for line in f if line.strip()]
            path = os.path.join(d.tmp, "big.ndjson")
            n = 0
            with open(path, "w") as out:
                while out.tell() <= self.CAP + (1 << 20):
                    for r in runs:
                        n += 1
                        r = dict(r, id=r["id"][:24] + "%012x" % n, batch=None,
                                 url="/runs/" + r["id"][:24] + "%012x" % n)
                        out.write(json.dumps(r) + "\n")
            self.assertGreater(os.path.getsize(path), self.CAP)
            rc, out, err = gb("import", path, timeout=600)
            self.assertEqual(rc, 0, err)
            self.assertRegex(out, r"^imported %d runs; 0 were already here \(sent in [2-9] pages" % n)
            seqs = d.get("/runs.ndjson").body.count("\n")
            self.assertEqual(seqs, n)
        finally:
            self.assertEqual(d.stop(), 0)


class ChecksTest(unittest.TestCase):
    """`show` prints a health run's checks against its card model's floors
    after its rows (the test double named an H200, a model with floors;
    slow=1.08 puts hbm triad under its floor, as in test_cards.py)."""

    @classmethod
    def setUpClass(cls):
        cls.d = Daemon(gpus=1, env={"GPUBENCH_FAKE_GPU_NAME": "NVIDIA H200"}).start()
        cls.gb = Client(cls.d)

    @classmethod
    def tearDownClass(cls):
        assert cls.d.stop() == 0

    def checks_shown(self, run):
        """{row: (value, floor, result)} from the lines under `show`'s checks
        header, checked against the run's checks."""
        rc, out, err = self.gb("show", run["id"])
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        head = next(i for i, line in enumerate(lines) if line.startswith("checks against"))
        failed = sum(c["pass"] is False for c in run["checks"])
        self.assertEqual(lines[head], "checks against the card model's floors: %d of %d failed"
                         % (failed, len(run["checks"])))
        self.assertEqual(lines[head + 1].split(), ["check", "value", "floor", "result"])
        shown = {}
        for line in lines[head + 2:head + 2 + len(run["checks"])]:
            m = re.match(r"(\S+)\s+([\d.]+) GB/s\s+([\d.]+) GB/s\s+(.+)$", line)
            self.assertTrue(m, line)
            shown[m.group(1)] = (float(m.group(2)), float(m.group(3)), m.group(4).strip())
        for c in run["checks"]:
            value, floor, result = shown[c["row"]]
            self.assertAlmostEqual(value, c["value"], delta=0.051)
            self.assertAlmostEqual(floor, c["floor"], delta=0.051)
            self.assertEqual(result, "pass (>= floor)" if c["pass"] else "FAIL (below the floor)")
        return shown

    def run_hbm(self):
        r = self.d.post("/runs?wait=30", {"benchmark": "hbm_bandwidth"})
        self.assertEqual(r.status, 200, r.body)
        return r.json()

    def test_show_prints_checks_passing_failing_and_none(self):
        self.d.set_mode("normal")
        shown = self.checks_shown(self.run_hbm())
        self.assertEqual(set(shown), {"triad", "memcpy"})
        self.assertTrue(all(r.startswith("pass") for _, _, r in shown.values()), shown)
        self.d.set_mode("slow=1.08")
        slow = self.run_hbm()
        shown = self.checks_shown(slow)
        self.assertEqual(shown["triad"][2], "FAIL (below the floor)")
        self.assertLess(shown["triad"][0], shown["triad"][1])
        self.assertEqual(shown["memcpy"][2], "pass (>= floor)")
        # a run without floors (checks null) prints none
        self.d.set_mode("normal")
        r = self.d.post("/runs?wait=30", {"benchmark": "smem_stride", "params": {"strides": [1, 2]}})
        self.assertEqual(r.status, 200, r.body)
        self.assertIsNone(r.json()["checks"])
        rc, out, err = self.gb("show", r.json()["id"])
        self.assertEqual(rc, 0, err)
        self.assertNotIn("checks", out)


class VerdictsTest(unittest.TestCase):
    """`show` says how the run was judged at its end: against its card's
    history (none yet, too few runs, or the verdict with the rows that
    moved) and against the fleet of its model, each from the run's own
    "verdicts"."""

    @classmethod
    def setUpClass(cls):
        cls.d = Daemon(gpus=1, args=["--confirm-runs", "0"]).start()
        cls.gb = Client(cls.d)

    @classmethod
    def tearDownClass(cls):
        assert cls.d.stop() == 0

    def run_and_show(self):
        r = self.d.post("/runs?wait=30", {"benchmark": "smem_stride",
                                          "params": {"strides": [1, 32]}})
        self.assertEqual(r.status, 200, r.body)
        rc, out, err = self.gb("show", r.json()["id"])
        self.assertEqual(rc, 0, err)
        lines = {line[:8]: line[9:] for line in out.splitlines() if line[8:9] == " "}
        return r.json()["verdicts"], lines

    def test_history_and_fleet_lines(self):
        self.d.set_mode("normal")
        v, lines = self.run_and_show()
        self.assertIsNone(v["history"])
        self.assertEqual(lines["history:"], "none (no earlier valid run of this card and request)")
        fleet = v["fleet"]
        self.assertTrue(fleet["too_few_cards"])
        self.assertEqual(lines["fleet:  "], "too few cards of its model to judge (%d of the %d "
                         "needed)" % (fleet["cards"], fleet["cards_needed"]))
        v, lines = self.run_and_show()
        h = v["history"]
        self.assertTrue(h["too_few_runs"])
        self.assertEqual(lines["history:"], "too few runs to judge (1 of the %d needed)"
                         % h["runs_needed"])
        for _ in range(h["runs_needed"]):
            v, lines = self.run_and_show()
        h = v["history"]
        self.assertFalse(h["too_few_runs"])
        self.assertEqual(lines["history:"], "%s against %d earlier runs of this card"
                         % (h["verdict"], len(h["runs"])))
        self.d.set_mode("slow=1.05")
        try:
            v, lines = self.run_and_show()
        finally:
            self.d.set_mode("normal")
        h = v["history"]
        self.assertEqual(h["verdict"], "slower")
        moved = ["%s slower, %+.1f%% time" % (r["key"], 100 * (math.exp(r["shift"]) - 1))
                 for r in h["rows"] if r["verdict"] == "slower"]
        self.assertTrue(moved)
        self.assertEqual(lines["history:"], "slower against %d earlier runs of this card (%s)"
                         % (len(h["runs"]), "; ".join(moved)))
        self.assertRegex(lines["history:"], r"\(1 slower, \+[45]\.\d% time; 32 slower, ")


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
        self.assertIn("\033[1mword stride", out)  # the table's bold header
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
        # said in the client's terms, not the header's
        self.assertIn("use --token-file FILE (its first line is the token) or GPUBENCH_TOKEN",
                      err)
        self.assertNotIn("Authorization", err)
        rc, out, err = self.gb("run", "smem_stride", "--strides", "1",
                               env={"GPUBENCH_TOKEN": "wrong"})
        self.assertEqual(rc, 3)
        self.assertIn("refused the token of GPUBENCH_TOKEN", err)
        rc, out, err = self.gb("run", "smem_stride", "--token-file", "/nonexistent/token")
        self.assertEqual(rc, 3)
        self.assertEqual(err, "gpubench: --token-file /nonexistent/token: cannot read it: "
                              "No such file or directory\n")
        rc, out, err = self.gb("runs", "--cacert", "/nonexistent/ca.crt")
        self.assertEqual(rc, 3)
        self.assertEqual(err, "gpubench: --cacert /nonexistent/ca.crt: cannot read it: "
                              "No such file or directory\n")
        rc, out, err = self.gb("runs", env={"GPUBENCH_CERT": "/nonexistent/c.pem"})
        self.assertEqual(rc, 3)
        self.assertIn("GPUBENCH_CERT /nonexistent/c.pem: cannot read it", err)
        rc, out, err = self.gb("run", "smem_stride", "--strides", "1", "--token-file", self.tokens,
                               env={"GPUBENCH_TOKEN": "wrong"})
        self.assertEqual(rc, 0, err)
        rc, out, err = self.gb("run", "smem_stride", "--strides", "1")  # GPUBENCH_TOKEN
        self.assertEqual(rc, 0, err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
