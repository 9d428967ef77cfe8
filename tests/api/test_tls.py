"""gpubenchd serving HTTPS (issue 23): --web-config in the Prometheus
exporter-toolkit format.  Certificates are made here with openssl
(tls_certs.py): a CA, a server certificate for 127.0.0.1 and localhost, a
client certificate, a second CA with its own client certificate, and an
expired server certificate."""
import http.client
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import DAEMON, FAKE_WORKER, Daemon  # noqa: E402
from test_fleet import wait_for  # noqa: E402
from tls_certs import Certs, CertsTestCase  # noqa: E402

RUN = {"benchmark": "smem_stride", "params": {"strides": [1, 2]}}


def context(certs, client=None, minimum=None, maximum=None):
    """A client context trusting the test CA, with client's certificate."""
    ctx = ssl.create_default_context(cafile=certs.path("ca.crt"))
    if client:
        ctx.load_cert_chain(certs.path(client + ".crt"), certs.path(client + ".key"))
    if minimum:
        ctx.minimum_version = minimum
    if maximum:
        ctx.maximum_version = maximum
    return ctx


def served_serial(port, certs):
    """The serial of the certificate a new connection is served."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with context(certs).wrap_socket(raw, server_hostname="localhost") as s:
            return int(s.getpeercert()["serialNumber"], 16)


def s_client(port, *flags):
    """openssl s_client's exit status and output for one handshake."""
    p = subprocess.run(["openssl", "s_client", "-connect", "127.0.0.1:%d" % port,
                        "-servername", "localhost"] + list(flags),
                       input=b"", stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=20)
    return p.returncode, p.stdout.decode(errors="replace")


def refuses_start(test, web_config, *words, args=()):
    """gpubenchd exits at once, naming each of words."""
    tmp = tempfile.mkdtemp(prefix="gpubench-tls-")
    try:
        p = subprocess.run([DAEMON, "--listen", "127.0.0.1:0", "--db", tmp + "/db",
                            "--worker", FAKE_WORKER, "--web-config", web_config] + list(args),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=20)
    finally:
        shutil.rmtree(tmp)
    out = p.stdout.decode(errors="replace")
    test.assertNotEqual(p.returncode, 0, out)
    test.assertNotIn("listening on", out)
    for w in words:
        test.assertIn(w, out)
    return out


