"""Card events (issue 24; README "Watching cards"): the daemon with the
worker test double reading its card through the same NVML code the real
worker uses (kernels/nvml_watch.c), from the stand-in NVML
(tests/fake_nvml.c, GPUBENCH_FAKE_NVML) replaying an idle H200's reading
(tests/fixtures/h200_watch_readings.ndjson) and the faults a test appends
to its file, one reading a line.  Each event is stored and shown by
GET /cards/UUID/events newest first, counted in /metrics, and a critical
one opens a card_event alert; a restart does not report a state found
before it again, and a state a later reading shows gone ends."""
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402
from test_fleet import wait_for  # noqa: E402
from test_import_check import new_id  # noqa: E402

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "h200_watch_readings.ndjson")
NVML = os.environ.get("GPUBENCH_FAKE_NVML", "build/tests/libgb-fake-nvml.so")
WORKER = os.environ.get("GPUBENCH_WORKER", "build/bin/gpubench-worker")


def idle_h200():
    """The recording's first reading (the idle card), with NVLinks added.

    The recording was made on a single H200 of a virtual machine, whose
    NVML lists no NVLink; an H200 of an NVLink node has 18
    (examples/h200_p2p_bandwidth.json), so 18 links up with zero counters
    are added here (INJECTED, not recorded) for the link faults to be
    injected into."""
    with open(FIXTURE) as f:
        r = json.loads(next(line for line in f if line.strip() and line[0] != "#"))
    if not r.get("nvlink"):
        r["nvlink"] = [{"link": i, "up": True, "replay": 0, "recovery": 0, "crc_flit": 0,
                        "crc_data": 0} for i in range(18)]
    return r


class Card:
    """One card's readings file, the daemon watching it every second."""

    def __init__(self, args=(), env=None):
        self.path = os.path.join(tempfile.mkdtemp(prefix="gpubench-nvml-"), "readings.ndjson")
        self.state = idle_h200()
        self.write([self.state])
        self.d = Daemon(args=["--watch-interval", "1"] + list(args),
                        env=dict(env or {}, GPUBENCH_NVML_LIBRARY=NVML,
                                 GPUBENCH_FAKE_NVML_READINGS=self.path)).start()
        self.uuid = self.d.get("/devices").json()["devices"][0]["uuid"]
        self.read_twice()

    def write(self, readings):
        with open(self.path, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in readings)

    def append(self, change, xids=()):
        """The card as it is now, changed by change(state); xids seen once."""
        change(self.state)
        line = dict(copy.deepcopy(self.state), xid=[{"xid": x, "at": 1764600001000} for x in xids])
        with open(self.path, "a") as f:
            f.write(json.dumps(line) + "\n")

    def last_read(self):
        rows = self.d.sql("SELECT at FROM card_readings")
        return rows[0][0] if rows else ""

    def read_twice(self):
        """Waits for two readings stored after now."""
        for _ in range(2):
            before = self.last_read()
            wait_for(lambda: self.last_read() > before, timeout=15, what="a watch reading")

    def events(self, query=""):
        r = self.d.get("/cards/%s/events%s" % (self.uuid, query))
        assert r.status == 200, r
        return r.json()

    def wait_events(self, n):
        return wait_for(lambda: (lambda e: e if len(e) >= n else None)(self.events()["events"]),
                        timeout=15, what="%d card event(s)" % n)

    def card_alerts(self):
        return [a for a in self.d.get("/alerts").json()["alerts"] if a["kind"] == "card_event"]

    def metric(self, kind, critical):
        """gpubench_card_events_total of this card, kind and critical."""
        text = self.d.get("/metrics").body
        text = text.decode() if isinstance(text, bytes) else text
        labels = 'uuid="%s",kind="%s",critical="%s"' % (self.uuid, kind,
                                                        "true" if critical else "false")
        for line in text.splitlines():
            if line.startswith("gpubench_card_events_total{") and labels in line:
                return float(line.rsplit(" ", 1)[1])
        return 0


