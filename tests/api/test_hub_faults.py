"""A hub sees its peers' cards' critical events (issue 24; README "Watching
cards" and "A fleet"): the watch of a node (the worker test double reading
the stand-in NVML, tests/fake_nvml.c, as test_card_events.py does) finds an
XID 79 and makes its card degraded; the hub that pulls the node, and a lab
hub that pulls that hub, fetch GET /card_faults after their pulls and judge
the card degraded with the node's reason, in /coverage, /cards, /metrics
and `gpubench check --host`.  The event ended at the node (its floored
health runs passing) ends at the hubs; a node that cannot be reached keeps
its card degraded at the hub; a node removed from the peers file has its
faults dropped.  A peer without the route (an older gpubench: a stand-in
HTTP server here) is not a failed pull."""
import http.server
import os
import re
import shutil
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402
from test_card_events import Card, nothing  # noqa: E402
from test_client import Client  # noqa: E402
from test_fleet import wait_for  # noqa: E402
from test_hub import url, write_file  # noqa: E402

H200 = {"GPUBENCH_FAKE_GPU_NAME": "NVIDIA H200"}  # its health rows pass their floors
INTERVAL = 1


def health_run(d):
    """The health suite on d's card, every run done."""
    r = d.post("/runs?wait=60", {"benchmark": "health"})
    assert r.status in (200, 202), r
    return [d.wait_status(x["id"], ("done",), timeout=60) for x in r.json()["runs"]]


def covered(d, uuid):
    """(state, reason) of card uuid in d's GET /coverage, or None."""
    cards = [c for c in d.get("/coverage").json()["cards"] if c["uuid"] == uuid]
    return (cards[0]["state"], cards[0]["reason"]) if cards else None


def state(d, uuid):
    """The state alone of card uuid in d's GET /coverage, or None."""
    got = covered(d, uuid)
    return got[0] if got else None


def listed(d, uuid):
    """(state, reason) of card uuid in d's GET /cards."""
    card = [c for c in d.get("/cards").json()["cards"] if c["uuid"] == uuid][0]
    return card["state"], card["reason"]


def faults(d):
    """d's GET /card_faults, by uuid."""
    r = d.get("/card_faults")
    assert r.status == 200, r
    return {c["uuid"]: c for c in r.json()["cards"]}


def metric_state(d, uuid):
    text = d.get("/metrics").body
    text = text.decode() if isinstance(text, bytes) else text
    got = re.findall(r'(?m)^gpubench_card_state\{[^}]*uuid="%s"[^}]*state="(\w+)"\} 1$' % uuid,
                     text)
    return got[0] if got else None


