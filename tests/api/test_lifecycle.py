"""One daemon per database, and workers that die with their daemon
(issue 12), end to end with a real gpubenchd and the worker test double.

- A second daemon on a database in use goes away without touching it,
  saying which database and which daemon has it; the first one's run ends
  `done`, not interrupted.
- SIGKILL of the daemon while its worker is hung in its 'kernel' leaves no
  worker behind; the worker ran with no blocked signals.
- A daemon that starts ends the workers a previous daemon of the same
  database left (here: processes marked as such, as a worker whose death
  signal never came would be, one of them deaf to SIGTERM), and leaves
  every other process alone.
"""
import os
import signal
import socket
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import DAEMON, FAKE_WORKER, Daemon  # noqa: E402

OWNER_ENV = "GPUBENCHD_WORKER_DB"  # server/exec/worker_proc.h


def proc_status(pid):
    """/proc/PID/status as a dict, or None once the process is gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            return dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
    except (FileNotFoundError, ProcessLookupError):
        return None


def running(pid):
    """True while pid is a live process (a zombie has already ended)."""
    st = proc_status(pid)
    return st is not None and not st["State"].startswith("Z")


def wait_gone(pid, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline and running(pid):
        time.sleep(0.05)
    return not running(pid)


def absolute_db(path):
    return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))


class OneDaemonPerDatabase(unittest.TestCase):
    def start_refused(self, d, port, db, cwd=None):
        """Starts a gpubenchd on db that should not start; returns its
        exit code and output."""
        env = dict(os.environ, GPUBENCH_FAKE_CONTROL=d.control)
        p = subprocess.Popen([DAEMON, "--listen", "127.0.0.1:%d" % port, "--db", db,
                              "--worker", FAKE_WORKER, "--rate-limit", "0"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        try:
            out, _ = p.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGTERM)
            out, _ = p.communicate()
            self.fail("a daemon on %s started and served:\n%s" % (db, out.decode()))
        return p.returncode, out.decode()

    def test_second_daemon_is_refused_and_the_first_run_finishes(self):
        # 7 strides of 700 ms: the run outlasts both refusals.
        d1 = Daemon(env={"GPUBENCH_FAKE_DELAY_MS": "700"}).start()
        try:
            run = d1.post("/runs", {"benchmark": "smem_stride"}).json()
            d1.wait_status(run["id"], ("running",))
            db = absolute_db(d1.db)
            # the same port and the same path; another port (0: the kernel
            # picks one), and the same file by another name (relative to
            # another folder)
            for port, db_arg, cwd in ((d1.port, d1.db, None),
                                      (0, "gpubench.db", d1.tmp)):
                code, out = self.start_refused(d1, port, db_arg, cwd)
                self.assertNotEqual(code, 0, out)
                self.assertIn(db, out)
                self.assertIn("pid %d" % d1.proc.pid, out)
                self.assertEqual(d1.get("/runs/" + run["id"]).json()["status"], "running")
            done = d1.wait_status(run["id"], ("done", "failed"), timeout=30)
            self.assertEqual(done["status"], "done", done)
            self.assertEqual(d1.get("/healthz").status, 200)
        finally:
            self.assertEqual(d1.stop(), 0)
        # once the first has gone, the database is free again
        d1.start()
        self.assertEqual(d1.stop(), 0)

    def test_a_daemon_that_cannot_listen_changes_nothing(self):
        d = Daemon().start()
        d.set_mode("hang")
        run = d.post("/runs", {"benchmark": "smem_pattern"}).json()
        d.wait_status(run["id"], ("running",))
        d.kill()  # the run stays 'running' in the database, for recovery
        d.set_mode("normal")
        blocker = socket.socket()
        blocker.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        blocker.bind(("127.0.0.1", d.port))
        blocker.listen()
        try:
            code, out = self.start_refused(d, d.port, d.db)
            self.assertNotEqual(code, 0, out)
            self.assertIn("cannot listen on 127.0.0.1:%d" % d.port, out)
            # it went before its recovery: the run is as the crash left it
            self.assertEqual(d.sql("SELECT status FROM runs WHERE id = '%s'" % run["id"]),
                             [("running",)])
        finally:
            blocker.close()
        d.start()
        try:
            got = d.get("/runs/" + run["id"]).json()
            self.assertEqual((got["status"], got["error"]["code"]), ("failed", "interrupted"))
        finally:
            self.assertEqual(d.stop(), 0)


class MigrationsSayWhatTheyDo(unittest.TestCase):
    def test_each_migration_is_logged_before_and_after_with_its_time(self):
        """A migration over a large store takes a while (an index over a
        million runs: bench/RESULTS.md), during which the daemon does not
        answer; its log says which is being applied, then how long it took."""
        names = sorted(f for f in os.listdir(os.path.join(os.path.dirname(__file__), "..", "..",
                                                          "migrations"))
                       if f[:4].isdigit() and f.endswith(".sql"))
        self.assertGreaterEqual(len(names), 16)
        d = Daemon().start()
        try:
            log = d.read_log()
            log = log.decode() if isinstance(log, bytes) else log
            at = -1
            for name in names:
                before = log.find("database: applying migration %s\n" % name)
                after = log.find("database: applied migration %s in " % name)
                self.assertTrue(at < before < after, (name, at, before, after))
                at = after
        finally:
            self.assertEqual(d.stop(), 0)


class WorkersDieWithTheDaemon(unittest.TestCase):
    def test_sigkill_of_the_daemon_ends_a_hung_worker(self):
        d = Daemon().start()
        pid = None
        try:
            d.set_mode("hang")
            run = d.post("/runs", {"benchmark": "smem_pattern"}).json()
            d.wait_status(run["id"], ("running",))
            pid = d.get("/devices").json()["devices"][0]["worker"]["pid"]
            st = proc_status(pid)
            self.assertIsNotNone(st)
            self.assertEqual(int(st["PPid"]), d.proc.pid)
            # not deaf to kill: nothing blocked or ignored, unlike its daemon
            self.assertEqual(int(st["SigBlk"], 16), 0, st["SigBlk"])
            self.assertEqual(int(st["SigIgn"], 16), 0, st["SigIgn"])
            d.kill()
            self.assertTrue(wait_gone(pid, 5), "worker %d outlived its daemon: %s"
                            % (pid, proc_status(pid)))
        finally:
            d.stop()
            if pid and running(pid):
                os.kill(pid, signal.SIGKILL)

    def test_a_new_daemon_ends_the_workers_a_previous_one_left(self):
        d = Daemon().start()  # once, to make its database and lock file
        self.assertEqual(d.stop(), 0)
        lock = os.stat(d.db + ".lock")
        tag = "%d:%d:%s"  # the lock file's device and inode, the db's path
        mine = dict(os.environ)
        mine[OWNER_ENV] = tag % (lock.st_dev, lock.st_ino, absolute_db(d.db))
        # the same path in another mount namespace: another file
        theirs = dict(os.environ)
        theirs[OWNER_ENV] = tag % (lock.st_dev, lock.st_ino + 1, absolute_db(d.db))
        plain = dict(os.environ)
        plain.pop(OWNER_ENV, None)

        def deaf_to_sigterm():
            # as workers of old were: SIGTERM blocked
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})

        def worker(env, preexec=None):
            p = subprocess.Popen([FAKE_WORKER, "--serve", "--device", "0"], env=env,
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 preexec_fn=preexec)
            self.assertIn(b'"ready"', p.stdout.readline())
            return p

        strays = [worker(mine), worker(mine, deaf_to_sigterm)]
        others = [worker(theirs), worker(plain)]
        try:
            d.start(timeout=20)
            for p in strays:
                p.wait(timeout=10)
                self.assertIn("ending worker pid %d" % p.pid, d.read_log())
            self.assertEqual(strays[0].returncode, -signal.SIGTERM)
            self.assertEqual(strays[1].returncode, -signal.SIGKILL)
            for p in others:
                self.assertIsNone(p.poll(), "a process not of this database was ended")
                self.assertNotIn("pid %d " % p.pid, d.read_log())
            # and the daemon then runs as usual
            run = d.post("/runs?wait=15", {"benchmark": "smem_pattern"}).json()
            self.assertEqual(run["status"], "done", run)
        finally:
            d.stop()
            for p in strays + others:
                if p.poll() is None:
                    p.kill()
                p.wait()
                p.stdin.close()
                p.stdout.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)
