"""Storage failures end to end: a full disk and a damaged database, with a
real gpubenchd and the worker test double (synthetic results).

The full-disk tests put the database on a small tmpfs the test mounts (they
need root, as the tests have in CI; without it they are SKIPPED, saying
so), fill it with a file while the daemon runs, and delete the file to
bring the space back.  The damage tests need no privilege: they damage a
COPY of a database the daemon made.
"""
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import DAEMON, Daemon, daemon_with_many_runs  # noqa: E402
from test_api import ErrorAssertions  # noqa: E402

SMALL_FS = "4m"


class SmallFilesystem:
    """A tmpfs of SMALL_FS on a temporary directory, and a file that fills it."""

    def __init__(self):
        self.path = tempfile.mkdtemp(prefix="gpubench-smallfs-")
        self.filler = os.path.join(self.path, "filler")
        if os.geteuid() != 0:
            os.rmdir(self.path)
            raise unittest.SkipTest(
                "NOT TESTED: a full disk needs a small filesystem, and mounting "
                "one needs root (run the API tests as root, as CI does)")
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=" + SMALL_FS, "tmpfs",
                            self.path], capture_output=True, text=True)
        if r.returncode != 0:
            os.rmdir(self.path)
            raise unittest.SkipTest("NOT TESTED: mount -t tmpfs failed even as root: "
                                    + r.stderr.strip())

    def fill(self):
        """Writes the filler until the filesystem refuses another byte."""
        chunk = b"\0" * 65536
        with open(self.filler, "ab", buffering=0) as f:
            while True:
                try:
                    f.write(chunk)
                except OSError:
                    break
            while True:  # the last partial page too
                try:
                    f.write(b"\0")
                except OSError:
                    break
        st = os.statvfs(self.path)
        assert st.f_bavail == 0, "the small filesystem still has room"

    def free(self):
        os.unlink(self.filler)

    def remove(self):
        subprocess.run(["umount", "-l", self.path], check=False)
        os.rmdir(self.path)


