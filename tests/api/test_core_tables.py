"""Issue 15's tables and layers, seen from outside: the route table's limits
(suffix routes, a route's own body cap), the result-field table that GET
/benchmarks publishes and the CSV and /metrics follow, the runs layer's
errors as HTTP answers, the numeric query arguments refused naming their
field, and the next page's URL percent-encoded."""
import os
import sys
import json
import unittest
import urllib.parse

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402


class CoreTablesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Daemon().start()
        r = cls.d.post("/runs?wait=20", {"benchmark": "smem_stride", "params": {"strides": [1, 2, 32]},
                                         "label": "a b&c/\u00fc"})
        assert r.status == 200, r
        cls.first = r.json()
        for _ in range(2):
            assert cls.d.post("/runs?wait=20", {"benchmark": "smem_stride", "label": "a b&c/\u00fc"}).status == 200

    @classmethod
    def tearDownClass(cls):
        assert cls.d.stop() == 0

    def fields(self):
        return self.d.get("/benchmarks").json()["result_fields"]

    def test_fields_published(self):
        fields = self.fields()
        names = [f["name"] for f in fields]
        self.assertEqual(len(names), len(set(names)))
        for f in fields:
            for k in ("type", "unit", "label", "digits", "benchmarks", "key", "csv", "compare",
                      "gauge", "compare_menu", "help"):
                self.assertIn(k, f, f["name"])
        self.assertEqual([f["name"] for f in fields if f["key"]], ["stride", "variant", "pattern", "label"])

    def test_csv_columns_follow_the_table(self):
        csv = [f["csv_column"] for f in self.fields() if f["csv"] and not f["csv_late"]]
        late = [f["csv_column"] for f in self.fields() if f["csv_late"]]
        body = self.d.get("/runs/%s.csv" % self.first["id"]).body
        header = body.split("\r\n")[0].split(",")
        # the row's fields in the table's order, then the run's columns that
        # came later, then the row's fields that came after them (new
        # columns go at the end)
        rest = header[header.index("row") + 1:]
        self.assertEqual(rest[:len(csv)], csv)
        self.assertEqual(rest[len(csv):], ["method", "checks_failed", "damaged"] + late)
        self.assertIn("mismatches", late)
        lines = [l for l in body.split("\r\n") if l]
        self.assertEqual(len(lines), 1 + 3)
        self.assertTrue(all(len(l.split(",")) >= len(header) for l in lines[1:]))

    def test_gauges_follow_the_table(self):
        gauges = [f["gauge"] for f in self.fields() if f["gauge"]]
        self.assertIn("gpubench_result_median_seconds", gauges)
        metrics = self.d.get("/metrics").body
        helped = {l.split()[2] for l in metrics.splitlines()
                  if l.startswith("# HELP gpubench_result_")}
        # every field gauge, and the verdict's own gauge beside them
        self.assertEqual(helped, set(gauges) | {"gpubench_result_valid"})

    def test_suffix_route_and_allow(self):
        r = self.d.get("/runs/%s.csv" % self.first["id"])
        self.assertEqual(r.status, 200)
        self.assertTrue(r.header("Content-Type").startswith("text/csv"))
        self.assertEqual(self.d.get("/runs/nope.csv").status, 404)
        r = self.d.post("/runs/%s.csv" % self.first["id"], "")
        self.assertEqual(r.status, 405)
        self.assertEqual(r.header("Allow"), "GET, DELETE, HEAD")
        self.assertEqual(self.d.get("/runs/%s.csv?wait=1" % self.first["id"]).status, 400)

    def test_body_cap_is_the_routes(self):
        big = "x" * (100 * 1024)
        self.assertEqual(self.d.post("/runs", big).status, 413)
        # The import's own cap lets it through to the NDJSON check.
        r = self.d.post("/runs/import", big)
        self.assertEqual(r.status, 400, r)

    def test_numbers_refused_by_name(self):
        cases = [("/runs?limit=0", "limit"), ("/runs?limit=501", "limit"),
                 ("/runs.csv?limit=x", "limit"), ("/runs.ndjson?after_seq=-1", "after_seq"),
                 ("/compare?benchmark=smem_stride&latest=1001", "latest"),
                 ("/runs/%s?wait=abc" % self.first["id"], "wait"),
                 ("/runs/%s?wait=3601" % self.first["id"], "wait")]
        for path, field in cases:
            r = self.d.get(path)
            self.assertEqual(r.status, 400, path)
            err = r.json()["error"]
            self.assertEqual((err["code"], err["field"]), ("out_of_bounds", field), path)
            self.assertTrue(err["message"].startswith(field + "="), err["message"])

    def test_next_url_percent_encoded(self):
        q = urllib.parse.urlencode({"label": "a b&c/\u00fc", "limit": 1}, quote_via=urllib.parse.quote)
        body = self.d.get("/runs?" + q).json()
        self.assertIn("label=a%20b%26c%2F%C3%BC", body["next"])
        second = self.d.get(body["next"]).json()
        self.assertEqual(len(second["runs"]), 1)
        self.assertNotEqual(second["runs"][0]["id"], body["runs"][0]["id"])

    def test_runs_layer_errors(self):
        r = self.d.post("/runs", {"benchmark": "smem_stride", "device": "GPU-nope"})
        self.assertEqual((r.status, r.json()["error"]["code"]), (409, "no_device"))
        r = self.d.post("/runs", {"benchmark": "smem_stride", "device": -1})
        self.assertEqual((r.status, r.json()["error"]["code"]), (400, "wrong_type"))
        r = self.d.request("DELETE", "/runs/" + self.first["id"])
        self.assertEqual((r.status, r.json()["error"]["code"]), (409, "not_queued"))
        self.assertEqual(self.first["url"], "/runs/" + self.first["id"])


    def test_every_run_carries_its_url_second(self):
        """A run's "url" comes from the runs layer, not the store
        (issue 25): every view of a run has it, right after "id", the
        cached list entries of finished runs and the export included."""
        views = [("POST", self.first), ("GET /runs/ID", self.d.get("/runs/" + self.first["id"]).json())]
        for attempt in ("first", "cached"):
            views += [("GET /runs " + attempt, run) for run in self.d.get("/runs").json()["runs"]]
        views += [("/runs.ndjson", json.loads(line))
                  for line in self.d.get("/runs.ndjson").body.splitlines() if line]
        self.assertGreaterEqual(len(views), 2 + 2 * 3 + 3)
        for where, run in views:
            self.assertEqual(list(run)[:2], ["id", "url"], where)
            self.assertEqual(run["url"], "/runs/" + run["id"], where)


if __name__ == "__main__":
    unittest.main(verbosity=2)