class TlsTest(CertsTestCase):
    @classmethod
    def make_certs(cls, c):
        c.ca("ca2")
        cls.serial = c.server("server", "ca")
        c.client("client", "ca")
        c.client("other", "ca2")
        c.server("expired", "ca", expired=True)
        cls.plain = c.web_config("plain", "server.crt", "server.key")  # relative: its folder
        cls.mtls = c.mtls_config("mtls")

    def daemon(self, web_config, client=None, args=()):
        d = Daemon(args=["--web-config", web_config] + list(args),
                   tls=context(self.certs, client))
        self.addCleanup(d.stop)
        return d.start()

    def token_file(self, name, token):
        """A --token-file holding token; its path."""
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(token + "\n")
        return path

    def test_https_with_the_ca_and_not_without(self):
        d = self.daemon(self.plain)
        self.assertIn("listening on https://", d.read_log())
        url = "https://localhost:%d/healthz" % d.port
        ok = subprocess.run(["curl", "-sS", "--cacert", self.certs.path("ca.crt"), url],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(ok.returncode, 0, ok.stderr)
        self.assertIn(b'"status":"ok"', ok.stdout)
        bad = subprocess.run(["curl", "-sS", url], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        self.assertEqual(bad.returncode, 60, bad.stderr)  # the peer's certificate did not verify
        # Every route as over plain HTTP: a run posted and read back.
        r = d.post("/runs?wait=20", RUN)
        self.assertEqual(r.status, 200, r.body)
        self.assertEqual(d.get("/runs/" + r.json()["id"]).json()["status"], "done")
        health = d.get("/healthz").json()["tls"]
        self.assertEqual(int(health["certificate_serial"], 16), self.serial)
        self.assertIsNone(health["reload_error"])
        # Plain HTTP to the TLS port fails, and the daemon goes on.
        conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=10)
        with self.assertRaises((http.client.HTTPException, OSError)):
            conn.request("GET", "/healthz")
            conn.getresponse().read()
        conn.close()
        self.assertEqual(d.get("/healthz").status, 200)
        # No key, token or certificate body in the log.
        log = d.read_log()
        self.assertNotIn("PRIVATE KEY", log)
        self.assertNotIn("BEGIN CERTIFICATE", log)

    def test_require_and_verify_client_cert(self):
        d = self.daemon(self.mtls, client="client")
        r = d.post("/runs", RUN)
        self.assertEqual(r.status, 202, r.body)  # no token file: the certificate is enough
        for who in (None, "other"):
            with self.assertRaises((ssl.SSLError, OSError, http.client.HTTPException), msg=who):
                d.get("/healthz", tls=context(self.certs, who))
        self.assertEqual(d.get("/healthz").status, 200)

    def test_verified_certificate_or_token(self):
        tokens = self.token_file("tokens", "a-token-of-sixteen-or-more")
        cfg = self.certs.web_config("ifgiven", "server.crt", "server.key",
                                    client_auth_type="VerifyClientCertIfGiven",
                                    client_ca_file="ca.crt")
        d = self.daemon(cfg, args=["--token-file", tokens])
        r = d.post("/runs", RUN)  # neither a certificate nor a token
        self.assertEqual(r.status, 401, r.body)
        self.assertIn("client certificate", r.json()["error"]["message"])
        r = d.post("/runs", RUN, headers={"Authorization": "Bearer a-token-of-sixteen-or-more"})
        self.assertEqual(r.status, 202, r.body)
        r = d.post("/runs", RUN, tls=context(self.certs, "client"))
        self.assertEqual(r.status, 202, r.body)
        self.assertEqual(d.get("/healthz").status, 200)  # reads stay open
        # A certificate another CA signed fails the handshake itself.
        with self.assertRaises((ssl.SSLError, OSError, http.client.HTTPException)):
            d.get("/healthz", tls=context(self.certs, "other"))

    def test_client_certificate_not_verified_is_no_identity(self):
        tokens = self.token_file("tokens2", "another-token-of-sixteen")
        cfg = self.certs.web_config("request", "server.crt", "server.key",
                                    client_auth_type="RequestClientCert",
                                    client_ca_file="ca.crt")
        d = self.daemon(cfg, client="client", args=["--token-file", tokens])
        self.assertEqual(d.post("/runs", RUN).status, 401)

    def test_versions(self):
        d = self.daemon(self.plain)
        # TLS 1.1 and below: refused (SECLEVEL=0 lets this client offer them).
        for flag in ("-tls1_1", "-tls1"):
            rc, out = s_client(d.port, flag, "-cipher", "DEFAULT@SECLEVEL=0")
            self.assertNotEqual(rc, 0, out)
        rc, out = s_client(d.port, "-tls1_2")
        self.assertEqual(rc, 0, out)
        cfg = self.certs.web_config("tls13", "server.crt", "server.key", min_version="TLS13")
        d13 = self.daemon(cfg)
        rc, out = s_client(d13.port, "-tls1_2")
        self.assertNotEqual(rc, 0, out)
        with self.assertRaises((ssl.SSLError, OSError)):
            d13.get("/healthz", tls=context(self.certs, maximum=ssl.TLSVersion.TLSv1_2))
        self.assertEqual(d13.get("/healthz", tls=context(
            self.certs, minimum=ssl.TLSVersion.TLSv1_3)).status, 200)

    def test_rotation(self):
        c = Certs(os.path.join(self.tmp, "rotate"))
        for f in ("ca.crt", "ca.key"):
            shutil.copy(self.certs.path(f), c.path(f))
        c.serial = 0x2000
        first = c.server("server", "ca")
        cfg = c.web_config("web", "server.crt", "server.key")
        d = self.daemon(cfg)
        self.assertEqual(served_serial(d.port, c), first)
        old = d.connect()
        old.request("GET", "/healthz")
        self.assertEqual(old.getresponse().read()[:1], b"{")
        # The renewal: a new pair, each file replaced whole (a rename).
        second = c.server("renewed", "ca")
        os.replace(c.path("renewed.key"), c.path("server.key"))
        os.replace(c.path("renewed.crt"), c.path("server.crt"))
        self.assertEqual(served_serial(d.port, c), second)
        old.request("GET", "/healthz")  # the old keep-alive connection goes on
        self.assertEqual(old.getresponse().status, 200)
        old.close()
        # A broken renewal: reported, and the last good certificate kept.
        with open(c.path("server.crt"), "w") as f:
            f.write("-----BEGIN CERTIFICATE-----\nnot one\n-----END CERTIFICATE-----\n")
        self.assertEqual(served_serial(d.port, c), second)
        tls = d.get("/healthz").json()["tls"]
        self.assertIn("cert_file", tls["reload_error"])
        self.assertEqual(int(tls["certificate_serial"], 16), second)
        self.assertIn("gpubench_tls_certificate_reload_ok 0", d.get("/metrics").body)
        # An expired one is broken too.
        shutil.copy(self.certs.path("expired.crt"), c.path("server.crt"))
        shutil.copy(self.certs.path("expired.key"), c.path("server.key"))
        self.assertEqual(served_serial(d.port, c), second)
        self.assertIn("expired", d.get("/healthz").json()["tls"]["reload_error"])
        # SIGHUP reloads, the files unchanged since: a good pair put back
        # while the stamps happen to match is taken on the signal.
        third = c.server("third", "ca")
        shutil.copy(c.path("third.crt"), c.path("server.crt"))
        shutil.copy(c.path("third.key"), c.path("server.key"))
        d.proc.send_signal(signal.SIGHUP)
        deadline = time.time() + 10
        while d.get("/healthz").json()["tls"]["reload_error"] is not None:
            self.assertLess(time.time(), deadline, d.read_log())
            time.sleep(0.05)
        self.assertEqual(served_serial(d.port, c), third)
        self.assertIn("gpubench_tls_certificate_reload_ok 1", d.get("/metrics").body)
        self.assertNotIn("PRIVATE KEY", d.read_log())

    def test_hub_pulls_a_gpubenchd_node_over_mutual_tls(self):
        # gpubenchd to gpubenchd, both sides ours: the node requires and
        # verifies a client certificate; a hub showing the CA's client
        # certificate pulls, one showing another CA's is refused and says so.
        c = self.certs
        node = self.daemon(self.mtls, client="client")
        ids = [node.post("/runs?wait=10", RUN).json()["id"] for _ in range(2)]
        url = "https://127.0.0.1:%d" % node.port

        def hub(client):
            d = Daemon(gpus=0, args=["--peer", url, "--peer-interval", "1",
                                     "--peer-ca-file", c.path("ca.crt"),
                                     "--peer-cert-file", c.path(client + ".crt"),
                                     "--peer-key-file", c.path(client + ".key")])
            self.addCleanup(d.stop)
            return d.start()

        good, bad = hub("client"), hub("other")
        wait_for(lambda: all(good.get("/runs/" + i).status == 200 for i in ids),
                 what="the hub to pull the TLS node's runs")
        self.assertEqual(good.get("/runs/" + ids[0]).json()["origin"], url)
        wait_for(lambda: bad.get("/peers").json()["peers"][0]["last_error"],
                 what="the hub with another CA's certificate to report its failure")
        self.assertEqual(bad.get("/peers").json()["peers"][0]["runs_pulled"], 0)
        self.assertEqual(bad.get("/runs").json()["runs"], [])

    def test_expired_certificate_refused_at_start(self):
        cfg = self.certs.web_config("expired", "expired.crt", "expired.key")
        refuses_start(self, cfg, "expired.crt", "expired at 2020-01-02")

    def test_web_config_keys_refused(self):
        c = self.certs
        base = "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
        cases = [
            (base + "  cipher_suites: [TLS_AES_128_GCM_SHA256]\n", "cipher_suites"),
            (base + "  curve_preferences: [X25519]\n", "curve_preferences"),
            (base + "  prefer_server_cipher_suites: true\n", "prefer_server_cipher_suites"),
            (base + "  client_allowed_sans: [a]\n", "client_allowed_sans"),
            (base + "  key: inline\n", "tls_server_config.key"),
            (base + "  bogus: 1\n", "tls_server_config.bogus"),
            (base + "http_server_config:\n  http2: false\n", "http_server_config"),
            (base + "basic_auth_users:\n  alice: x\n", "basic_auth_users"),
            (base + "rate_limit:\n  burst: 1\n", "rate_limit"),
            (base + "whatever: 1\n", "whatever"),
            (base + "  min_version: TLS11\n", "min_version"),
            (base + "  client_auth_type: Sometimes\n", "Sometimes"),
            (base + "  client_auth_type: RequireAndVerifyClientCert\n", "client_ca_file"),
        ]
        for i, (text, word) in enumerate(cases):
            path = c.path("bad%d.yml" % i)
            with open(path, "w") as f:
                f.write(text)
            with self.subTest(word=word):
                refuses_start(self, path, word)

    def test_bind_rule(self):
        # Beyond loopback: a client-certificate config is enough...
        tmp = tempfile.mkdtemp(prefix="gpubench-tls-")
        self.addCleanup(shutil.rmtree, tmp, True)
        p = subprocess.Popen([DAEMON, "--listen", ":0", "--db", tmp + "/db", "--worker",
                              FAKE_WORKER, "--web-config", self.mtls],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            line = b""
            deadline = time.time() + 10
            while b"listening on" not in line and time.time() < deadline:
                line = p.stdout.readline()
                self.assertTrue(line, "gpubenchd exited")
        finally:
            p.terminate()
            p.wait(10)
            p.stdout.close()
        # ...one without a client CA is not.
        refuses_start(self, self.plain, "refusing to listen", args=["--listen", ":0"])


if __name__ == "__main__":
    unittest.main()