def set_in(path, value):
    def change(state):
        o = state
        for k in path[:-1]:
            o = o[k]
        o[path[-1]] = value
    return change


def nothing(state):
    pass


class IdleCardTest(unittest.TestCase):
    def test_idle_h200_has_no_events(self):
        c = Card()
        try:
            c.read_twice()
            page = c.events()
            self.assertEqual(page, {"uuid": c.uuid, "events": [], "next": None})
            self.assertEqual(c.card_alerts(), [])
            self.assertEqual(c.metric("xid", True), 0)
            r = c.d.get("/cards/GPU-00000000-none-4000-8000-000000000000/events")
            self.assertEqual(r.status, 404, r)
        finally:
            self.assertEqual(c.d.stop(), 0)


class FaultsTest(unittest.TestCase):
    def test_faults_alerts_metrics_and_a_restart(self):
        c = Card()
        try:
            c.append(nothing, xids=[79])
            c.wait_events(1)
            c.append(nothing, xids=[13])
            c.wait_events(2)
            c.append(set_in(["remapped_rows", "pending"], 1))
            c.wait_events(3)
            c.append(set_in(["ecc", "volatile", "uncorrected"], 1))
            c.wait_events(4)
            c.append(set_in(["pcie", "width"], 8))
            c.wait_events(5)
            crc = c.state["nvlink"][2]["crc_flit"]
            c.append(set_in(["nvlink", 2, "crc_flit"], crc + 7))
            events = c.wait_events(6)

            # newest first, each as the rules say
            self.assertEqual([(e["kind"], e["critical"]) for e in events], [
                ("nvlink_errors", False), ("pcie_width_down", True),
                ("ecc_uncorrected", True), ("row_remap_pending", True),
                ("xid", False), ("xid", True)])
            self.assertEqual([e["subject"] for e in events][-2:], ["xid 13", "xid 79"])
            self.assertEqual(sorted(e["id"] for e in events), [e["id"] for e in events][::-1])
            self.assertEqual(events[0]["detail"]["link"], 2)
            self.assertEqual(events[1]["message"], "the PCIe link runs at x8 of x16")

            # pages: limit and the next URL, to the end
            first = c.events("?limit=4")
            self.assertEqual(first["events"], events[:4])
            rest = c.d.get(first["next"]).json()
            self.assertEqual(rest["events"], events[4:])
            self.assertIsNone(rest["next"])

            # alerts: the critical ones, confirmed at once, none for XID 13 or CRC
            alerts = {a["row"]: a for a in c.card_alerts()}
            self.assertEqual(sorted(alerts), ["ecc_uncorrected", "pcie_width_down",
                                              "row_remap_pending", "xid 79"])
            for a in alerts.values():
                self.assertEqual((a["state"], a["verdict"]), ("confirmed", "critical"))
                self.assertEqual(a["card"]["device_uuid"], c.uuid)
                self.assertIsNone(a["benchmark"])
            self.assertIn("XID 79", alerts["xid 79"]["reason"])

            # /metrics
            self.assertEqual(c.metric("xid", True), 1)
            self.assertEqual(c.metric("xid", False), 1)
            self.assertEqual(c.metric("pcie_width_down", True), 1)
            self.assertEqual(c.metric("nvlink_errors", False), 1)

            # A restart: the worker replays its file from the start, which
            # now holds the card as it is (remap pending, link at x8).  The
            # states found before are not found again.
            self.assertEqual(c.d.stop(), 0)
            c.write([c.state])
            c.d.start()
            c.read_twice()
            self.assertEqual(len(c.events()["events"]), 6)
            self.assertEqual(len(c.card_alerts()), 4)

            # The remap done and the link back at x16: those states end,
            # and so do their alerts; nothing new is an event.
            c.append(set_in(["remapped_rows", "pending"], 0))
            c.append(set_in(["pcie", "width"], 16))
            wait_for(lambda: all(e["gone_at"] for e in c.events()["events"]
                                 if e["kind"] in ("row_remap_pending", "pcie_width_down")),
                     timeout=15, what="the states gone")
            self.assertEqual(len(c.events()["events"]), 6)
            states = {a["row"]: a["state"] for a in c.card_alerts()}
            self.assertEqual(states, {"xid 79": "confirmed", "ecc_uncorrected": "confirmed",
                                      "row_remap_pending": "cleared",
                                      "pcie_width_down": "cleared"})
        finally:
            self.assertEqual(c.d.stop(), 0)


