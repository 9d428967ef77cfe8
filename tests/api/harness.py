"""Starts a real gpubenchd for the API tests and talks HTTP to it.

Each Daemon gets a loopback port, a temporary database and the worker
TEST DOUBLE (tests/fake_worker.c, synthetic results) unless told otherwise.
The port is the daemon's own: it starts with --listen 127.0.0.1:0 and the
harness reads the port the kernel gave it from its "listening on" line, so
that tests run side by side (ctest -j) never race for one.  A restart asks
for the port it had (peers and URLs the test built name it); only there can
another program have taken the port in between, and start() says so.
The binaries come from the environment that ctest sets:
GPUBENCH_DAEMON and GPUBENCH_FAKE_WORKER.

Every answer request() receives is checked against api/openapi.json
(openapi_check.py): an answer the document does not describe fails the test.

With tls=an ssl.SSLContext (and a --web-config in args) the daemon is
talked to over HTTPS, with that context.
"""
import http.client
import json
import os
import re
import signal
import subprocess
import tempfile
import time
import unittest

import openapi_check

DAEMON = os.environ.get("GPUBENCH_DAEMON", "build/bin/gpubenchd")
FAKE_WORKER = os.environ.get("GPUBENCH_FAKE_WORKER", "build/tests/gpubench-fake-worker")


# The daemon's line once it answers (server/main.c), with the port as bound.
LISTENING = re.compile(rb"listening on https?://127\.0\.0\.1:(\d+)")


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body)

    def header(self, name):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def __repr__(self):
        return "<%d %s>" % (self.status, self.body[:300])


