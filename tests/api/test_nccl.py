"""Issue 37: nccl_allreduce through the daemon and the worker's TEST DOUBLE
(tests/fake_peaks.c draws synthetic rows; nothing here ran NCCL or a GPU).
On a node of two fake GPUs a run is stored done and valid, with one row a
size whose bus bandwidth is the algorithm bandwidth x 2(n-1)/n and whose
algorithm bandwidth is bytes over the median time; GET /benchmarks lists
it with its parameters, method and short form; a node of one GPU refuses
it (409 too_few_gpus, from min_devices, as p2p_bandwidth); the health
suite on two GPUs runs it once for the node, and the health canary's
node canaries run it beside p2p_bandwidth; the CSV, /metrics, the
client's show and the markdown report carry its bandwidths."""
import csv
import io
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, DaemonCase, assert_too_few_gpus, benchmarks  # noqa: E402
from test_fleet import wait_for  # noqa: E402

MIB = 1 << 20
CLIENT = os.environ.get("GPUBENCH_CLIENT", "build/bin/gpubench")


def spec(d):
    return benchmarks(d)["nccl_allreduce"]


class NcclTwoGpusTest(DaemonCase):
    DAEMON_KWARGS = {"gpus": 2}

    def test_listed_with_its_params(self):
        b = spec(self.d)
        self.assertIs(b["all_devices"], True)
        params = {p["name"]: p for p in b["params"]}
        self.assertEqual(params["bytes"]["default"],
                         [8 * MIB, 32 * MIB, 128 * MIB, 512 * MIB, 2048 * MIB, 4096 * MIB])
        self.assertEqual(params["dtype"]["default"], "float")
        self.assertIn("bfloat16", params["dtype"]["choices"])
        self.assertEqual(b["health_params"]["bytes"], [32 * MIB, 1024 * MIB])
        for bad in ({"bytes": [12]}, {"bytes": [8 * MIB + 4]}, {"dtype": "int8"},
                    {"bytes": [1 << 35]}):
            r = self.d.post("/runs", {"benchmark": "nccl_allreduce", "params": bad})
            self.assertEqual(r.status, 400, (bad, r))

    def test_rows_busbw_and_verified(self):
        sizes = [8 * MIB, 256 * MIB, 1024 * MIB]
        r = self.d.post("/runs?wait=30", {"benchmark": "nccl_allreduce",
                                          "params": {"bytes": sizes, "samples": 5}})
        self.assertEqual(r.status, 200, r)
        run = r.json()
        self.assertEqual(run["status"], "done", run)
        self.assertIs(run["validity"]["valid"], True, run["validity"])
        self.assertEqual(run["method"], 1)
        rows = run["results"]["rows"]
        self.assertEqual([row["bytes"] for row in rows], sizes)
        self.assertEqual([row["label"] for row in rows],
                         ["all-reduce 8 MiB", "all-reduce 256 MiB", "all-reduce 1 GiB"])
        n = 2
        for row in rows:
            self.assertEqual(row["ranks"], n)
            self.assertEqual(row["unit"], "GB/s")
            self.assertIs(row["verified"], True)
            self.assertEqual(row["elements_checked"], row["bytes"] / 4 * n)
            self.assertAlmostEqual(row["algbw_gbps"],
                                   row["bytes"] / (row["median_ms"] * 1e-3) / 1e9, places=6)
            self.assertAlmostEqual(row["busbw_gbps"], row["algbw_gbps"] * 2 * (n - 1) / n,
                                   places=9)
            self.assertAlmostEqual(row["value"], row["busbw_gbps"], places=9)
            self.assertAlmostEqual(row["time_us"], row["median_ms"] * 1e3, places=6)
        # a larger buffer moves more per second (the ring's fixed cost fades)
        self.assertLess(rows[0]["busbw_gbps"], rows[-1]["busbw_gbps"])
        topo = run["results"]["summary"]["topology"]
        self.assertEqual((topo["ranks"], topo["link_type"]), (2, "nvlink"))
        # stored as it was answered
        stored = self.d.get("/runs/%s" % run["id"]).json()
        self.assertEqual(stored["results"]["rows"], rows)
        # the CSV carries the bandwidths, /metrics the bus bandwidth
        r = self.d.get("/runs/%s.csv" % run["id"])
        self.assertEqual(r.status, 200, r)
        table = list(csv.DictReader(io.StringIO(r.body)))
        self.assertEqual(len(table), 3)
        self.assertAlmostEqual(float(table[2]["busbw_gbps"]), rows[2]["busbw_gbps"], places=3)
        self.assertIn("algbw_gbps", table[0])
        metrics = self.d.get("/metrics").body
        self.assertIn("gpubench_result_busbw_bytes_per_second", metrics)
        # the client's show and the markdown report have the columns
        env = dict(os.environ, GPUBENCH_URL="http://127.0.0.1:%d" % self.d.port)
        env.pop("GPUBENCH_TOKEN", None)
        p = subprocess.run([CLIENT, "show", run["id"]], capture_output=True, text=True, env=env,
                           timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("bus bandwidth (GB/s)", p.stdout)
        self.assertIn("all-reduce 1 GiB", p.stdout)
        report = self.d.get("/runs/%s.md" % run["id"]).body
        self.assertIn("| Bus bandwidth (GB/s) |", report)

    def test_dtype_half(self):
        r = self.d.post("/runs?wait=30", {"benchmark": "nccl_allreduce",
                                          "params": {"bytes": [64 * MIB], "dtype": "half",
                                                     "samples": 3}})
        self.assertEqual(r.status, 200, r)
        row = r.json()["results"]["rows"][0]
        self.assertEqual((row["dtype"], row["elements"]), ("half", 32 * MIB))

    def test_health_runs_it_once_for_the_node(self):
        r = self.d.post("/runs?wait=60", {"benchmark": "health", "device": "all"})
        self.assertEqual(r.status, 200, r)
        runs = r.json()["runs"]
        nccl = [x for x in runs if x["benchmark"] == "nccl_allreduce"]
        self.assertEqual(len(nccl), 1, [x["benchmark"] for x in runs])
        self.assertEqual(nccl[0]["status"], "done")
        self.assertEqual([row["bytes"] for row in nccl[0]["results"]["rows"]],
                         [32 * MIB, 1024 * MIB])


class NcclOneGpuTest(unittest.TestCase):
    def test_refused_with_409(self):
        d = Daemon(gpus=1).start()
        try:
            assert_too_few_gpus(self, d, "nccl_allreduce")
            self.assertEqual(d.get("/runs").json()["runs"], [])
        finally:
            self.assertEqual(d.stop(), 0)


class NcclNodeCanaryTest(unittest.TestCase):
    def test_joins_the_node_canary_with_p2p(self):
        d = Daemon(gpus=2, args=["--watch-interval", "1", "--canary", "health@24h",
                                 "--canary-idle", "2s"]).start()
        try:
            node = d.get("/canaries").json()["node"]
            self.assertEqual([n["benchmark"] for n in node], ["p2p_bandwidth", "nccl_allreduce"])

            def ran():
                runs = [x for x in d.get("/runs?label=canary").json()["runs"]
                        if x["benchmark"] == "nccl_allreduce" and x["status"] == "done"]
                return runs or None
            runs = wait_for(ran, 60, "the node canary ran nccl_allreduce")
            self.assertEqual(len(runs), 1)
            node = d.get("/canaries").json()["node"]
            self.assertEqual(node[1]["last_run"]["id"], runs[0]["id"])
        finally:
            self.assertEqual(d.stop(), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
