"""Issue 35, points 1-3: who may speak for a card (README "A fleet").  A
pulled run's origin is the hub's decision: a run naming none gets its
peer's URL, a relayed run keeps the origin it names only where that lies
in the peer's published subtree (its GET /peers), else it is skipped and
counted; a run id held with another origin is a conflict, refused and
counted per peer in GET /peers and /metrics, logged once; an import is
stored as "import" whatever it names, and "origin": "" is refused.  A
peer's card faults count only for the cards whose first run came through
it (a hostile peer's XID 79 for another node's card leaves that card
healthy at the hub), at most 512 cards an origin of 64 faults each, and a hub's own
GET /card_faults stays within 4 MiB, every card keeping its newest fault,
so one peer's huge list cannot keep another node's fault from the lab
hub.  Each test is a hostile peer of the tests' own (a stand-in HTTP
server)."""
import copy
import http.server
import json
import os
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402
from test_card_events import Card  # noqa: E402
from test_client import Client  # noqa: E402
from test_fleet import wait_for  # noqa: E402
from test_hub import write_file  # noqa: E402
from test_hub_faults import H200, faults, health_run, state  # noqa: E402
from test_import_check import ImportFixture, PeerHandler, ndjson, new_id  # noqa: E402

NODE_A = "http://nodea.example:8080"
NODE_B = "http://nodeb.example:8080"


class RoutesHandler(PeerHandler):
    """A peer's /runs.ndjson (PeerHandler) and fixed answers by path."""
    routes = {}  # path: bytes (JSON)

    def do_GET(self):
        path = self.path.split("?")[0]
        if path == "/runs.ndjson":
            return PeerHandler.do_GET(self)
        body = self.routes.get(path)
        self.send_response(200 if body is not None else 404)
        body = body if body is not None else b"{}"
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def serve_peer(test, runs, routes=None):
    """Serves runs (seq 1, 2, ... in order) and routes ({path: object})
    for the length of test; its URL."""
    lines = []
    for seq, run in enumerate(runs, 1):
        lines.append((seq, json.dumps(dict(run, seq=seq))))
    handler = type("H", (RoutesHandler,), {
        "lines": lines,
        "routes": {p: json.dumps(o).encode() for p, o in (routes or {}).items()}})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    test.addCleanup(server.server_close)
    test.addCleanup(server.shutdown)
    return "http://127.0.0.1:%d" % server.server_address[1]


def on_card(run, n):
    """run, naming card n of its own (one origin speaks for a card)."""
    run["device"] = dict(run["device"], uuid="GPU-0a11ce%02d-0000-0000-0000-000000000000" % n)
    return run


def peer_of(hub, url):
    return {p["url"]: p for p in hub.get("/peers").json()["peers"]}.get(url)


def cursor_at(hub, url, cursor, timeout=20):
    """Waits until hub's peer url has pulled up to cursor; that peer."""
    return wait_for(lambda: (peer_of(hub, url) or {}).get("cursor", 0) >= cursor
                    and peer_of(hub, url), timeout=timeout, what="%s pulled to %d" % (url, cursor))


def wait_growing(measure, goal, what, stall=120, every=1.0):
    """Waits until measure() reaches goal; fails only when it has not grown
    for stall seconds, so that a slow build (ThreadSanitizer's, on a loaded
    machine) gets the time it needs while a stuck pull still fails. Polls
    once a second: measure may read a large answer."""
    last, since = -1, time.time()
    while True:
        got = measure()
        if got >= goal:
            return got
        if got > last:
            last, since = got, time.time()
        elif time.time() - since > stall:
            raise AssertionError("%s: stuck at %d of %d for %d s" % (what, got, goal, stall))
        time.sleep(every)


