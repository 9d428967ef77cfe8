"""GET /openapi.json (issue 17): the document the daemon serves is
api/openapi.json, it lists every route of the router's table, and the
checker the harness runs on every answer (openapi_check.py) refuses answers
the document does not describe.  Redocly's linter runs in its own test
(tests/openapi_lint.sh).
"""
import json
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import openapi_check  # noqa: E402
from harness import Daemon  # noqa: E402

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
JSON = [("Content-Type", "application/json")]
RUN = "01a22ef7-0e15-7000-b81c-553aa9a5198e"


class OpenApiTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Daemon().start()

    @classmethod
    def tearDownClass(cls):
        cls.d.stop()

    def test_served_document_is_the_file(self):
        r = self.d.get("/openapi.json")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.header("Content-Type"), "application/json")
        self.assertEqual(r.json(), openapi_check.SPEC)
        self.assertEqual(r.json()["openapi"], "3.1.0")
        self.assertEqual(self.d.get("/openapi.json?x=1").status, 400)

    def test_every_route_is_documented(self):
        with open(os.path.join(TOP, "server", "http", "router.c")) as f:
            routes = re.findall(r'\{"([A-Z]+)",\s*"([^"]+)"', f.read())
        self.assertGreaterEqual(len(routes), 20, "router.c's table was not read")
        paths = openapi_check.SPEC["paths"]
        for method, pattern in routes:
            # "*" is one segment: any {param} template in its place.
            rx = re.compile("^" + re.escape(pattern).replace(r"\*", r"\{[^}]+\}") + "$")
            documented = [p for p in paths if rx.match(p) and method.lower() in paths[p]]
            self.assertTrue(documented, "%s %s is not in api/openapi.json" % (method, pattern))

    def test_every_documented_path_is_routed(self):
        # Each path answers something other than "no such path" (the
        # markdown reports come with the client's branch of issue 17).
        for path, item in openapi_check.SPEC["paths"].items():
            if path.endswith(".md"):
                continue
            url = re.sub(r"\{[^}]+\}", "x", path)
            for method in item:
                if method == "parameters":
                    continue
                r = self.d.request(method.upper(), url, body="{}" if method == "post" else None,
                                   headers={"Content-Type": "application/json"})
                self.assertNotIn("no such path", r.body, (method, url))
                self.assertNotEqual(r.status, 405, (method, url))

    def check(self, method, path, status, body, headers=JSON):
        return openapi_check.problems(method, path, status,
                                      {k.lower(): v for k, v in headers}, body)

    def test_checker_refuses_what_is_not_documented(self):
        run = self.d.post("/runs?wait=10", {"benchmark": "smem_stride",
                                            "params": {"strides": [1, 32]}}).json()
        good = json.dumps(run)
        self.assertEqual(self.check("GET", "/runs/" + RUN, 200, good), [])
        # a status the operation does not list
        self.assertTrue(self.check("GET", "/runs/" + RUN, 418, good))
        # a path that is not there must be a 404 with the error object
        self.assertTrue(self.check("GET", "/nope", 200, "{}"))
        self.assertEqual(self.check("GET", "/nope", 404,
                                    '{"error":{"code":"not_found","message":"no"}}'), [])
        # a method the path does not take must be a 405 with Allow
        err = '{"error":{"code":"method_not_allowed","message":"no"}}'
        self.assertTrue(self.check("PUT", "/runs", 405, err))
        self.assertEqual(self.check("PUT", "/runs", 405, err, JSON + [("Allow", "GET")]), [])
        # a body its schema refuses: a status no run has, a missing field,
        # an error object without its message, a wrong Content-Type
        bad = dict(run, status="paused")
        self.assertTrue(self.check("GET", "/runs/" + RUN, 200, json.dumps(bad)))
        bad = dict(run)
        del bad["validity"]
        self.assertTrue(self.check("GET", "/runs/" + RUN, 200, json.dumps(bad)))
        self.assertTrue(self.check("GET", "/runs/" + RUN, 404, '{"error":{"code":"not_found"}}'))
        self.assertTrue(self.check("GET", "/runs/" + RUN, 200, good, [("Content-Type", "text/csv")]))
        # the most literal template wins: /runs/ID.csv is CSV, not a run
        self.assertEqual(self.check("GET", "/runs/%s.csv" % RUN, 200, "run_id\n",
                                    [("Content-Type", "text/csv; charset=utf-8")]), [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