H200 = {"GPUBENCH_FAKE_GPU_NAME": "NVIDIA H200"}
FLOORED = ("hbm_bandwidth", "compute_peak", "pcie_bandwidth")  # the H200's own floors


class CardStateTest(unittest.TestCase):
    """An open critical event makes the card degraded with its message as
    the reason (GET /cards/UUID, server/judge/card_state.c): a one-off (an
    XID, an uncorrected ECC error) until the health benchmarks with floors
    for its model have run on it after it and met them (its alert cleared
    then) or the acknowledgement of its alert after it, a state (a pending
    remap) until a reading no longer shows it.  The test double calls its
    card an H200, whose health rows pass their floors (test_cards.py)."""

    def state(self, c):
        r = c.d.get("/cards/" + c.uuid)
        self.assertEqual(r.status, 200, r)
        return r.json()["state"], r.json()["reason"]

    def run_one(self, c, benchmark):
        r = c.d.post("/runs?wait=30", {"benchmark": benchmark})
        self.assertEqual((r.status, r.json()["status"]), (200, "done"), r)
        return r.json()

    def health_run(self, c):
        """The health suite on the card (one GPU: no p2p_bandwidth), every
        run done; the runs as GET /runs/ID gives them."""
        r = c.d.post("/runs?wait=60", {"benchmark": "health"})
        self.assertIn(r.status, (200, 202), r)
        return [c.d.wait_status(x["id"], ("done",), timeout=60) for x in r.json()["runs"]]

    def xid_alert(self, c):
        """The XID 79's alert (opened just after its event is stored)."""
        return wait_for(lambda: ([a for a in c.card_alerts() if a["row"] == "xid 79"] or [None])[0],
                        timeout=15, what="the XID's alert")

    def test_events_degrade_the_card(self):
        c = Card(env=H200)
        try:
            self.health_run(c)
            self.assertEqual(self.state(c)[0], "healthy")

            c.append(nothing, xids=[79])
            c.wait_events(1)
            state, reason = self.state(c)
            self.assertEqual(state, "degraded")
            self.assertIn("XID 79", reason)
            self.health_run(c)  # its floored health runs passing after it: over
            self.assertEqual(self.state(c)[0], "healthy")

            c.append(set_in(["remapped_rows", "pending"], 1))
            c.wait_events(2)
            self.assertEqual(self.state(c), (
                "degraded", "memory rows wait for a GPU reset to be remapped"))
            self.health_run(c)  # a state is over only when a reading says so
            self.assertEqual(self.state(c)[0], "degraded")
            c.append(set_in(["remapped_rows", "pending"], 0))
            wait_for(lambda: self.state(c)[0] == "healthy", timeout=15, what="the remap done")

            c.append(set_in(["ecc", "aggregate", "uncorrected"], 1))
            c.wait_events(3)
            self.assertEqual(self.state(c)[0], "degraded")
            alert = [a for a in c.card_alerts() if a["row"] == "ecc_uncorrected"][0]
            r = c.d.post("/alerts/%d/ack" % alert["id"], {"reason": "known: RMA filed"})
            self.assertEqual(r.status, 200, r)
            self.assertEqual(self.state(c)[0], "healthy")
        finally:
            self.assertEqual(c.d.stop(), 0)

    def test_coverage_and_check_see_events(self):
        """GET /coverage judges a card with the same faults as GET /cards
        (its open critical events too), so `gpubench check`, which reads
        /coverage, drains a node whose card reported an XID 79."""
        c = Card(env={"GPUBENCH_FAKE_GPU_NAME": "NVIDIA H200"})
        try:
            self.health_run(c)

            def covered():
                cards = c.d.get("/coverage").json()["cards"]
                card = [k for k in cards if k["uuid"] == c.uuid][0]
                return card["state"], card["reason"]
            self.assertEqual(covered()[0], "healthy")
            c.append(nothing, xids=[79])
            c.wait_events(1)
            self.assertEqual(covered(), self.state(c))
            self.assertEqual(covered()[0], "degraded")
            self.assertIn("XID 79", covered()[1])
        finally:
            self.assertEqual(c.d.stop(), 0)


    def test_runs_measured_elsewhere_never_end_it(self):
        """Issue 35, point 5: the XID was found by this node's own watch;
        health runs imported for the card (its uuid, passing floors, dated
        after the event) do not end it, nor does an imported canary run
        count as the card's canary; the card's own health suite does."""
        c = Card(env=H200, args=["--canary", "health@24h", "--canary-idle", "3600s"])
        try:
            runs = self.health_run(c)
            c.append(nothing, xids=[79])
            c.wait_events(1)
            self.assertEqual(self.state(c)[0], "degraded")
            # dated just after the event (and within --max-clock-skew)
            now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() + 2))
            copies = []
            for r in c.d.get("/runs.ndjson").body.splitlines():
                run = json.loads(r)
                run.update(id=new_id(), created_at=now, started_at=now, finished_at=now,
                           label="canary", origin="http://elsewhere.example:8080")
                copies.append(json.dumps(run))
            self.assertEqual(len(copies), len(runs))
            r = c.d.post("/runs/import", "\n".join(copies) + "\n")
            self.assertEqual(r.status, 200, r)
            self.assertEqual(r.json()["imported"], len(runs))
            state, reason = self.state(c)
            self.assertEqual(state, "degraded")
            self.assertIn("XID 79", reason)
            # the card's canary never ran here: an imported one is not it
            canary = c.d.get("/canaries").json()["cards"][0]["canaries"][0]
            self.assertIsNone(canary["last_run"], canary)
            self.health_run(c)
            self.assertEqual(self.state(c)[0], "healthy")
        finally:
            self.assertEqual(c.d.stop(), 0)

    def test_one_off_ends_when_its_floors_are_met(self):
        """After an XID 79 a short run without floors (smem_stride), or one of
        the floored benchmarks alone, does not make the card healthy; a
        health suite whose triad misses its floor does not either; once the
        newest run of each floored benchmark meets its floors (the next
        suite's hbm_bandwidth, after the slow suite's compute_peak and
        pcie_bandwidth passed) the card is healthy and the XID's alert is
        cleared, naming that run."""
        c = Card(env=H200, args=["--confirm-runs", "0"])
        try:
            self.health_run(c)
            self.assertEqual(self.state(c)[0], "healthy")
            c.append(nothing, xids=[79])
            c.wait_events(1)
            self.assertEqual(self.xid_alert(c)["state"], "confirmed")

            self.run_one(c, "smem_stride")
            self.run_one(c, "hbm_bandwidth")  # one of three floored benchmarks
            state, reason = self.state(c)
            self.assertEqual(state, "degraded")
            self.assertIn("XID 79", reason)
            self.assertEqual(self.xid_alert(c)["state"], "confirmed")

            c.d.set_mode("slow=1.08")  # triad under its floor, the rest over
            try:
                runs = self.health_run(c)
            finally:
                c.d.set_mode("normal")
            self.assertEqual(sorted(r["benchmark"] for r in runs if r["checks"]),
                             sorted(FLOORED))
            hbm = [r for r in runs if r["benchmark"] == "hbm_bandwidth"][0]
            self.assertEqual([x["row"] for x in hbm["checks"] if x["pass"] is False], ["triad"])
            # the floor alert (confirmed at once), acknowledged, still
            # degrades the card beside the XID: two faults, the newest named
            floor = [a for a in c.d.get("/alerts").json()["alerts"] if a["kind"] == "floor"]
            self.assertEqual(len(floor), 1, floor)
            r = c.d.post("/alerts/%d/ack" % floor[0]["id"], {"reason": "seen"})
            self.assertEqual(r.status, 200, r)
            state, reason = self.state(c)
            self.assertEqual(state, "degraded")
            self.assertRegex(reason, r"^hbm_bandwidth triad .* floor \(and 1 more\)$")
            self.assertEqual(self.xid_alert(c)["state"], "confirmed")

            # the newest run of each floored benchmark now meets its floors
            # once the passing hbm_bandwidth has run: it completes the set
            runs = self.health_run(c)
            last = [r for r in runs if r["benchmark"] == "hbm_bandwidth"][0]
            alert = wait_for(lambda: (lambda a: a if a["state"] == "cleared" else None)(
                self.xid_alert(c)), timeout=15, what="the XID's alert cleared")
            self.assertEqual(alert["runs"]["cleared"], last["id"])
            self.assertEqual(alert["reason"], "its health benchmarks with floors ran and met "
                             "them after it (run %s)" % last["id"])
            self.assertEqual(self.state(c)[0], "healthy")
        finally:
            self.assertEqual(c.d.stop(), 0)