def card_faults_body(cards):
    """A GET /card_faults answer: cards as (host, uuid, [(subject, message)])."""
    return {"cards": [{"host": h, "uuid": u, "faults": [
        {"kind": "card_event", "subject": s, "message": m, "at": "2026-12-03T10:00:%02d.000Z"
         % (i % 60), "source": None, "hops": 0} for i, (s, m) in enumerate(fs)]}
        for h, u, fs in cards]}


class OriginTest(ImportFixture):
    def test_a_relayed_origin_outside_the_peers_subtree_is_skipped(self):
        inside = on_card(self.run_like(origin=NODE_A), 1)
        outside = on_card(self.run_like(origin=NODE_B), 2)
        own = on_card(self.run_like(), 3)
        own.pop("origin", None)
        imported = on_card(self.run_like(origin="import"), 4)  # imported there: so here too
        peer = serve_peer(self, [inside, outside, own, imported],
                          {"/peers": {"peers": [{"url": NODE_A}], "total": 1}})
        hub = Daemon(gpus=0, args=["--peer", peer, "--peer-interval", "1"]).start()
        try:
            got = cursor_at(hub, peer, 4)
            self.assertEqual(hub.get("/runs/" + inside["id"]).json()["origin"], NODE_A)
            self.assertEqual(hub.get("/runs/" + imported["id"]).json()["origin"], "import")
            self.assertEqual(hub.get("/runs/" + own["id"]).json()["origin"], peer)
            self.assertEqual(hub.get("/runs/" + outside["id"]).status, 404)
            self.assertEqual(got["skipped"]["count"], 1, got)
            self.assertIn(outside["id"], got["skipped"]["last_reason"])
            self.assertIn("published subtree", got["skipped"]["last_reason"])
            self.assertEqual(got["runs_pulled"], 3)
            # what the hub itself publishes: its peer and what that relays
            self.assertEqual(hub.get("/peers").json()["subtree"], sorted([peer, NODE_A]))
        finally:
            self.assertEqual(hub.stop(), 0)

    def test_a_node_added_to_the_hub_since_is_read_again_not_skipped(self):
        """The puller's copy of a hub's subtree is read again when a page
        names an origin it does not know, before the run is judged."""
        first = on_card(self.run_like(origin=NODE_A), 1)
        peer = serve_peer(self, [first], {"/peers": {"subtree": [NODE_A]}})
        handler = [h for h in RoutesHandler.__subclasses__() if h.lines and
                   json.loads(h.lines[0][1])["id"] == first["id"]][0]
        hub = Daemon(gpus=0, args=["--peer", peer, "--peer-interval", "1"]).start()
        try:
            cursor_at(hub, peer, 1)
            late = on_card(self.run_like(origin=NODE_B), 2)  # a node the hub added since
            handler.routes = {"/peers": json.dumps({"subtree": [NODE_A, NODE_B]}).encode()}
            handler.lines = handler.lines + [(2, json.dumps(dict(late, seq=2)))]
            got = cursor_at(hub, peer, 2)
            self.assertEqual(hub.get("/runs/" + late["id"]).json()["origin"], NODE_B)
            self.assertEqual(got["skipped"]["count"], 0, got)
            self.assertEqual(hub.get("/peers").json()["subtree"], sorted([peer, NODE_A, NODE_B]))
        finally:
            self.assertEqual(hub.stop(), 0)

    def test_an_import_is_stored_as_import_and_an_empty_origin_refused(self):
        claimed = self.run_like(origin=NODE_B)
        r = self.d.post("/runs/import", ndjson([claimed]))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.d.get("/runs/" + claimed["id"]).json()["origin"], "import")
        r = self.d.post("/runs/import", ndjson([self.run_like(origin="")]))
        self.assertEqual(r.status, 400, r)
        self.assertEqual(r.json()["error"]["field"], "origin")