class DiskFullTest(ErrorAssertions, unittest.TestCase):
    def setUp(self):
        self.fs = SmallFilesystem()
        self.daemons = []

    def tearDown(self):
        try:
            for d in self.daemons:
                try:
                    d.stop()
                except RuntimeError:
                    d.proc.kill()
        finally:
            self.fs.remove()  # never leave the mount behind

    def daemon(self, **kw):
        d = Daemon(**kw)
        d.db = os.path.join(self.fs.path, "gpubench.db")  # the log stays off the small fs
        self.daemons.append(d)
        return d.start()

    def assert_healthz(self, d, status, database):
        body = d.get("/healthz").json()
        self.assertEqual(body["status"], status, body)
        self.assertEqual(body["database"], database, body)
        for field in ("version", "commit", "host", "started_at", "uptime_s", "gpus"):
            self.assertIn(field, body)
        return body

    def test_full_disk_refuses_writes_with_507_and_recovers(self):
        d = self.daemon()
        self.assert_healthz(d, "ok", "ok")
        self.assertIsNone(d.get("/healthz").json()["reason"])
        first = d.post("/runs?wait=20", {"benchmark": "smem_stride", "params": {"strides": [1]}})
        self.assertEqual(first.json()["status"], "done", first)
        # An export of it, given a new id: an import that must write.
        line = d.get("/runs.ndjson").body.splitlines()[0]
        old = first.json()["id"]
        new = old[:-4] + ("0000" if old[-4:] != "0000" else "1111")
        self.fs.fill()

        r = d.post("/runs", {"benchmark": "smem_stride", "params": {"strides": [1, 2]}})
        self.assertError(r, 507, "storage_full")
        self.assertTrue(r.header("Retry-After") and int(r.header("Retry-After")) > 0, r.headers)
        body = self.assert_healthz(d, "degraded", "storage_full")
        self.assertEqual(body["reason"]["check"], "database_space")
        self.assertEqual(body["reason"]["code"], "storage_full")
        self.assertTrue(body["reason"]["message"])
        # The import route says the same, and reads still work.
        r = d.post("/runs/import", line.replace(old, new))
        self.assertError(r, 507, "storage_full")
        self.assertTrue(r.header("Retry-After"), r.headers)
        # So does pinning a baseline (it reads the runs, then writes).
        r = d.post("/baselines", {"name": "before-full", "runs": [old]})
        self.assertError(r, 507, "storage_full")
        self.assertTrue(r.header("Retry-After"), r.headers)
        self.assertEqual([run["id"] for run in d.get("/runs").json()["runs"]], [old])

        self.fs.free()
        r = d.post("/runs?wait=20", {"benchmark": "smem_stride", "params": {"strides": [1, 2]}})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json()["status"], "done", r)
        self.assert_healthz(d, "ok", "ok")

    def test_run_queued_while_full_runs_once_space_is_back(self):
        # A slow run holds the GPU; a second waits in the queue while the
        # disk is full, and must still run (and end done) once it is not.
        d = self.daemon(env={"GPUBENCH_FAKE_DELAY_MS": "100"})
        a = d.post("/runs", {"benchmark": "smem_stride", "params": {"strides": [1, 2, 4]}}).json()
        b = d.post("/runs", {"benchmark": "smem_stride", "params": {"strides": [1]}}).json()
        self.assertEqual(b["status"], "queued")
        self.fs.fill()
        # Cancelling is a write too.
        r = d.request("DELETE", "/runs/" + b["id"])
        self.assertError(r, 507, "storage_full")
        self.assertTrue(r.header("Retry-After"), r.headers)
        time.sleep(1.0)  # a's end is refused now; b cannot be claimed
        self.assertEqual(d.get("/runs/" + b["id"]).json()["status"], "queued")
        self.fs.free()
        self.assertEqual(d.wait_status(a["id"], ("done", "failed"), timeout=30)["status"], "done")
        self.assertEqual(d.wait_status(b["id"], ("done", "failed"), timeout=30)["status"], "done")
        self.assert_healthz(d, "ok", "ok")

    def test_run_end_refused_briefly_is_stored_done(self):
        d = self.daemon(env={"GPUBENCH_FAKE_DELAY_MS": "300"})
        run = d.post("/runs", {"benchmark": "smem_stride", "params": {"strides": [1, 2, 4]}}).json()
        d.wait_status(run["id"], ("running",))
        self.fs.fill()
        # The worker ends after about 0.9 s; its result is refused, and the
        # runner tries again for several seconds.
        self.wait_log(d, "but the store refused it", 20)
        self.assertEqual(d.get("/runs/" + run["id"]).json()["status"], "running")
        self.fs.free()
        done = d.wait_status(run["id"], ("done", "failed"), timeout=20)
        self.assertEqual(done["status"], "done", done)
        self.assertTrue(done["results"]["rows"])

    def test_run_end_refused_for_long_is_failed_with_reason(self):
        d = self.daemon(env={"GPUBENCH_FAKE_DELAY_MS": "200"})
        run = d.post("/runs", {"benchmark": "smem_stride", "params": {"strides": [1, 2]}}).json()
        d.wait_status(run["id"], ("running",))
        answer = {}

        def wait_for_it():
            answer["r"] = d.get("/runs/%s?wait=60" % run["id"], timeout=90)
        waiter = threading.Thread(target=wait_for_it)
        waiter.start()
        self.fs.fill()
        # Every retry refused: the runner gives the result up and keeps the
        # run to be failed, but cannot write that either while full.
        self.wait_log(d, "will be failed as soon as the database takes a write", 40)
        self.assertEqual(d.get("/runs/" + run["id"]).json()["status"], "running")
        self.fs.free()
        waiter.join(60)
        self.assertFalse(waiter.is_alive(), "the ?wait request never got an answer")
        r = answer["r"]
        self.assertEqual(r.status, 200, r)
        body = r.json()
        self.assertEqual(body["status"], "failed", body)
        self.assertEqual(body["error"]["code"], "store_error", body)
        self.assertIn("could not be stored", body["error"]["message"])
        self.assertIn("full", body["error"]["message"])
        # The GPU goes on with the next run.
        r = d.post("/runs?wait=20", {"benchmark": "smem_stride", "params": {"strides": [1]}})
        self.assertEqual(r.json()["status"], "done", r)

    def wait_log(self, d, text, timeout, or_text=None):
        deadline = time.time() + timeout
        while time.time() < deadline:
            log = d.read_log()
            if text in log or (or_text and or_text in log):
                return
            time.sleep(0.1)
        self.fail("the daemon never logged %r:\n%s" % (text, d.read_log()))


