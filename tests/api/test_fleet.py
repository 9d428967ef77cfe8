"""The fleet: daemons pulling finished runs from each other (--peer), with
the worker test double.  Three real daemons on loopback, and a fake peer
that answers garbage and oversized bodies."""
import http.server
import json
import os
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402


def wait_for(pred, timeout=20, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("timed out waiting for " + what)


class FleetTest(unittest.TestCase):
    def test_pull_dedupe_and_a_peer_that_comes_back(self):
        a = Daemon().start()
        # another node: another card (one origin speaks for a card: README "A fleet")
        b = Daemon(env={"GPUBENCH_FAKE_UUID_BASE": "1"})
        b.args += ["--peer", "http://127.0.0.1:%d" % a.port, "--peer-interval", "1"]
        b.start()
        c = Daemon(gpus=0)
        c.args += ["--peer", "http://127.0.0.1:%d/" % a.port,
                   "--peer", "http://127.0.0.1:%d" % b.port, "--peer-interval", "1"]
        c.start()
        try:
            ids_a = [a.post("/runs?wait=10", {"benchmark": "smem_stride", "label": "fleet"}).json()["id"]
                     for _ in range(3)]
            ids_b = [b.post("/runs?wait=10", {"benchmark": "transpose", "params": {"n": 256}}).json()["id"]
                     for _ in range(2)]
            # C gets A's runs twice over (from A, and through B): stored once.
            want = set(ids_a + ids_b)
            wait_for(lambda: want <= {r["id"] for r in c.get("/runs?limit=500").json()["runs"]},
                     what="C to hold every run of A and B")
            time.sleep(2.5)  # more pulls: still no duplicates
            runs = c.get("/runs?limit=500").json()["runs"]
            self.assertEqual(sorted(r["id"] for r in runs), sorted(want))
            by_id = {r["id"]: r for r in runs}
            self.assertEqual(by_id[ids_a[0]]["origin"], "http://127.0.0.1:%d" % a.port)
            self.assertEqual(by_id[ids_b[0]]["origin"], "http://127.0.0.1:%d" % b.port)
            full = c.get("/runs/" + ids_a[0]).json()
            self.assertEqual(full["results"], a.get("/runs/" + ids_a[0]).json()["results"])
            peers = {p["url"]: p for p in c.get("/peers").json()["peers"]}
            self.assertEqual(sum(p["runs_pulled"] for p in peers.values()), 5)
            self.assertIsNotNone(peers["http://127.0.0.1:%d" % a.port]["last_success_at"])
            # the compare view sees both cards' hosts through C
            cmp_ = c.get("/compare?benchmark=smem_stride").json()
            self.assertEqual(sum(len(s["runs"]) for s in cmp_["series"]), 3)

            # A goes down: C notes the error and goes on; A comes back with a new run.
            self.assertEqual(a.stop(), 0)
            url_a = "http://127.0.0.1:%d" % a.port
            wait_for(lambda: {p["url"]: p for p in c.get("/peers").json()["peers"]}[url_a]["failures_in_row"] > 0,
                     what="C to see A down")
            err = {p["url"]: p for p in c.get("/peers").json()["peers"]}[url_a]["last_error"]
            self.assertTrue(err)
            a.start()
            late = a.post("/runs?wait=10", {"benchmark": "smem_pattern"}).json()["id"]
            wait_for(lambda: c.get("/runs/" + late).status == 200, timeout=30,
                     what="C to pull A's new run after A came back")
            self.assertEqual(c.get("/runs/" + late).json()["origin"], url_a)
        finally:
            for d in (c, b, a):
                self.assertEqual(d.stop(), 0)


class TokenPeerTest(unittest.TestCase):
    def test_pull_from_a_peer_that_closes_its_reads(self):
        token = "peer-token-for-the-fleet-0123456789"
        a = Daemon()
        path = os.path.join(a.tmp, "tokens")
        with open(path, "w") as f:
            f.write("# the fleet's token\n" + token + "\n")
        a.args += ["--token-file", path, "--auth-reads"]
        a.start()
        b = Daemon(gpus=0)
        b.args += ["--peer", "http://127.0.0.1:%d" % a.port, "--peer-interval", "1",
                   "--peer-token-file", path]
        b.start()
        c = Daemon(gpus=0)  # the same peer, without the token
        c.args += ["--peer", "http://127.0.0.1:%d" % a.port, "--peer-interval", "1"]
        c.start()
        try:
            r = a.post("/runs?wait=10", {"benchmark": "smem_pattern"},
                       headers={"Authorization": "Bearer " + token,
                                "Content-Type": "application/json"})
            self.assertEqual(r.status, 200, r)
            run_id = r.json()["id"]
            wait_for(lambda: b.get("/runs/" + run_id).status == 200, what="B to pull with the token")
            wait_for(lambda: c.get("/peers").json()["peers"][0]["last_error"], what="C to be refused")
            self.assertIn("HTTP 401", c.get("/peers").json()["peers"][0]["last_error"])
            self.assertEqual(c.get("/runs/" + run_id).status, 404)
        finally:
            for d in (c, b, a):
                self.assertEqual(d.stop(), 0)


class BadPeerHandler(http.server.BaseHTTPRequestHandler):
    mode = "garbage"
    good_line = ""

    def do_GET(self):
        if self.mode == "oversized":
            # says at once it is over any cap, whatever page is asked for
            self.send_response(200)
            self.send_header("Content-Length", str(1024 * 1024 * 1024))
            self.end_headers()
            try:
                self.wfile.write(b"x" * 65536)
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        elif self.mode == "garbage":
            body = (self.good_line + "\n{not json\n").encode()
        elif self.mode == "error":
            self.send_response(500)
            self.end_headers()
            return
        else:
            body = b""
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args):
        pass


class BadPeerTest(unittest.TestCase):
    def serve(self, mode, good_line=""):
        handler = type("H", (BadPeerHandler,), {"mode": mode, "good_line": good_line})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        return "http://127.0.0.1:%d" % server.server_address[1]

    def test_garbage_oversized_and_errors_cost_an_error_not_a_row(self):
        src = Daemon().start()
        run = src.post("/runs?wait=10", {"benchmark": "smem_pattern"}).json()
        line = src.get("/runs.ndjson").body.splitlines()[0]
        self.assertEqual(src.stop(), 0)
        peers = {"garbage": self.serve("garbage", line), "oversized": self.serve("oversized"),
                 "error": self.serve("error")}
        d = Daemon(gpus=0)
        for url in peers.values():
            d.args += ["--peer", url]
        d.args += ["--peer-interval", "1"]
        d.start()
        try:
            def states():
                return {p["url"]: p for p in d.get("/peers").json()["peers"]}
            wait_for(lambda: all(s["last_error"] for s in states().values()), what="three errors")
            s = states()
            self.assertIn("line 2", s[peers["garbage"]]["last_error"])
            self.assertIn("cap even for one run", s[peers["oversized"]]["last_error"])
            self.assertIn("HTTP 500", s[peers["error"]]["last_error"])
            # the good line before the garbage was kept, exactly once
            runs = d.get("/runs").json()["runs"]
            self.assertEqual([r["id"] for r in runs], [run["id"]])
            self.assertEqual(d.get("/healthz").status, 200)
            metrics = d.get("/metrics").body
            self.assertIn("gpubench_peer_failures_in_row{peer=\"%s\"}" % peers["error"], metrics)
        finally:
            self.assertEqual(d.stop(), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