class ConflictTest(ImportFixture):
    def test_another_nodes_run_ids_are_refused_and_counted(self):
        genuine = [self.run_like(), self.run_like()]
        for g in genuine:
            g.pop("origin", None)
        node = serve_peer(self, genuine)
        path = os.path.join(self.d.tmp, "peers-conflict.json")
        write_file(path, [{"targets": [node]}])
        hub = Daemon(gpus=0, args=["--peers-file", path, "--peer-interval", "1"]).start()
        try:
            cursor_at(hub, node, 2)
            held = {g["id"]: hub.get("/runs/" + g["id"]).json() for g in genuine}
            # The hostile peer: the node's run ids as its own, slower, and
            # one with the node's URL as origin (outside its subtree).
            forged = []
            for g in genuine:
                f = copy.deepcopy(g)
                for row in f["results"]["rows"]:
                    row["median_ms"] = row["median_ms"] * 3
                forged.append(f)
            forged.append(dict(copy.deepcopy(genuine[0]), origin=node))
            hostile = serve_peer(self, forged)
            write_file(path, [{"targets": [node, hostile]}])
            got = cursor_at(hub, hostile, 3)
            for g in genuine:
                now = hub.get("/runs/" + g["id"]).json()
                self.assertEqual(now["origin"], node)
                self.assertEqual(now["results"], held[g["id"]]["results"])
            self.assertEqual(got["conflicts"]["count"], 2, got)
            self.assertIn("held here from " + node, got["conflicts"]["last_reason"])
            self.assertEqual(got["skipped"]["count"], 1, got)
            self.assertEqual(got["runs_pulled"], 0)
            self.assertEqual(peer_of(hub, node)["conflicts"]["count"], 0)
            metrics = hub.get("/metrics").body
            self.assertIn('gpubench_peer_conflicts_total{peer="%s"} 2\n' % hostile, metrics)
            self.assertIn('gpubench_peer_conflicts_total{peer="%s"} 0\n' % node, metrics)
            logged = [line for line in hub.read_log().splitlines()
                      if "peer %s: run " % hostile in line and "held here from" in line]
            self.assertEqual(len(logged), 1, logged)
            # an import of a run held from a peer: left as it is, a conflict
            r = hub.post("/runs/import", ndjson([genuine[0]]))
            self.assertEqual(r.json(), {"imported": 0, "already_here": 1, "conflicts": 1})
            self.assertEqual(hub.get("/runs/" + genuine[0]["id"]).json()["origin"], node)
        finally:
            self.assertEqual(hub.stop(), 0)


class FaultsTest(unittest.TestCase):
    def test_a_peer_cannot_fault_another_nodes_card(self):
        node = Card(env=H200)
        running = [node.d]
        try:
            health_run(node.d)
            host = node.d.get("/coverage").json()["cards"][0]["host"]
            node_url = "http://127.0.0.1:%d" % node.d.port
            path = os.path.join(node.d.tmp, "peers-faults.json")
            write_file(path, [{"targets": [node_url]}])
            hub = Daemon(gpus=0, args=["--peers-file", path, "--peer-interval", "1"]).start()
            running.append(hub)
            wait_for(lambda: state(hub, node.uuid) == "healthy", timeout=30,
                     what="the node's card healthy at the hub")
            # The hostile peer sends a run naming the node's card (after
            # the node's own) and an XID 79 for it.
            run = json.loads(node.d.get("/runs.ndjson").body.splitlines()[0])
            run["id"] = new_id()
            run.pop("origin", None)
            hostile = serve_peer(self, [run], {"/card_faults": card_faults_body(
                [(host, node.uuid, [("xid 79", "XID 79 (GPU fell off the bus) at 10:00")])])})
            write_file(path, [{"targets": [node_url, hostile]}])
            wait_for(lambda: ((peer_of(hub, hostile) or {}).get("card_faults") or {})
                     .get("fetched_at"), timeout=20, what="the hostile peer's faults fetched")
            # its run naming the node's card is refused (a conflict)
            got = cursor_at(hub, hostile, 1)
            self.assertEqual(hub.get("/runs/" + run["id"]).status, 404)
            self.assertEqual(got["conflicts"]["count"], 1, got)
            time.sleep(1.5)
            self.assertEqual(faults(hub), {})
            self.assertEqual(state(hub, node.uuid), "healthy")
            rc, out, err = Client(hub)("check", "--host", host)
            self.assertEqual(rc, 0, (out, err))
            self.assertNotIn("XID", out)
            self.assertIn("fault(s) ignored", hub.read_log())
        finally:
            for d in reversed(running):
                self.assertEqual(d.stop(), 0)


