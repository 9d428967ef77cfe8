"""The comparability key of issue 21: a run's method version joins it, and
only the parameters that change what is measured do.  Runs are made up
(meta.synthetic, test_verdicts.make_run) and imported, or posted to the
worker test double; every number is the test's own."""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402
from test_verdicts import make_run, uuid_of  # noqa: E402

SMEM_METHOD = None  # read from GET /benchmarks in setUpClass


def with_method(run, method=None, version=None, commit=None, **params):
    """run with a "method" (None: none sent), a recorded gpubench version
    and build, and params changed (a value None drops the param)."""
    if method is not None:
        run["method"] = method
    if version or commit:
        run["meta"]["build"] = {"gpubench_version": version, "git_commit": commit}
    for k, v in params.items():
        if v is None:
            run["params"].pop(k, None)
        else:
            run["params"][k] = v
    return run


class MethodKeyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        global SMEM_METHOD
        # the synthetic cards are imported: their gauges are on /metrics
        # with --metrics-peer-results (issue 33's series budget)
        cls.d = Daemon(args=["--metrics-peer-results"]).start()
        cls.bench = {b["name"]: b for b in cls.d.get("/benchmarks").json()["benchmarks"]}
        SMEM_METHOD = cls.bench["smem_stride"]["method"]
        m, old = SMEM_METHOD, SMEM_METHOD - 1
        runs = []
        # Cards 1-3 on this method; card 4 on the one before, 7% faster
        # (a new kernel, not a faster card).
        for card in (1, 2, 3):
            runs += [with_method(make_run(card, day), m) for day in (10, 11)]
        runs += [with_method(make_run(4, day, shift={1: 0.93, 2: 0.93, 32: 0.93}), old)
                 for day in (10, 11)]
        # Cards 5 and 6: gpubench 0.1.0 without a method, two builds.
        runs += [with_method(make_run(5, 10), version="0.1.0", commit="24736d5aaaa")]
        runs += [with_method(make_run(6, 10), version="0.1.0", commit="24736d5aaaa-dirty")]
        # Card 7: 0.2.0 without a method: the one 0.2.0 implies.
        runs += [with_method(make_run(7, 10), version="0.2.0", commit="f00")]
        # Card 8: the same measurement asked three ways: another
        # quiet_wait_s, counters and sample count, and one that never
        # stored its defaulted params.
        cls.same = [
            with_method(make_run(8, 10), m, quiet_wait_s=3, counters="auto"),
            with_method(make_run(8, 11, samples=10), m, quiet_wait_s=30, samples=10),
            with_method(make_run(8, 12), m, samples=None),
        ]
        runs += cls.same
        cls.ids = {}
        for r in runs:
            cls.ids.setdefault(r["device"]["uuid"], []).append(r["id"])
        r = cls.d.post("/runs/import", "".join(json.dumps(x) + "\n" for x in runs))
        assert r.status == 200 and r.json()["imported"] == len(runs), r

    @classmethod
    def tearDownClass(cls):
        assert cls.d.stop() == 0

    def compare(self, a, b):
        r = self.d.get("/compare?benchmark=smem_stride&baseline=%s&candidate=%s" % (a, b))
        self.assertEqual(r.status, 200, r)
        return r.json()

    def test_benchmarks_publish_methods_and_kinds(self):
        b = self.d.get("/benchmarks").json()
        self.assertEqual(b["method_versions"]["since"], "0.2.0")
        for bench in b["benchmarks"]:
            self.assertGreaterEqual(bench["method"], 1)
            self.assertEqual(bench["methods"][-1]["method"], bench["method"])
            self.assertEqual(bench["methods"][-1]["since"], "0.2.0")
        measures = {p["name"]: p["measures"] for bench in b["benchmarks"] for p in bench["params"]}
        for name in ("strides", "words", "n", "variants", "array_mib", "kinds", "gemm_n",
                     "sizes_kib", "memory", "size_mib", "footprint_mib", "l2_fetch_bytes"):
            self.assertIs(measures[name], True, name)
        for name in ("quiet", "quiet_wait_s", "counters", "precision", "max_samples",
                     "samples", "min_sample_ms"):
            self.assertIs(measures[name], False, name)

    def test_runs_store_their_method(self):
        self.assertEqual(self.d.get("/runs/" + self.ids[uuid_of(1)][0]).json()["method"],
                         SMEM_METHOD)
        self.assertEqual(self.d.get("/runs/" + self.ids[uuid_of(4)][0]).json()["method"],
                         SMEM_METHOD - 1)
        self.assertIsNone(self.d.get("/runs/" + self.ids[uuid_of(5)][0]).json()["method"])
        self.assertEqual(self.d.get("/runs/" + self.ids[uuid_of(7)][0]).json()["method"],
                         SMEM_METHOD)
        posted = self.d.post("/runs?wait=20", {"benchmark": "hbm_bandwidth"}).json()
        self.assertEqual(posted["method"], self.bench["hbm_bandwidth"]["method"])
        csv = self.d.get("/runs/%s.csv" % self.ids[uuid_of(4)][0]).body
        head, first = csv.splitlines()[:2]
        column = head.split(",").index("method")
        self.assertEqual(first.split(",")[column], str(SMEM_METHOD - 1))
        md = self.d.get("/runs/%s.md" % self.ids[uuid_of(4)][0])
        if md.status == 200:
            self.assertIn("method %d" % (SMEM_METHOD - 1), md.body)

    def test_compare_between_methods_is_not_comparable(self):
        a = self.compare("card:" + uuid_of(1), "card:" + uuid_of(4))
        self.assertIs(a["comparable"], False)
        self.assertIsNone(a["verdict"])
        self.assertEqual(a["differences"], [{"field": "method", "baseline": SMEM_METHOD,
                                             "candidate": SMEM_METHOD - 1}])
        # and the series view keeps them apart
        series = self.d.get("/compare?benchmark=smem_stride").json()["series"]
        card4 = [s for s in series if s["card"]["uuid"] == uuid_of(4)]
        card1 = [s for s in series if s["card"]["uuid"] == uuid_of(1)]
        self.assertNotEqual(card4[0]["comparability_key"], card1[0]["comparability_key"])

    def test_unknown_methods_group_per_build(self):
        a = self.compare("card:" + uuid_of(5), "card:" + uuid_of(6))
        self.assertIs(a["comparable"], False)
        self.assertEqual(a["differences"], [{"field": "method",
                                             "baseline": "unknown: build 24736d5aaaa",
                                             "candidate": "unknown: build 24736d5aaaa-dirty"}])
        a = self.compare("card:" + uuid_of(5), "card:" + uuid_of(1))
        self.assertIs(a["comparable"], False)
        self.assertEqual([d["field"] for d in a["differences"]], ["method"])
        # a known 0.2.0 run without a method is on the method 0.2.0 implies
        self.assertIs(self.compare("card:" + uuid_of(7), "card:" + uuid_of(1))["comparable"], True)

    def test_fleet_groups_by_method(self):
        f = self.d.get("/fleet?benchmark=smem_stride").json()
        by_card = {}
        for g in f["groups"]:
            for c in g["cards"]:
                by_card[c["device_uuid"]] = g
        new, old = by_card[uuid_of(1)], by_card[uuid_of(4)]
        self.assertIsNot(new, old)
        self.assertEqual(new["key"]["method"], SMEM_METHOD)
        self.assertEqual(old["key"]["method"], SMEM_METHOD - 1)
        self.assertEqual([c["device_uuid"] for c in old["cards"]], [uuid_of(4)])
        self.assertFalse(any(c["outlier"] for c in new["cards"]))
        self.assertIn("method %d" % (SMEM_METHOD - 1), new["method_note"])
        self.assertIn("method %d" % SMEM_METHOD, old["method_note"])
        self.assertEqual(by_card[uuid_of(5)]["key"]["method"], "unknown: build 24736d5aaaa")
        self.assertIsNot(by_card[uuid_of(5)], by_card[uuid_of(6)])
        # /metrics: one series per method
        text = self.d.get("/metrics").body
        self.assertIn('uuid="%s",name="Synthetic H200",method="%d"' % (uuid_of(4), SMEM_METHOD - 1),
                      text)

    def test_how_it_is_measured_stays_out_of_the_key(self):
        ids = [r["id"] for r in self.same]
        series = [s for s in self.d.get("/compare?benchmark=smem_stride").json()["series"]
                  if s["card"]["uuid"] == uuid_of(8)]
        self.assertEqual(len(series), 1)
        self.assertEqual(sorted(series[0]["runs"]), sorted(ids))
        for a, b in ((ids[0], ids[1]), (ids[1], ids[2]), (ids[0], ids[2])):
            v = self.compare("runs:" + a, "runs:" + b)
            self.assertIs(v["comparable"], True, v.get("differences"))
            self.assertEqual(v["differences"], [])

    def test_history_verdicts_do_not_cross_methods(self):
        # The test double's card, earlier runs on another method: a run
        # posted now has no history of its key, and a fleet of its own.
        d = Daemon(args=["--metrics-peer-results"]).start()
        try:
            first = d.post("/runs?wait=20", {"benchmark": "smem_stride"}).json()
            old = json.loads(json.dumps(first))
            for k in ("url", "seq", "verdicts", "validity", "origin", "queue_position"):
                old.pop(k, None)
            old["id"] = "01800000-0000-7000-8000-000000000001"
            old["method"] = first["method"] - 1
            r = d.post("/runs/import", json.dumps(old) + "\n")
            self.assertEqual(r.json()["imported"], 1, r)
            second = d.post("/runs?wait=20", {"benchmark": "smem_stride"}).json()
            v = d.get("/runs/" + second["id"]).json()["verdicts"]
            self.assertEqual(v["history"]["runs"], [first["id"]])
            self.assertEqual(v["fleet"]["cards"], 1)
        finally:
            self.assertEqual(d.stop(), 0)


if __name__ == "__main__":
    unittest.main()
