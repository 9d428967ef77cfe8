"""gpubench speaking TLS to others (issue 23): a hub pulling its peers over
https, the alert webhook over https, and the command-line client against an
https daemon; each verifies the certificate it is shown and names the
reason when it does not verify.

The certificates are made here with openssl (tls_certs.py).  The TLS nodes
are fronts (tls_front.py) before plain gpubenchd daemons with the worker's
TEST DOUBLE, so this tests the speaking side alone; start_tls_node is the
one place to swap for a gpubenchd that serves TLS itself."""
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402
from test_client import Client  # noqa: E402
from test_fleet import wait_for  # noqa: E402
from tls_certs import PeerCerts  # noqa: E402
from tls_front import https_receiver, start_tls_node  # noqa: E402

BODY = {"benchmark": "smem_stride", "params": {"strides": [1, 2, 32]}}

# How libcurl (OpenSSL) words each refusal: the reason GET /peers and the
# log must show, not merely that a pull failed.
UNKNOWN_CA = "unable to get local issuer certificate"
EXPIRED = "certificate has expired"
OTHER_HOST = "no alternative certificate subject name matches target host name"
NO_CLIENT_CERT = "certificate required"


def peers_of(hub):
    return {p["url"]: p for p in hub.get("/peers").json()["peers"]}


class TlsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="gpubench-tls-")
        cls.certs = PeerCerts(cls.dir)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def started(self, thing):
        """thing, stopped (exit status 0 for a daemon) when the test ends."""
        self.addCleanup(lambda: self.assertIn(thing.stop(), (0, None)))
        return thing

    def hub(self, peers, client_cert=True, ca=None):
        c = self.certs
        args = ["--peer-interval", "1", "--peer-ca-file", ca or c.ca]
        for url in peers:
            args += ["--peer", url]
        if client_cert:
            args += ["--peer-cert-file", c.client[0], "--peer-key-file", c.client[1]]
        return self.started(Daemon(gpus=0, args=args).start())

    def test_hub_pulls_a_node_over_mutual_tls(self):
        node = self.started(start_tls_node(self.certs.server, client_ca=self.certs.ca))
        ids = [node.daemon.post("/runs?wait=10", BODY).json()["id"] for _ in range(2)]
        hub = self.hub([node.url])
        wait_for(lambda: all(hub.get("/runs/" + i).status == 200 for i in ids),
                 what="the hub to pull the node's runs over mutual TLS")
        self.assertEqual(hub.get("/runs/" + ids[0]).json()["origin"], node.url)
        # The count follows the runs' transaction by a moment.
        peer = wait_for(lambda: (lambda p: p["runs_pulled"] == 2 and p)(peers_of(hub)[node.url]),
                        what="the hub to count the runs it pulled")
        self.assertIsNone(peer["last_error"])
        self.assertEqual(node.front.handshake_errors, [])
        # Neither the key nor the certificate's private part is ever logged.
        with open(self.certs.client[1]) as f:
            key_lines = [l for l in f.read().splitlines() if l and "-----" not in l]
        self.assertFalse([l for l in key_lines if l in hub.read_log()])

    def test_peers_that_do_not_verify_are_reported_and_not_pulled(self):
        c = self.certs
        backend = self.started(Daemon().start())
        run_id = backend.post("/runs?wait=10", BODY).json()["id"]
        # One node, shown through fronts whose certificates do not verify.
        nodes = {why: self.started(start_tls_node(cert, daemon=backend, client_ca=ca)).url
                 for why, cert, ca in ((UNKNOWN_CA, c.other_server, None),
                                       (EXPIRED, c.expired, None),
                                       (OTHER_HOST, c.other_host, None))}
        # The hub has no client certificate; this node requires one.
        nodes[NO_CLIENT_CERT] = self.started(
            start_tls_node(c.server, daemon=backend, client_ca=c.ca)).url
        hub = self.hub(nodes.values(), client_cert=False)
        wait_for(lambda: all(p["last_error"] for p in peers_of(hub).values()),
                 what="every peer's error")
        peers = peers_of(hub)
        for why, url in nodes.items():
            self.assertIn(why, peers[url]["last_error"], url)
            self.assertGreater(peers[url]["failures_in_row"], 0)
            self.assertEqual(peers[url]["runs_pulled"], 0)
        self.assertEqual(hub.get("/runs/" + run_id).status, 404)
        self.assertEqual(hub.get("/runs").json()["runs"], [])
        self.assertIn(UNKNOWN_CA, hub.read_log())

    def webhook_daemon(self, receiver, ca):
        d = self.started(Daemon(args=["--alert-webhook", receiver.url, "--peer-ca-file", ca,
                                      "--history-runs", "8", "--confirm-runs", "0"]).start())
        # Eight runs at the card's pace (the shortest history that judges),
        # then one 5% slower: confirmed alerts.
        for mode in ["normal"] * 8 + ["slow=1.05"]:
            d.set_mode(mode)
            self.assertEqual(d.post("/runs?wait=20", BODY).json()["status"], "done")
        confirmed = [a for a in d.get("/alerts").json()["alerts"] if a["state"] == "confirmed"]
        self.assertTrue(confirmed)
        return d, confirmed

    def test_webhook_posts_over_https_with_the_ca(self):
        receiver = https_receiver(self.certs.server)
        self.addCleanup(receiver.server_close)
        self.addCleanup(receiver.shutdown)
        d, confirmed = self.webhook_daemon(receiver, self.certs.ca)
        wait_for(lambda: len(receiver.bodies) >= len(confirmed), what="the posts over https")
        self.assertEqual(sorted(b["id"] for b in receiver.bodies),
                         sorted(a["id"] for a in confirmed))

    def test_webhook_refuses_a_receiver_of_another_ca(self):
        receiver = https_receiver(self.certs.server)
        self.addCleanup(receiver.server_close)
        self.addCleanup(receiver.shutdown)
        d, _ = self.webhook_daemon(receiver, self.certs.other_ca)
        line = wait_for(lambda: [l for l in d.read_log().splitlines()
                                 if "alert webhook" in l and UNKNOWN_CA in l],
                        what="the webhook's refusal, with its reason, in the log")
        self.assertIn(receiver.url, line[0])
        self.assertEqual(receiver.bodies, [])

    def test_client_verifies_the_daemon(self):
        c = self.certs
        node = self.started(start_tls_node(c.server))
        run_id = node.daemon.post("/runs?wait=10", BODY).json()["id"]
        client = Client(node.daemon, env={"GPUBENCH_URL": node.url})
        code, out, err = client("show", run_id, "--cacert", c.ca)
        self.assertEqual(code, 0, err)
        self.assertIn(run_id, out)
        code, out, err = client("show", run_id)
        self.assertEqual(code, 3, out)
        self.assertIn("SSL certificate problem: " + UNKNOWN_CA, err)
        self.assertIn("--cacert", err)
        code, out, err = client("show", run_id, env={"GPUBENCH_CACERT": c.ca})
        self.assertEqual(code, 0, err)
        code, out, err = client("show", run_id, "--cacert", c.other_ca)
        self.assertEqual(code, 3, out)
        self.assertIn(UNKNOWN_CA, err)
        expired = self.started(start_tls_node(c.expired, daemon=node.daemon))
        code, out, err = client("show", run_id, "--cacert", c.ca, "--url", expired.url)
        self.assertEqual(code, 3, out)
        self.assertIn(EXPIRED, err)

    def test_client_certificate_for_a_daemon_that_requires_one(self):
        c = self.certs
        node = self.started(start_tls_node(c.server, client_ca=c.ca))
        client = Client(node.daemon, env={"GPUBENCH_URL": node.url, "GPUBENCH_CACERT": c.ca})
        code, out, err = client("runs")
        self.assertEqual(code, 3, out)
        self.assertIn(NO_CLIENT_CERT, err)
        code, out, err = client("runs", "--cert", c.client[0], "--key", c.client[1])
        self.assertEqual(code, 0, err)
        code, out, err = client("runs", env={"GPUBENCH_CERT": c.client[0],
                                             "GPUBENCH_KEY": c.client[1]})
        self.assertEqual(code, 0, err)

    def test_help_lists_the_tls_options(self):
        code, out, _ = Client(self.started(Daemon().start()))("--help")
        self.assertEqual(code, 0)
        for opt in ("--cacert FILE", "--cert FILE", "--key FILE"):
            self.assertIn(opt, out)


if __name__ == "__main__":
    unittest.main()