class CardOwnerTest(unittest.TestCase):
    def test_a_peer_cannot_drain_another_nodes_card_with_new_runs(self):
        """A card is spoken for by one origin: the node's healthy card at
        the hub, and a hostile peer serving runs with new ids naming that
        card (its host and uuid), slower than its floor: refused, counted
        as conflicts, never in the card's state or `gpubench check`; an
        import of one is refused naming the card and its owner."""
        node = Daemon(env=H200).start()
        # the forger: the same card (the test double's uuid) on the same
        # host, slowed under the H200's triad floor, makes the made-up runs
        forger = Daemon(env=H200).start()
        running = [node, forger]
        try:
            health_run(node)
            uuid = node.get("/devices").json()["devices"][0]["uuid"]
            host = node.get("/coverage").json()["cards"][0]["host"]
            node_url = "http://127.0.0.1:%d" % node.port
            path = os.path.join(node.tmp, "peers-owner.json")
            write_file(path, [{"targets": [node_url]}])
            hub = Daemon(gpus=0, args=["--peers-file", path, "--peer-interval", "1"]).start()
            running.append(hub)
            wait_for(lambda: state(hub, uuid) == "healthy", timeout=30,
                     what="the node's card healthy at the hub")
            forger.set_mode("slow=1.5")
            for _ in range(2):  # a missed floor, and its confirmation
                r = forger.post("/runs?wait=30", {"benchmark": "hbm_bandwidth"})
                self.assertEqual(r.json()["status"], "done", r)
                triad = [c for c in r.json()["checks"] if c["row"] == "triad"][0]
                self.assertIs(triad["pass"], False, triad)
            forged = [json.loads(line) for line in forger.get("/runs.ndjson").body.splitlines()]
            for f in forged:
                f.pop("origin", None)
                self.assertEqual((f["host"], f["device"]["uuid"]), (host, uuid))
            hostile = serve_peer(self, forged)
            write_file(path, [{"targets": [node_url, hostile]}])
            got = cursor_at(hub, hostile, 2)
            time.sleep(1.5)  # more pulls: refused again, never stored
            self.assertEqual(state(hub, uuid), "healthy")
            card = hub.get("/cards/" + uuid).json()
            self.assertEqual(card["state"], "healthy", card)
            rc, out, err = Client(hub)("check", "--host", host)
            self.assertEqual(rc, 0, (out, err))
            self.assertEqual(got["conflicts"]["count"], 2, got)
            self.assertEqual(got["runs_pulled"], 0, got)
            self.assertIn("names card " + uuid, got["conflicts"]["last_reason"])
            self.assertIn("spoken for here by " + node_url, got["conflicts"]["last_reason"])
            for f in forged:
                self.assertEqual(hub.get("/runs/" + f["id"]).status, 404)
            metrics = hub.get("/metrics").body
            self.assertIn('gpubench_peer_conflicts_total{peer="%s"} 2\n' % hostile, metrics)
            logged = [line for line in hub.read_log().splitlines()
                      if "peer %s: run " % hostile in line and "names card" in line]
            self.assertEqual(len(logged), 1, logged)
            # the node's own new runs still count there
            late = node.post("/runs?wait=30", {"benchmark": "hbm_bandwidth"}).json()["id"]
            wait_for(lambda: hub.get("/runs/" + late).status == 200, timeout=20,
                     what="the node's new run at the hub")
            self.assertEqual(hub.get("/runs/" + late).json()["origin"], node_url)
            # an import naming the card: refused whole, naming the card and its owner
            r = hub.post("/runs/import", ndjson(forged))
            self.assertEqual(r.status, 409, r)
            self.assertEqual(r.json()["error"]["code"], "card_conflict")
            self.assertEqual(r.json()["error"]["field"], "device.uuid")
            self.assertIn(uuid, r.json()["error"]["message"])
            self.assertIn(node_url, r.json()["error"]["message"])
            for f in forged:
                self.assertEqual(hub.get("/runs/" + f["id"]).status, 404)
            self.assertEqual(Client(hub)("check", "--host", host)[0], 0)
            owner = hub.get("/cards/" + uuid).json()["owner"]
            self.assertEqual((owner["origin"], owner["host"]), (node_url, host), owner)

            # The hand-over (the card moved to the other node): released by
            # the operator, the next run naming it claims it.
            r = hub.request("DELETE", "/cards/%s/owner" % uuid)
            self.assertEqual(r.status, 200, r)
            self.assertEqual(r.json()["released"]["origin"], node_url)
            self.assertIsNone(hub.get("/cards/" + uuid).json()["owner"])
            self.assertEqual(hub.request("DELETE", "/cards/%s/owner" % uuid).status, 404)
            handler = [h for h in RoutesHandler.__subclasses__() if h.lines and
                       json.loads(h.lines[0][1])["id"] == forged[0]["id"]][0]
            moved = dict(forged[1], id=new_id())
            handler.lines = handler.lines + [(3, json.dumps(dict(moved, seq=3)))]
            got = cursor_at(hub, hostile, 3)
            self.assertEqual(hub.get("/runs/" + moved["id"]).json()["origin"], hostile)
            self.assertEqual(hub.get("/cards/" + uuid).json()["owner"]["origin"], hostile)
            self.assertEqual(got["conflicts"]["count"], 2, got)
        finally:
            for d in reversed(running):
                self.assertEqual(d.stop(), 0)

    def test_a_card_measured_here_is_this_nodes(self):
        """A peer that named this node's card before it measured it: the
        node's own run takes the card, the peer's later ones are refused;
        an import naming it (the node's own export, restored) is taken."""
        src = Daemon(gpus=1).start()  # the same card (the test double's uuid)
        try:
            r = src.post("/runs?wait=30", {"benchmark": "smem_stride"})
            self.assertEqual(r.json()["status"], "done", r)
            mine = json.loads(src.get("/runs.ndjson").body.splitlines()[0])
        finally:
            self.assertEqual(src.stop(), 0)
        early, later = dict(mine, id=new_id()), dict(mine, id=new_id())
        early.pop("origin", None)
        later.pop("origin", None)
        peer = serve_peer(self, [early])
        handler = [h for h in RoutesHandler.__subclasses__() if h.lines and
                   json.loads(h.lines[0][1])["id"] == early["id"]][0]
        d = Daemon(gpus=1, args=["--peer", peer, "--peer-interval", "1"])
        running = []
        try:
            uuid = mine["device"]["uuid"]
            d.start()
            running.append(d)
            self.assertEqual(d.get("/devices").json()["devices"][0]["uuid"], uuid)
            cursor_at(d, peer, 1)
            self.assertEqual(d.get("/runs/" + early["id"]).json()["origin"], peer)
            self.assertEqual(d.sql("SELECT origin FROM card_owners")[0][0], peer)
            r = d.post("/runs?wait=30", {"benchmark": "smem_stride"})
            self.assertEqual(r.json()["status"], "done", r)
            self.assertEqual(d.sql("SELECT origin FROM card_owners"), [(None,)])
            self.assertIsNone(d.get("/cards/" + uuid).json()["owner"]["origin"])
            self.assertIn("measured on this node, so this node speaks for it", d.read_log())
            handler.lines = handler.lines + [(2, json.dumps(dict(later, seq=2)))]
            got = cursor_at(d, peer, 2)
            self.assertEqual(got["conflicts"]["count"], 1, got)
            self.assertIn("this node (measured here)", got["conflicts"]["last_reason"])
            self.assertEqual(d.get("/runs/" + later["id"]).status, 404)
            restored = dict(mine, id=new_id())
            r = d.post("/runs/import", ndjson([restored]))
            self.assertEqual(r.status, 200, r)
            self.assertEqual(d.get("/runs/" + restored["id"]).json()["origin"], "import")
        finally:
            for x in reversed(running):
                self.assertEqual(x.stop(), 0)