def damage(path, nbytes=8192, seed=12):
    """Overwrites nbytes near the middle of the file (page aligned) with
    noise, starting at the page of the stored results ("samples" lives
    only there) nearest the middle, so that a read of every run must meet
    it whatever the migrations did to the file's layout."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        data = f.read()
    hits = [m.start() for m in re.finditer(rb'"samples":\[', data)] or [size // 2]
    offset = min(hits, key=lambda i: abs(i - size // 2)) // 4096 * 4096
    noise = random.Random(seed).randbytes(nbytes)
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(noise)


def check_db(path):
    return subprocess.run([DAEMON, "--check-db", "--db", path], capture_output=True,
                          text=True, timeout=60)


class DamagedDatabaseTest(ErrorAssertions, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # A database of many runs with results, made through the API.
        cls.made = daemon_with_many_runs()
        cls.ids = [row[0] for row in cls.made.sql("SELECT id FROM runs ORDER BY id")]
        cls.cards = [row[0] for row in cls.made.sql(
            "SELECT DISTINCT device_uuid FROM runs ORDER BY device_uuid")]
        assert cls.made.stop() == 0
        cls.tmp = tempfile.mkdtemp(prefix="gpubench-damaged-")
        cls.intact = os.path.join(cls.tmp, "intact.db")
        shutil.copyfile(cls.made.db, cls.intact)
        assert not os.path.exists(cls.made.db + "-wal") or os.path.getsize(cls.made.db + "-wal") == 0

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_check_db_intact(self):
        r = check_db(self.intact)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("ok", r.stdout)

    def test_check_db_missing_file(self):
        r = check_db(os.path.join(self.tmp, "none.db"))
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "none.db")))

    def start_on_damaged_copy(self, how):
        d = Daemon(gpus=2)
        shutil.copyfile(self.intact, d.db)
        how(d.db)
        self.addCleanup(shutil.rmtree, d.tmp, True)
        return d

    def read_everything(self, d):
        """Every run, every page of the list, /compare: each answer is whole
        (200) or 500 database_corrupt.  Returns how many were refused."""
        refused = 0
        paths = ["/runs/" + run_id for run_id in self.ids]
        paths += ["/runs?limit=500", "/runs?limit=500&status=done",
                  "/compare?benchmark=smem_stride",
                  # the verdicts read the runs their own way (api_verdicts.c)
                  "/compare?baseline=card:%s&candidate=card:%s" % (self.cards[0],
                                                                   self.cards[-1])]
        answers = [(p, d.get(p)) for p in paths]
        # and so does pinning a baseline of each card
        for i, card in enumerate(self.cards):
            r = d.post("/baselines", {"name": "card%d" % i, "card": card,
                                      "benchmark": "smem_stride"})
            if r.status == 201:
                answers.append(("/baselines/card%d" % i, d.get("/baselines/card%d" % i)))
            else:
                answers.append(("POST /baselines card%d" % i, r))
        for path, r in answers:
            if r.status == 200:
                body = r.json()
                if "id" in body:  # a run: never a done run with holes
                    self.assertEqual(body["status"], "done", body)
                    self.assertTrue(body["results"] and body["results"]["rows"], body["id"])
                    self.assertTrue(body["meta"], body["id"])
                elif "verdict_rows" in body or "rows" in body and "baseline" in body:
                    self.assertTrue(body["rows"], body)
                elif "spec" in body:  # a baseline: every run of its card
                    self.assertEqual(len(body["runs"]), len(self.ids) // len(self.cards))
                elif "runs" in body:
                    self.assertEqual(len(body["runs"]), len(self.ids))
                    for run in body["runs"]:
                        self.assertTrue(run["summary"], run["id"])
            else:
                self.assertEqual((path, r.status, r.json()["error"]["code"]),
                                 (path, 500, "database_corrupt"), r)
                refused += 1
        return refused

    def assert_healthz_corrupt(self, d):
        body = d.get("/healthz").json()
        self.assertEqual(body["status"], "degraded", body)
        self.assertEqual(body["database"], "database_corrupt", body)
        self.assertEqual(body["reason"]["code"], "database_corrupt", body)
        self.assertEqual(body["reason"]["check"], "database_integrity", body)

    def test_damaged_copy(self):
        # 8 KiB of noise in the middle of the file, as a bad disk or a
        # careless copy leaves it.
        d = self.start_on_damaged_copy(damage)
        r = check_db(d.db)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("DAMAGED", r.stdout)
        self.assertIn("--recover", r.stdout)
        d.start()
        try:
            self.assertEqual(d.get("/healthz").json()["status"], "ok")  # nothing read yet
            self.assertGreater(self.read_everything(d), 0, "no read hit the damage")
            self.assert_healthz_corrupt(d)
        finally:
            d.stop()

    def test_damaged_results_page(self):
        # Noise on a page of the stored results, which GET /runs/ID reads:
        # the run must come back 500 database_corrupt, never 200 with
        # results null.
        import sqlite3
        con = sqlite3.connect(self.intact)
        try:
            pages = con.execute("SELECT pageno FROM dbstat WHERE name = 'run_results' "
                                "AND pagetype = 'leaf' ORDER BY pageno").fetchall()
        except sqlite3.OperationalError as e:
            self.skipTest("NOT TESTED: this Python's SQLite has no dbstat to find a "
                          "results page (%s)" % e)
        finally:
            con.close()
        page = pages[len(pages) // 2][0]

        def on_results(path):
            with open(path, "r+b") as f:
                f.seek((page - 1) * 4096)
                f.write(random.Random(7).randbytes(4096))
        d = self.start_on_damaged_copy(on_results)
        self.assertEqual(check_db(d.db).returncode, 1)
        d.start()
        try:
            self.assertGreater(self.read_everything(d), 0, "no read hit the damage")
            self.assert_healthz_corrupt(d)
        finally:
            d.stop()


if __name__ == "__main__":
    unittest.main(verbosity=2)
