"""gpubenchd's certificate reloads (issue 35, item 8): a certificate not
valid yet is refused at the start and on a rotation, a reload frees the
pair it replaced (RSS stays flat over thousands of SIGHUPs), and a SIGHUP
that finds the files unchanged loads nothing.

Certificates are made with openssl (tls_certs.py); the one not valid yet
with openssl ca -startdate (openssl 3.0's x509 and req take no start)."""
import os
import re
import shutil
import signal
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, daemon_sanitizer  # noqa: E402
from test_tls import context, refuses_start, served_serial  # noqa: E402
from tls_certs import CertsTestCase  # noqa: E402

FUTURE = "20991231000000Z"
RELOADS = 2000
RSS_BOUND_KB = 2048  # 2,000 reloads that each kept their pair (3.4 KB) grew it 6.8 MB


def metric(d, name):
    m = re.search(r"^%s (\d+)$" % name, d.get("/metrics").body, re.M)
    return int(m.group(1))


def rss_kb(d):
    with open("/proc/%d/status" % d.proc.pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


class ReloadTest(CertsTestCase):
    @classmethod
    def make_certs(cls, c):
        cls.serials = {n: c.server(n, "ca") for n in ("a", "b")}
        c.server("future", "ca", not_before=FUTURE)

    def serve(self, pair):
        """pair's files put in place as server.crt/.key, each replaced whole."""
        c = self.certs
        for ext in (".key", ".crt"):
            shutil.copyfile(c.path(pair + ext), c.path("next" + ext))
            os.replace(c.path("next" + ext), c.path("server" + ext))

    def daemon(self):
        self.serve("a")
        cfg = self.certs.web_config("web", "server.crt", "server.key")
        d = Daemon(args=["--web-config", cfg], tls=context(self.certs))
        self.addCleanup(d.stop)
        return d.start()

    def log_lines_after(self, d, offset, words, timeout=10):
        """Waits for a line with words in d's log after offset; the new offset."""
        deadline = time.time() + timeout
        with open(d.log_path, "rb") as f:
            while True:
                f.seek(offset)
                data = f.read()
                i = data.find(words)
                if i >= 0:
                    return offset + data.index(b"\n", i) + 1
                self.assertLess(time.time(), deadline, "no %r in the log" % words)
                time.sleep(0.002)

    def test_not_yet_valid_refused_at_start(self):
        cfg = self.certs.web_config("future", "future.crt", "future.key")
        refuses_start(self, cfg, "future.crt", "not valid before 2099-12-31T00:00:00Z")

    def test_not_yet_valid_not_taken_on_rotation(self):
        d = self.daemon()
        self.assertEqual(metric(d, "gpubench_tls_certificate_reload_ok"), 1)
        self.serve("future")
        self.assertEqual(served_serial(d.port, self.certs), self.serials["a"])
        tls = d.get("/healthz").json()["tls"]
        self.assertIn("not valid before 2099-12-31", tls["reload_error"])
        self.assertEqual(int(tls["certificate_serial"], 16), self.serials["a"])
        self.assertEqual(metric(d, "gpubench_tls_certificate_reload_ok"), 0)
        self.assertIn("the new certificate was not taken, serving serial %x still: "
                      % self.serials["a"], d.read_log().lower())

    def test_reloads_free_the_old_pair(self):
        d = self.daemon()
        offset = os.path.getsize(d.log_path)
        pairs = ("b", "a")

        def reload(i):
            # No handshake between: the SIGHUP does the reload, and its log
            # line says it is done before the next signal.
            nonlocal offset
            self.serve(pairs[i % 2])
            d.proc.send_signal(signal.SIGHUP)
            offset = self.log_lines_after(d, offset, b"TLS: serving certificate serial")

        for i in range(200):  # the allocator's arenas warm
            reload(i)
        before = rss_kb(d)
        for i in range(RELOADS):
            reload(i)
        grown = rss_kb(d) - before
        # ThreadSanitizer's shadow of each fresh heap address counts in the
        # RSS (2.4 MB over 2,000 reloads seen under it, with no pair kept):
        # the bound is asserted by the normal and the AddressSanitizer passes.
        if daemon_sanitizer() == "thread":
            print("SKIP the RSS bound: gpubenchd is built with ThreadSanitizer, whose shadow "
                  "memory swamps the figure (RSS grew %d KB over %d reloads)" % (grown, RELOADS))
        else:
            self.assertLess(grown, RSS_BOUND_KB,
                            "RSS grew %d KB over %d reloads" % (grown, RELOADS))
        self.assertEqual(metric(d, "gpubench_tls_certificate_loads_total"), 200 + RELOADS)
        self.assertEqual(served_serial(d.port, self.certs), self.serials["a"])

    def test_sighup_with_unchanged_files_loads_nothing(self):
        d = self.daemon()
        loads = metric(d, "gpubench_tls_certificate_loads_total")
        offset = os.path.getsize(d.log_path)
        for _ in range(20):
            d.proc.send_signal(signal.SIGHUP)
            offset = self.log_lines_after(d, offset, b"did not change, not reloaded")
        self.assertEqual(metric(d, "gpubench_tls_certificate_loads_total"), loads)
        self.assertEqual(metric(d, "gpubench_tls_certificate_unchanged_total"), 20)
        # Touched (its stamp new, its bytes the same): not loaded either.
        os.utime(self.certs.path("server.crt"))
        d.proc.send_signal(signal.SIGHUP)
        self.log_lines_after(d, offset, b"did not change, not reloaded")
        self.assertEqual(metric(d, "gpubench_tls_certificate_loads_total"), loads)


if __name__ == "__main__":
    unittest.main()