class FaultsCapTest(ImportFixture):
    def test_a_huge_fault_list_does_not_hide_another_nodes_fault(self):
        # The hostile peer: runs of its own on many cards, and 64 small
        # faults on each, 8.2 MB in all, under a hub's 8 MiB cap; a hub that
        # relays them whole adds a source and hops to each (over 11 MB).
        def card(i):
            return ("hostile", "GPU-%08d-0000-0000-0000-000000000000" % i,
                    [("xid %d" % j, "m") for j in range(64)])
        per_card = len(json.dumps(card_faults_body([card(0)])))
        n = int(8.2e6 / per_card)
        cards, runs = [card(i) for i in range(n)], []
        for _, uuid, _ in cards:
            r = self.run_like(host="hostile")
            r["device"] = dict(r["device"], uuid=uuid)
            r.pop("origin", None)
            runs.append(r)
        body = card_faults_body(cards)
        size = len(json.dumps(body))
        self.assertTrue(8.0e6 < size < 8 * 1024 * 1024, size)
        hostile = serve_peer(self, runs, {"/card_faults": body})
        real = self.run_like(host="nodec")
        real["device"] = dict(real["device"], uuid="GPU-c0c0c0c0-0000-0000-0000-000000000000")
        real.pop("origin", None)
        nodec = serve_peer(self, [real], {"/card_faults": card_faults_body(
            [("nodec", real["device"]["uuid"], [("xid 79", "XID 79 on node C")])])})
        rack = Daemon(gpus=0, args=["--peer", hostile, "--peer", nodec,
                                    "--peer-interval", "1"]).start()
        lab = None
        try:
            for url in (hostile, nodec):
                wait_for(lambda: ((peer_of(rack, url) or {}).get("card_faults") or {})
                         .get("fetched_at"), timeout=60, what="the rack's faults of " + url)
            self.assertIsNone(peer_of(rack, hostile)["card_faults"]["error"])
            lab = Daemon(gpus=0, args=["--peer", "http://127.0.0.1:%d" % rack.port,
                                       "--peer-interval", "1"]).start()
            wait_for(lambda: real["device"]["uuid"] in faults(lab), timeout=60,
                     what="node C's XID 79 at the lab hub")
            answer = rack.get("/card_faults")
            self.assertLess(len(answer.body), 4.5 * 1024 * 1024)
            # the hostile's 512 cards (at most, of one origin) and node C's,
            # each with its newest faults, as many as fit for all
            got = answer.json()["cards"]
            self.assertEqual(len(got), 513)
            self.assertTrue(all(len(c["faults"]) >= 1 for c in got))
            self.assertEqual(faults(lab)[real["device"]["uuid"]]["faults"][0]["message"],
                             "XID 79 on node C")
            # the lab takes a card's faults once it holds that card's runs,
            # which come a page an interval: all of them, in time
            wait_growing(lambda: len(faults(lab)), 513,
                         what="every card's faults at the lab hub")
            lab_peer = lab.get("/peers").json()["peers"][0]
            self.assertIsNone(lab_peer["card_faults"]["error"], lab_peer)
        finally:
            if lab:
                self.assertEqual(lab.stop(), 0)
            self.assertEqual(rack.stop(), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