class HubFaultsTest(unittest.TestCase):
    def test_hubs_judge_a_peers_card_as_its_node_does(self):
        tmp = tempfile.mkdtemp(prefix="gpubench-hubfaults-")
        self.addCleanup(shutil.rmtree, tmp, True)
        node = Card(env=H200)
        running = [node.d]
        try:
            health_run(node.d)
            path = os.path.join(tmp, "peers.json")
            write_file(path, [{"targets": [url(node.d)]}])
            hub = Daemon(gpus=0, args=["--peers-file", path, "--peer-interval",
                                       str(INTERVAL)]).start()
            running.append(hub)
            lab = Daemon(gpus=0, args=["--peer", url(hub), "--peer-interval",
                                       str(INTERVAL)]).start()
            running.append(lab)
            for d in (hub, lab):
                wait_for(lambda: state(d, node.uuid) == "healthy", timeout=30,
                         what="the node's card healthy at a hub")
            self.assertEqual(faults(node.d), {})
            self.assertEqual(faults(hub), {})

            # An XID 79 on the node: degraded there, then at both hubs alike.
            node.append(nothing, xids=[79])
            node.wait_events(1)
            at_node = covered(node.d, node.uuid)
            self.assertEqual(at_node[0], "degraded")
            self.assertIn("XID 79", at_node[1])
            for d in (hub, lab):
                wait_for(lambda: covered(d, node.uuid) == at_node, timeout=10 * INTERVAL,
                         what="the card degraded at a hub")
                self.assertEqual(listed(d, node.uuid), at_node)
                self.assertEqual(metric_state(d, node.uuid), "degraded")

            own = faults(node.d)[node.uuid]
            self.assertEqual(own["host"], node.d.get("/coverage").json()["cards"][0]["host"])
            self.assertEqual([(f["kind"], f["subject"], f["source"], f["hops"])
                              for f in own["faults"]], [("card_event", "xid 79", None, 0)])
            self.assertEqual(at_node[1], own["faults"][0]["message"])
            for d, source, hops in ((hub, url(node.d), 1), (lab, url(hub), 2)):
                got = faults(d)[node.uuid]
                self.assertEqual(got["host"], own["host"])
                self.assertEqual([(f["subject"], f["message"], f["at"], f["source"], f["hops"])
                                  for f in got["faults"]],
                                 [(f["subject"], f["message"], f["at"], source, hops)
                                  for f in own["faults"]])
            fetched = hub.get("/peers").json()["peers"][0]["card_faults"]
            self.assertEqual((fetched["route"], fetched["error"]), (True, None), fetched)
            self.assertIsNotNone(fetched["fetched_at"])
            card = hub.get("/cards/" + node.uuid).json()
            self.assertEqual((card["state"], card["reason"]), at_node)
            self.assertEqual([(f["source"], f["message"]) for f in card["peer_faults"]],
                             [(url(node.d), at_node[1])])
            self.assertEqual(node.d.get("/cards/" + node.uuid).json()["peer_faults"], [])

            # gpubench check asked of the hub drains the node, with its reason.
            rc, out, err = Client(hub)("check", "--host", own["host"])
            self.assertEqual(rc, 1, (out, err))
            self.assertTrue(out.splitlines()[0].startswith("gpubench: GPU 0 ("), out)
            self.assertTrue(out.splitlines()[0].endswith(" " + at_node[1]), out)

            # The node's floored health runs pass after it: over everywhere.
            health_run(node.d)
            self.assertEqual(state(node.d, node.uuid), "healthy")
            for d in (hub, lab):
                wait_for(lambda: state(d, node.uuid) == "healthy", timeout=10 * INTERVAL,
                         what="the card healthy again at a hub")
                self.assertEqual(faults(d), {})
            self.assertEqual(Client(hub)("check", "--host", own["host"])[0], 0)

            # Another XID, then the node goes away: the hub keeps what it knew.
            node.append(nothing, xids=[79])
            node.wait_events(2)
            at_node = covered(node.d, node.uuid)
            self.assertEqual(at_node[0], "degraded")
            wait_for(lambda: covered(hub, node.uuid) == at_node, timeout=10 * INTERVAL,
                     what="the second XID at the hub")
            self.assertEqual(node.d.stop(), 0)
            running.remove(node.d)
            wait_for(lambda: hub.get("/peers").json()["peers"][0]["failures_in_row"] >= 2,
                     timeout=20 * INTERVAL, what="the hub to fail pulling the stopped node")
            self.assertEqual(covered(hub, node.uuid), at_node)
            self.assertEqual(Client(hub)("check", "--host", own["host"])[0], 1)
            # GET /peers says how old what the hub holds is
            last = hub.get("/peers").json()["peers"][0]["card_faults"]["fetched_at"]
            time.sleep(2 * INTERVAL)
            self.assertEqual(hub.get("/peers").json()["peers"][0]["card_faults"]["fetched_at"],
                             last)

            # Removed from the peers file: its faults go (its runs stay).
            write_file(path, [])
            wait_for(lambda: state(hub, node.uuid) == "healthy", timeout=10 * INTERVAL,
                     what="the removed peer's faults dropped")
            self.assertEqual(faults(hub), {})
            wait_for(lambda: state(lab, node.uuid) == "healthy", timeout=10 * INTERVAL,
                     what="the lab hub to follow")
        finally:
            for d in reversed(running):
                self.assertEqual(d.stop(), 0)