class Daemon:
    def __init__(self, workdir=None, gpus=1, worker=None, args=(), env=None, tls=None):
        self.tmp = tempfile.mkdtemp(prefix="gpubench-api-") if workdir is None else workdir
        self.db = os.path.join(self.tmp, "gpubench.db")
        self.control = os.path.join(self.tmp, "fake-mode")
        self.log_path = os.path.join(self.tmp, "daemon.log")
        self.gpus = gpus
        self.worker = worker or FAKE_WORKER
        self.args = list(args)
        if "--rate-limit" not in self.args:
            # The tests post far faster than a person; the limit has its own test.
            self.args += ["--rate-limit", "0"]
        if "--confirm-runs" not in self.args:
            # A run slower than the card's last ones queues a confirming run
            # (issue 14); tests that count their runs do not expect it.
            # test_alerts.py asks for it.
            self.args += ["--confirm-runs", "0"]
        self.extra_env = env or {}
        self.tls = tls
        self.port = None
        self.proc = None
        self.set_mode("normal")

    def set_mode(self, mode):
        """How the test double behaves on its next job (see fake_worker.c)."""
        with open(self.control, "w") as f:
            f.write(mode + "\n")

    def start(self, timeout=10):
        env = dict(os.environ)
        env.update({"GPUBENCH_FAKE_GPUS": str(self.gpus),
                    "GPUBENCH_FAKE_CONTROL": self.control})
        env.update(self.extra_env)
        # Port 0 the first time; a restart keeps its port, as peers expect.
        port = self.port or 0
        self.log = open(self.log_path, "ab")
        log_from = self.log.tell()  # this start's lines, not an earlier start's
        self.proc = subprocess.Popen(
            # --keep-samples 0: the tests' made runs are dated in the past,
            # and the retention pass after the database check (10 s in)
            # would drop their samples under a test's feet; a test of it
            # names its own, which comes later and wins.
            [DAEMON, "--listen", "127.0.0.1:%d" % port, "--db", self.db,
             "--worker", self.worker, "--keep-samples", "0"] + self.args,
            stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.time() + timeout
        bound = None
        while time.time() < deadline:
            if self.proc.poll() is not None:
                self.log.close()
                raise RuntimeError("gpubenchd exited with %s:\n%s" % (self.proc.returncode, self.read_log()))
            if bound is None:
                with open(self.log_path, "rb") as f:
                    f.seek(log_from)
                    m = LISTENING.search(f.read())
                if m:
                    bound = int(m.group(1))
                    if port and bound != port:
                        raise RuntimeError("gpubenchd asked for port %d listens on %d" % (port, bound))
                    self.port = bound
            if bound is not None:
                try:
                    if self.request("GET", "/healthz").status == 200:
                        return self
                except OSError:
                    pass
            time.sleep(0.05)
        raise RuntimeError("gpubenchd did not answer /healthz:\n" + self.read_log())

    def read_log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def stop(self, sig=signal.SIGTERM, timeout=20):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise RuntimeError("gpubenchd did not stop on signal %d" % sig)
        if self.proc:
            self.log.close()
        return self.proc.returncode if self.proc else None

    def kill(self):
        return self.stop(signal.SIGKILL)

    def connect(self, timeout=30, tls=None):
        """A connection to the daemon: HTTPS with tls (else the daemon's own)."""
        tls = tls or self.tls
        if tls is None:
            return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        return http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout, context=tls)

    def request(self, method, path, body=None, headers=None, timeout=30, tls=None):
        conn = self.connect(timeout, tls)
        try:
            if isinstance(body, (dict, list)):
                body = json.dumps(body)
            hdrs = dict(headers or {})
            if body is not None and "Content-Type" not in hdrs:
                # A write's body must name its type (415 otherwise), as the
                # client and the page do: NDJSON for an import, else JSON.
                hdrs["Content-Type"] = ("application/x-ndjson"
                                        if path.split("?", 1)[0] == "/runs/import"
                                        else "application/json")
            conn.request(method, path, body=body, headers=hdrs)
            r = conn.getresponse()
            resp = Response(r.status, r.getheaders(), r.read().decode())
            # Every answer as api/openapi.json documents it (openapi_check.py).
            openapi_check.check(method, path, resp.status, r.getheaders(), resp.body)
            return resp
        finally:
            conn.close()

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body, **kw):
        return self.request("POST", path, body=body, **kw)

    def wait_status(self, run_id, statuses, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            run = self.get("/runs/" + run_id).json()
            if run["status"] in statuses:
                return run
            time.sleep(0.05)
        raise AssertionError("run %s never reached %s; it is %s" % (run_id, statuses, run["status"]))

    def sql(self, query):
        import sqlite3
        con = sqlite3.connect(self.db, timeout=10)
        try:
            return con.execute(query).fetchall()
        finally:
            con.close()


class DaemonCase(unittest.TestCase):
    """A test class whose tests share one daemon, self.d: started with
    DAEMON_KWARGS (Daemon's arguments) before the first test, stopped
    after the last, where a stop that is not clean fails the class."""

    DAEMON_KWARGS = {}

    @classmethod
    def setUpClass(cls):
        cls.d = Daemon(**cls.DAEMON_KWARGS).start()

    @classmethod
    def tearDownClass(cls):
        assert cls.d.stop() == 0


def benchmarks(d):
    """GET /benchmarks' benchmarks by name."""
    return {b["name"]: b for b in d.get("/benchmarks").json()["benchmarks"]}


def daemon_with_many_runs(batches=40):
    """A running two-GPU daemon whose database holds runs with results on
    many pages, made through the API: each batch is a 64-stride smem_stride
    run on both GPUs.  Tests of damaged, backed-up and recovered files start
    from a copy of its db."""
    d = Daemon(gpus=2)
    d.start()
    strides = list(range(1, 65))
    for _ in range(batches):
        r = d.post("/runs?wait=30", {"benchmark": "smem_stride", "device": "all",
                                     "params": {"strides": strides}})
        assert r.status == 200, r
    return d


def assert_too_few_gpus(test, d, benchmark):
    """A benchmark that needs two GPUs (min_devices) posted alone on a
    daemon of one, on its GPU, by default and on "all": 409 too_few_gpus
    every time."""
    for device in (None, 0, "all"):
        body = {"benchmark": benchmark}
        if device is not None:
            body["device"] = device
        r = d.post("/runs", body)
        test.assertEqual(r.status, 409, (benchmark, device, r))
        err = r.json()["error"]
        test.assertEqual((err["code"], err["field"]), ("too_few_gpus", "benchmark"))
        test.assertIn("needs 2 GPUs; this node has 1", err["message"])


def daemon_sanitizer():
    """"address" or "thread" when gpubenchd was built with that sanitizer,
    else None.  Memory figures mean nothing under them (AddressSanitizer
    keeps freed memory in quarantine, ThreadSanitizer shadows all of it)."""
    with open(DAEMON, "rb") as f:
        data = f.read()
    for name, symbol in (("address", b"__asan_init"), ("thread", b"__tsan_init")):
        if symbol in data:
            return name
    return None

