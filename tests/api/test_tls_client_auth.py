"""gpubenchd's client certificates (issue 35, item 8): what a certificate
must be to be a client's, and the reason a refused client is given, on the
client's side (curl, the command-line client, a hub's GET /peers) and in
the daemon's log.

Certificates are made with openssl (tls_certs.py): "client" carries the
clientAuth extended key usage, "server" only serverAuth (a node's own
certificate, signed by the same CA), "noeku" none at all."""
import os
import re
import ssl
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402
from test_client import Client  # noqa: E402
from test_fleet import wait_for  # noqa: E402
from test_tls import context  # noqa: E402
from tls_certs import CertsTestCase  # noqa: E402

# A line of the daemon's log: its RFC 3339 stamp first (log.h).
STAMPED = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
ASKS = "the daemon asks for a client certificate: --cert/--key"


class ClientAuthTest(CertsTestCase):
    @classmethod
    def make_certs(cls, c):
        c.server("server", "ca")
        c.client("client", "ca")
        c.issue("noeku", "ca", None)
        c.issue("codesign", "ca", "codeSigning")
        cls.mtls = c.mtls_config("mtls")

    def daemon(self, args=(), **kw):
        d = Daemon(args=args, **kw)
        self.addCleanup(d.stop)
        return d.start()

    def node(self):
        return self.daemon(["--web-config", self.mtls], tls=context(self.certs, "client"))

    def curl(self, port, cert=None, flags=()):
        c = self.certs
        args = ["curl", "-sS", "--cacert", c.path("ca.crt")] + list(flags)
        if cert:
            args += ["--cert", c.path(cert + ".crt"), "--key", c.path(cert + ".key")]
        p = subprocess.run(args + ["https://localhost:%d/healthz" % port],
                           capture_output=True, text=True, timeout=20)
        return p.returncode, p.stderr

    def assert_stamped(self, log):
        for line in log.splitlines():
            self.assertRegex(line, STAMPED, "a log line without its time")
        # Every libmicrohttpd message goes through log.h, none past it.
        self.assertNotIn("printed by the standard MHD logger", log)

    def test_client_certificate_needs_client_auth_purpose(self):
        d = self.node()
        for ok in ("client", "noeku"):  # clientAuth, or no extended key usage at all
            self.assertEqual(d.get("/healthz", tls=context(self.certs, ok)).status, 200, ok)
            self.assertEqual(self.curl(d.port, ok)[0], 0, ok)
        for bad in ("server", "codesign"):  # signed by the CA, but not for a client
            with self.assertRaises((ssl.SSLError, OSError), msg=bad):
                d.get("/healthz", tls=context(self.certs, bad))
            code, err = self.curl(d.port, bad)
            self.assertNotEqual(code, 0, bad)
            self.assertIn("alert unsupported certificate", err, bad)
        log = d.read_log()
        self.assertRegex(log, r"TLS: client 127\.0\.0\.1:\d+ refused at the handshake: its "
                              r"certificate is not for client authentication")
        self.assert_stamped(log)

    def test_a_missing_certificate_is_named_everywhere(self):
        d = self.node()
        # curl(1): the alert, not "Empty reply from server" or "Broken pipe".
        for flags in [()] * 5 + [("--tls-max", "1.2")] * 2:
            code, err = self.curl(d.port, flags=flags)
            self.assertNotEqual(code, 0, flags)
            self.assertIn("alert certificate required", err, flags)
        # The command-line client says which options give one.
        client = Client(d, env={"GPUBENCH_URL": "https://localhost:%d" % d.port,
                                "GPUBENCH_CACERT": self.certs.path("ca.crt")})
        code, out, err = client("runs")
        self.assertEqual(code, 3, out)
        self.assertIn(ASKS, err)
        c = self.certs
        code, out, err = client("runs", "--cert", c.path("client.crt"),
                                "--key", c.path("client.key"))
        self.assertEqual(code, 0, err)
        # A hub without a client certificate: its GET /peers says so.
        hub = self.daemon(["--peer", "https://localhost:%d" % d.port, "--peer-interval", "1",
                           "--peer-ca-file", c.path("ca.crt")], gpus=0)
        why = wait_for(lambda: hub.get("/peers").json()["peers"][0]["last_error"],
                       what="the hub's reason")
        self.assertIn("asks for a client certificate", why)
        self.assertNotIn("Broken pipe", why)
        # The daemon's log: the reason, the client's address, its time;
        # libmicrohttpd's and GnuTLS's words through the same logger.
        log = d.read_log()
        self.assertRegex(log, r"TLS: client 127\.0\.0\.1:\d+ refused at the handshake: it sent "
                              r"no client certificate \(client_auth_type "
                              r"RequireAndVerifyClientCert\)")
        self.assert_stamped(log)


if __name__ == "__main__":
    unittest.main()