class EchoTest(unittest.TestCase):
    def test_a_node_and_a_hub_that_pull_each_other(self):
        """The node's own watch is the truth for its cards: the hub's report
        of the node's XID back to the node is an echo, never a fault there,
        so the node is healthy as soon as its event ends (and the hub one
        fetch later), not once the echo has died out hop by hop."""
        tmp = tempfile.mkdtemp(prefix="gpubench-hubfaults-")
        self.addCleanup(shutil.rmtree, tmp, True)
        path = os.path.join(tmp, "peers.json")
        write_file(path, [])
        hub = Daemon(gpus=0, args=["--peers-file", path, "--peer-interval",
                                   str(INTERVAL)]).start()
        running = [hub]
        try:
            node = Card(env=H200, args=["--peer", url(hub), "--peer-interval", str(INTERVAL)])
            running.append(node.d)
            health_run(node.d)
            write_file(path, [{"targets": [url(node.d)]}])
            node.append(nothing, xids=[79])
            node.wait_events(1)
            wait_for(lambda: state(hub, node.uuid) == "degraded", timeout=10 * INTERVAL,
                     what="the card degraded at the hub")
            # the node has fetched the hub's report, echo included, since
            wait_for(lambda: node.uuid in faults(hub) and
                     hub.get("/peers").json()["peers"][0]["runs_pulled"] > 0 and
                     node.d.get("/peers").json()["peers"][0]["last_success_at"], timeout=10,
                     what="both to have pulled")
            time.sleep(3 * INTERVAL)
            mine = faults(node.d)[node.uuid]["faults"]
            self.assertEqual([(f["source"], f["hops"]) for f in mine], [(None, 0)])
            self.assertEqual(node.d.get("/cards/" + node.uuid).json()["peer_faults"], [])

            health_run(node.d)  # the one-off ends at the node
            for _ in range(5 * INTERVAL):
                self.assertEqual(covered(node.d, node.uuid)[0], "healthy")
                time.sleep(1)
            wait_for(lambda: state(hub, node.uuid) == "healthy", timeout=10 * INTERVAL,
                     what="the card healthy at the hub")
        finally:
            for d in reversed(running):
                self.assertEqual(d.stop(), 0)


class OlderPeer(http.server.BaseHTTPRequestHandler):
    """A gpubench from before GET /card_faults: an empty page of runs, 404
    for everything else."""

    asked = []

    def do_GET(self):
        OlderPeer.asked.append(self.path)
        body = b"" if self.path.startswith("/runs.ndjson") else b'{"error": {}}'
        self.send_response(200 if self.path.startswith("/runs.ndjson") else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class OlderPeerTest(unittest.TestCase):
    def test_a_peer_without_the_route_is_not_a_failed_pull(self):
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), OlderPeer)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        hub = Daemon(gpus=0, args=["--peer", "http://127.0.0.1:%d" % server.server_port,
                                   "--peer-interval", str(INTERVAL)]).start()
        try:
            wait_for(lambda: OlderPeer.asked.count("/card_faults") >= 3, timeout=20 * INTERVAL,
                     what="three GET /card_faults, one an interval")
            peer = hub.get("/peers").json()["peers"][0]
            self.assertEqual((peer["failures_in_row"], peer["last_error"]), (0, None))
            self.assertEqual(peer["card_faults"],
                             {"route": False, "fetched_at": None, "error": None})
            self.assertNotEqual(peer["state"], "failing")
            log = hub.read_log()
            log = log.decode() if isinstance(log, bytes) else log
            self.assertEqual(log.count("it has no GET /card_faults"), 1, log)
            self.assertEqual(faults(hub), {})
        finally:
            self.assertEqual(hub.stop(), 0)
            server.shutdown()


if __name__ == "__main__":
    unittest.main()
