"""Who may speak to a daemon: what is decided on a request's headers,
before its body is read (server/http/request_guard.c, http.c).

- A write's body must come as its route's type (415 otherwise): a web
  page's form can send only form encodings and text/plain, so no form of
  another site can queue runs, import runs or acknowledge alerts.  Form
  encoding with no Origin header (curl -d, never a browser) is read as
  the route's type.
- A request whose Origin is a page of another site is refused (403),
  unless --web-allowed-origins lists it.
- On loopback (or without tokens) a Host that names the daemon by a name
  it does not answer to is refused (421): a page that rebinds its own name
  to 127.0.0.1 (DNS rebinding).
- Tokens, the rate limit, the cap and the daemon's body budget
  (--max-body-memory) are decided before the body is read: eight
  unauthenticated 60 MiB uploads leave the daemon's memory where it was.
- POST /runs/import counts against --rate-limit as a post does.
"""
import os
import socket
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402

EVIL = "http://evil.example"


def rss_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    raise AssertionError("no VmRSS for %d" % pid)


def post_headers(port, path, length, ctype="application/x-ndjson"):
    """A connection that has sent a POST's headers and none of its body."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(("POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: %s\r\n"
               "Content-Length: %d\r\n\r\n" % (path, port, ctype, length)).encode())
    return s


def status_of(data):
    """The status of the HTTP answer that starts data, or None."""
    if not data.startswith(b"HTTP/1."):
        return None
    return int(data.split(b" ", 2)[1])


class GuardTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Daemon(args=["--web-host", "bench.lab, gpu-box",
                             "--web-allowed-origins", "https://grafana.example:3000"]).start()

    @classmethod
    def tearDownClass(cls):
        assert cls.d.stop() == 0

    def runs(self):
        return self.d.sql("SELECT count(*) FROM runs")[0][0]

    def assertError(self, r, status, code, *words):
        self.assertEqual(r.status, status, r)
        err = r.json()["error"]
        self.assertEqual(err["code"], code, r)
        for w in words:
            self.assertIn(w, err["message"])
        return err

    def test_a_write_needs_its_content_type(self):
        before = self.runs()
        body = '{"benchmark": "smem_pattern"}'
        # What a form sends: refused, saying what to send.
        for ctype in ("text/plain", "text/plain;charset=UTF-8",
                      "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
            r = self.d.post("/runs", body, headers={"Content-Type": ctype,
                                                    "Origin": "http://127.0.0.1:%d" % self.d.port})
            self.assertError(r, 415, "unsupported_media_type", "Content-Type: application/json",
                             "-H 'Content-Type: application/json'")
        # The same without an Origin (no browser): refused too, but form
        # encoding, which is what curl -d sends
        for ctype in ("text/plain", "multipart/form-data; boundary=x"):
            r = self.d.post("/runs", body, headers={"Content-Type": ctype})
            self.assertError(r, 415, "unsupported_media_type", "Content-Type: application/json")
        r = self.d.post("/runs", body, headers={})  # harness default: application/json
        self.assertEqual(r.status, 202, r)
        r = self.d.post("/runs", body, headers={"Content-Type": "Application/JSON; charset=utf-8"})
        self.assertEqual(r.status, 202, r)
        self.assertEqual(self.runs(), before + 2, "a refused write queued a run")
        # curl -d as the brief's first example sends it: form encoding, no
        # Origin; the body is still read as JSON, strictly
        r = self.d.post("/runs", body,
                        headers={"Content-Type": "application/x-www-form-urlencoded"})
        self.assertEqual(r.status, 202, r)
        r = self.d.post("/runs", "benchmark=smem_pattern",
                        headers={"Content-Type": "application/x-www-form-urlencoded"})
        self.assertEqual(r.status, 400, r)
        self.assertEqual(self.runs(), before + 3, "a form-encoded form body queued a run")
        # An import takes NDJSON (or JSON); a form's body is refused, naming NDJSON.
        r = self.d.post("/runs/import", "\n", headers={"Content-Type": "text/plain"})
        self.assertError(r, 415, "unsupported_media_type", "application/x-ndjson")
        for ctype in ("application/x-ndjson", "application/json; charset=utf-8"):
            r = self.d.post("/runs/import", "\n", headers={"Content-Type": ctype})
            self.assertEqual(r.status, 200, r)
        # An acknowledgement, whatever its id, the same.
        r = self.d.post("/alerts/1/ack", '{"reason": "x"}', headers={"Content-Type": "text/plain"})
        self.assertError(r, 415, "unsupported_media_type")
        # A prediction is a POST too; a delete with no body needs no type.
        r = self.d.post("/predict", '{"stride": 2}', headers={"Content-Type": "text/plain"})
        self.assertError(r, 415, "unsupported_media_type")
        self.assertEqual(self.d.request("DELETE", "/baselines/none").status, 404)

    def test_a_page_of_another_site_is_refused(self):
        before = self.runs()
        form = {"Origin": EVIL, "Content-Type": "text/plain"}
        r = self.d.post("/runs", '{"benchmark": "smem_pattern"}', headers=form)
        self.assertError(r, 403, "forbidden_origin", EVIL, "--web-allowed-origins")
        # Even as JSON (a fetch that a preflight would stop): the Origin decides.
        for path, body in (("/runs", '{"benchmark": "smem_pattern"}'),
                           ("/runs/import", "\n"), ("/alerts/1/ack", '{"reason": "x"}')):
            r = self.d.post(path, body, headers={"Origin": EVIL})
            self.assertError(r, 403, "forbidden_origin")
        self.assertError(self.d.get("/runs", headers={"Origin": EVIL}), 403, "forbidden_origin")
        self.assertError(self.d.post("/runs", "{}", headers={"Origin": "null"}), 403,
                         "forbidden_origin")
        self.assertEqual(self.runs(), before, "a page of another site queued a run")
        # The daemon's own page, by each name it answers to, and a listed origin.
        own = "http://127.0.0.1:%d" % self.d.port
        r = self.d.post("/runs", '{"benchmark": "smem_pattern"}', headers={"Origin": own})
        self.assertEqual(r.status, 202, r)
        local = "localhost:%d" % self.d.port
        r = self.d.post("/runs", '{"benchmark": "smem_pattern"}',
                        headers={"Origin": "http://" + local, "Host": local})
        self.assertEqual(r.status, 202, r)
        r = self.d.post("/runs", '{"benchmark": "smem_pattern"}',
                        headers={"Origin": "https://grafana.example:3000"})
        self.assertEqual(r.status, 202, r)
        # Its own name over https (a TLS front before the daemon keeps the Host).
        r = self.d.post("/runs", '{"benchmark": "smem_pattern"}',
                        headers={"Origin": "https://127.0.0.1:%d" % self.d.port})
        self.assertEqual(r.status, 202, r)
        # Another port or name is another origin.
        for other in ("http://127.0.0.1:1", "http://localhost:%d" % self.d.port,
                      "https://grafana.example", "ftp://127.0.0.1:%d" % self.d.port):
            self.assertError(self.d.post("/runs", "{}", headers={"Origin": other}), 403,
                             "forbidden_origin")
        self.assertEqual(self.runs(), before + 4)

    def test_dns_rebinding_is_refused(self):
        port = self.d.port
        for host in ("evil.example:%d" % port, "evil.example", "127.0.0.1.evil.example:%d" % port,
                     "bench.lab.evil:%d" % port, "[::1", "localhost:x", "localhost:"):
            r = self.d.get("/runs", headers={"Host": host})
            self.assertError(r, 421, "misdirected_request", "--web-host")
            r = self.d.post("/runs", '{"benchmark": "smem_pattern"}', headers={"Host": host})
            self.assertEqual(r.status, 421, (host, r))
        for host in ("127.0.0.1:%d" % port, "localhost:%d" % port, "LocalHost:%d" % port,
                     "[::1]:%d" % port, "bench.lab:%d" % port, "GPU-BOX:%d" % port,
                     "10.1.2.3:%d" % port, "127.0.0.1", "bench.lab",
                     # Another port: an ssh tunnel or a TLS front in between.
                     "localhost:9000"):
            self.assertEqual(self.d.get("/healthz", headers={"Host": host}).status, 200, host)

    def test_rebinding_is_refused_on_loopback_with_tokens_too(self):
        d = Daemon()
        path = os.path.join(d.tmp, "tokens")
        with open(path, "w") as f:
            f.write("s3cret-token-for-tests-0123456789\n")
        d.args += ["--token-file", path]
        d.start()
        try:
            self.assertError(d.get("/runs", headers={"Host": "evil.example:%d" % d.port}), 421,
                             "misdirected_request")
            self.assertEqual(d.get("/runs").status, 200)
        finally:
            self.assertEqual(d.stop(), 0)


class BodyBeforeAuthTest(unittest.TestCase):
    TOKEN = "s3cret-token-for-tests-0123456789"
    UPLOAD = 60 * 1024 * 1024
    UPLOADS = 8
    # The daemon's resident size while eight 60 MiB uploads without a token
    # come at once: refused on their headers, none is buffered.  Before, the
    # daemon read each whole (to 326 MB) and only then asked for the token.
    BOUND_MB = 100

    def test_unauthenticated_uploads_are_refused_before_their_body(self):
        d = Daemon()
        path = os.path.join(d.tmp, "tokens")
        with open(path, "w") as f:
            f.write(self.TOKEN + "\n")
        d.args += ["--token-file", path]
        d.start()
        peak = [rss_mb(d.proc.pid)]
        early = [None] * self.UPLOADS
        done = threading.Event()

        def watch():
            while not done.is_set():
                peak[0] = max(peak[0], rss_mb(d.proc.pid))
                time.sleep(0.01)

        def upload(i):
            s = post_headers(d.port, "/runs/import", self.UPLOAD)
            try:
                # The answer comes on the headers alone, without the body.
                s.settimeout(3)
                try:
                    early[i] = status_of(s.recv(4096))
                except socket.timeout:
                    early[i] = None
                # Then the body, as a client that did not wait would send it.
                s.settimeout(30)
                chunk = b"x" * (1024 * 1024)
                try:
                    for _ in range(self.UPLOAD // len(chunk)):
                        s.sendall(chunk)
                    s.recv(4096)
                except OSError:
                    pass  # the daemon closed the connection: the body was not wanted
            finally:
                s.close()

        watcher = threading.Thread(target=watch)
        watcher.start()
        threads = [threading.Thread(target=upload, args=(i,)) for i in range(self.UPLOADS)]
        try:
            for t in threads:
                t.start()
            for t in threads:
                t.join(120)
            time.sleep(0.3)
        finally:
            done.set()
            watcher.join()
        try:
            self.assertLess(peak[0], self.BOUND_MB,
                            "the daemon grew to %.0f MB reading uploads without a token" % peak[0])
            self.assertEqual(early, [401] * self.UPLOADS,
                             "an upload without a token was not refused on its headers")
            self.assertEqual(d.get("/healthz").status, 200)
            self.assertEqual(d.sql("SELECT count(*) FROM runs")[0][0], 0)
        finally:
            self.assertEqual(d.stop(), 0)

    def test_body_budget(self):
        d = Daemon(args=["--max-body-memory", "1"]).start()
        try:
            # One upload past the whole budget (under the import's cap): 503 at once.
            s = post_headers(d.port, "/runs/import", 2 * 1024 * 1024)
            got = s.recv(4096)
            s.close()
            self.assertEqual(status_of(got), 503, got)
            self.assertIn(b"Retry-After: 1", got)
            self.assertIn(b"--max-body-memory", got)
            # Two of 768 KiB at once: the second does not fit while the first is read.
            part = 768 * 1024
            first = post_headers(d.port, "/runs/import", part)
            first.sendall(b"\n" * 1024)
            time.sleep(0.3)
            second = post_headers(d.port, "/runs/import", part)
            got = second.recv(4096)
            second.close()
            self.assertEqual(status_of(got), 503, got)
            self.assertIn(b'"code":"busy"', got)
            first.sendall(b"\n" * (part - 1024))
            self.assertEqual(status_of(first.recv(4096)), 200)
            first.close()
            # Its bytes are given back once it is answered.
            deadline = time.time() + 5
            status = None
            while status != 200 and time.time() < deadline:
                try:
                    status = d.post("/runs/import", "\n" * part).status
                except OSError:  # a 503 came before the body was all sent
                    status = None
                time.sleep(0.1)
            self.assertEqual(status, 200, "the first upload's bytes were never given back")
        finally:
            self.assertEqual(d.stop(), 0)


class ImportRateTest(unittest.TestCase):
    def test_imports_count_against_the_post_rate(self):
        d = Daemon(args=["--rate-limit", "6", "--rate-burst", "2"]).start()
        try:
            for _ in range(2):
                self.assertEqual(d.post("/runs/import", "\n").status, 200)
            r = d.post("/runs/import", "\n")
            self.assertEqual(r.status, 429, r)
            self.assertEqual(r.json()["error"]["code"], "rate_limited")
            self.assertGreaterEqual(int(r.header("Retry-After")), 1)
            # One bucket for runs and imports alike.
            self.assertEqual(d.post("/runs", {"benchmark": "smem_pattern"}).status, 429)
            self.assertEqual(d.get("/runs").status, 200, "reads are not rate limited")
        finally:
            self.assertEqual(d.stop(), 0)


if __name__ == "__main__":
    unittest.main()
