#!/usr/bin/env python3
"""What a newcomer reads of a run outside the page (issue 26, "Reports and
exports"), on the real H200 runs in examples/ imported into a daemon:

- GET /runs/ID.md of every benchmark carries its values with their units
  (GB/s, TFLOP/s, us, ms), its peak and whence it comes, its validity with
  the reasons and notes, and p2p_bandwidth's matrices as markdown tables;
- the CSV export names every column once, so csv.DictReader keeps both the
  run's label (`label`) and the row's (`row_label`);
- the README's list of CSV columns is the header the daemon sends.
"""
import csv
import io
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
# Exports of GET /runs.ndjson from real H200s: a two-GPU node (p2p with a
# matrix, invalid runs with reasons) and a one-GPU node (no p2p: a node of
# one GPU leaves it out; a valid compute_peak with the power_capped note).
EXAMPLES = ("examples/h200x2_daemon_health/health_runs.ndjson",
            "examples/h200_daemon_health/health_runs.ndjson")
NO_PAIR = "examples/h200_daemon_health_i18/health_runs.ndjson"


def sig(x, digits=4):
    """A number as the report writes it: digits significant, no exponent."""
    decimals = digits - 1 - math.floor(math.log10(abs(x))) if x else 0
    return "%.*f" % (max(0, min(12, decimals)), x)


def row_key(row):
    for k in ("stride", "variant", "pattern", "label"):
        if k in row:
            return str(row[k])
    return None