class CriticalXidsTest(unittest.TestCase):
    def test_listed_xid_is_critical(self):
        c = Card(args=["--critical-xids", "13,31"])
        try:
            c.append(nothing, xids=[13, 79])
            events = c.wait_events(2)
            self.assertEqual(sorted((e["subject"], e["critical"]) for e in events),
                             [("xid 13", True), ("xid 79", False)])
            # its alert follows the events (card_watch.c stores them first)
            rows = wait_for(lambda: [a["row"] for a in c.card_alerts()] or None, timeout=15,
                            what="the alert of XID 13")
            self.assertEqual(rows, ["xid 13"])
        finally:
            self.assertEqual(c.d.stop(), 0)

    def test_bad_list_is_refused(self):
        with self.assertRaises(RuntimeError) as e:
            Daemon(args=["--critical-xids", "13,x"]).start()
        self.assertIn("--critical-xids 13,x", str(e.exception))


class WorkerWatchTest(unittest.TestCase):
    """`gpubench-worker watch --pci-bus-id ID` prints the readings the probe
    gets, one a line, in the format the stand-in replays: here the
    stand-in's own two lines back (an XID in the second), but for t."""

    def test_two_readings_through_the_stand_in(self):
        path = os.path.join(tempfile.mkdtemp(prefix="gpubench-nvml-"), "readings.ndjson")
        lines = [idle_h200(), dict(idle_h200(), xid=[{"xid": 79, "at": 1764600001000}])]
        with open(path, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in lines)
        env = dict(os.environ, GPUBENCH_NVML_LIBRARY=NVML, GPUBENCH_FAKE_NVML_READINGS=path)
        started = time.time()
        out = subprocess.run([WORKER, "watch", "--pci-bus-id", "0000:19:00.0", "--seconds", "2",
                              "--interval", "1"], env=env, capture_output=True, text=True,
                             timeout=30)
        self.assertEqual(out.returncode, 0, out.stderr)
        readings = [json.loads(line) for line in out.stdout.splitlines()]
        self.assertEqual(len(readings), 2)
        self.assertGreaterEqual(readings[1]["t"] - readings[0]["t"], 900)
        self.assertGreaterEqual(readings[0]["t"], int(started * 1000) - 1000)
        self.assertEqual([r["xid"] and r["xid"][0]["xid"] for r in readings], [[], 79])
        for got, want in zip(readings, lines):
            for r in (got, want):
                r.pop("t")
                r.pop("xid")
            self.assertEqual(got, want)

    def test_usage(self):
        out = subprocess.run([WORKER, "watch", "--seconds", "2"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 2)
        self.assertIn("usage: gpubench-worker watch", out.stderr)


if __name__ == "__main__":
    unittest.main()