class Reports(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = harness.Daemon(gpus=0).start()
        cls.ids = []
        for name in EXAMPLES:
            with open(os.path.join(ROOT, name), encoding="utf-8") as f:
                body = f.read()
            r = cls.d.post("/runs/import", body)
            assert r.status == 200, r
        # and a p2p run with no pair, stored by an older daemon on a one-GPU
        # node (today's leaves it out there): its report still says why
        with open(os.path.join(ROOT, NO_PAIR), encoding="utf-8") as f:
            body = "".join(line for line in f if '"benchmark":"p2p_bandwidth"' in line)
        r = cls.d.post("/runs/import", body)
        assert r.status == 200 and r.json()["imported"] == 1, r
        cls.runs = cls.d.get("/runs?limit=200").json()["runs"]
        assert len(cls.runs) == 20, len(cls.runs)

    @classmethod
    def tearDownClass(cls):
        cls.d.stop()

    def report(self, run):
        r = self.d.get("/runs/%s.md" % run["id"])
        self.assertEqual(r.status, 200, r)
        return r.body

    def row_line(self, body, row):
        lines = [l for l in body.splitlines() if l.startswith("| %s |" % row_key(row))]
        self.assertTrue(lines, "no table line for row %s in\n%s" % (row_key(row), body))
        return lines[0]

    # -- GET /runs/ID.md ------------------------------------------------------------
    def test_every_benchmark_reports_values_with_units_and_peaks(self):
        benchmarks, units = set(), set()
        for run in self.runs:
            run = self.d.get("/runs/" + run["id"]).json()
            body = self.report(run)
            benchmarks.add(run["benchmark"])
            for row in run["results"]["rows"]:
                line = self.row_line(body, row)
                # every row's time, in ms
                self.assertIn(" ms |", line)
                if isinstance(row.get("value"), (int, float)):
                    want = "%s %s" % (sig(row["value"]), row["unit"])
                    self.assertIn(" %s |" % want, line, run["benchmark"])
                    units.add(row["unit"])
                if isinstance(row.get("peak"), (int, float)):
                    self.assertIn(" %s %s |" % (sig(row["peak"]), row["unit"]), line)
                    # a share as the terminal writes it too: the field's 3 digits
                    self.assertIn(" %s%% |" % sig(100 * row["share_of_peak"], 3), line)
                if isinstance(row.get("gbps"), (int, float)):
                    self.assertIn(" %s GB/s |" % sig(row["gbps"]), line)
                if row.get("peak_source"):
                    self.assertIn(row["peak_source"], body)
            summary = run["results"]["summary"]
            if isinstance(summary.get("peak"), dict):  # the shared-memory peak
                self.assertIn("Peak: %s GB/s" % sig(summary["peak"]["peak_gbps"]), body)
                self.assertIn(summary["peak"]["clock_source"], body)
            if isinstance(summary.get("ceiling"), dict):  # transpose's copy ceiling
                self.assertIn("Copy ceiling: %s GB/s" % sig(summary["ceiling"]["gbps"]), body)
                self.assertIn(summary["ceiling"]["source"], body)
        self.assertEqual(benchmarks, {"smem_stride", "transpose", "gmem_stride", "hbm_bandwidth",
                                      "compute_peak", "pcie_bandwidth", "p2p_bandwidth"})
        self.assertLessEqual({"GB/s", "TFLOP/s", "us"}, units)

    def test_report_says_validity_reasons_and_notes(self):
        seen = {"invalid": 0, "note": 0}
        for run in self.runs:
            run = self.d.get("/runs/" + run["id"]).json()
            body = self.report(run)
            validity = run["validity"]
            if validity["valid"]:
                self.assertIn(": valid.", body)
            else:
                seen["invalid"] += 1
                self.assertIn(": **invalid**", body)
                for reason in validity["reasons"]:
                    self.assertIn(reason["message"], body)
            for note in validity.get("notes", []):
                seen["note"] += 1
                self.assertIn("Note (%s): %s" % (note["code"], note["message"]), body)
        self.assertTrue(seen["invalid"] and seen["note"], seen)

    def test_p2p_matrix_is_a_table(self):
        p2p = [self.d.get("/runs/" + r["id"]).json() for r in self.runs
               if r["benchmark"] == "p2p_bandwidth"]
        self.assertEqual(len(p2p), 2)
        for run in p2p:
            body = self.report(run)
            summary = run["results"]["summary"]
            m = summary["matrix"]
            if len(m["devices"]) < 2:
                self.assertIn(summary["no_pair"], body)
                continue
            head = "| From |" + "".join(" to GPU %d |" % d for d in m["devices"])
            for field, unit in (("gbps", "GB/s"), ("latency_us", "us")):
                at = body.index(head, body.index("Peer %s (%s)" % (
                    "bandwidth" if field == "gbps" else "latency", unit)))
                table = body[at:].split("\n\n")[0].splitlines()
                self.assertEqual(table[1], "|:---|" + "---:|" * len(m["devices"]))
                for i, d in enumerate(m["devices"]):
                    cells = ["-" if v is None else "%s %s" % (sig(v), unit) for v in m[field][i]]
                    self.assertEqual(table[2 + i], "| GPU %d | %s |" % (d, " | ".join(cells)))

    def test_compare_markdown_of_an_imported_benchmark(self):
        r = self.d.get("/compare.md?benchmark=hbm_bandwidth")
        self.assertEqual(r.status, 200, r)
        api = self.d.get("/compare?benchmark=hbm_bandwidth").json()
        self.assertIn("| Row |" + "".join(" Card %d |" % (i + 1) for i in range(len(api["series"]))),
                      r.body)
        for key in api["keys"]:
            self.assertIn("| %s |" % key, r.body)

    # -- the CSV export -------------------------------------------------------------
    def test_csv_keeps_the_runs_label_and_the_rows(self):
        run = next(r for r in self.runs if r["benchmark"] == "hbm_bandwidth")
        run = self.d.get("/runs/" + run["id"]).json()
        for path in ("/runs/%s.csv" % run["id"], "/runs.csv?benchmark=hbm_bandwidth"):
            body = self.d.get(path).body
            lines = [l for l in csv.DictReader(io.StringIO(body)) if l["run_id"] == run["id"]]
            self.assertEqual([l["label"] for l in lines], [run["label"]] * len(lines))
            self.assertEqual([l.get("row_label") for l in lines],
                             [row["label"] for row in run["results"]["rows"]])
            header = next(csv.reader(io.StringIO(body)))
            self.assertEqual(len(header), len(set(header)), path)

    def test_readme_lists_the_csv_columns(self):
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            text = f.read()
        self.assertIn("### CSV columns", text)
        section = text.split("### CSV columns", 1)[1].split("\n#", 1)[0]
        listed = [line.split("|")[1].strip().strip("`") for line in section.splitlines()
                  if line.startswith("| `")]
        header = next(csv.reader(io.StringIO(self.d.get("/runs.csv").body)))
        self.assertEqual(listed, header)


if __name__ == "__main__":
    unittest.main()
