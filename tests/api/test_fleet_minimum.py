"""The fleet's minimum (issue 21): a card model's group of fewer than
FLEET_MIN_CARDS cards (server/judge/fleet.h, chosen by simulation in
tests/unit/test_shift.c) says too_few_cards and flags nobody, in GET
/fleet, in a run judged at its end and in /metrics; with enough cards the
card that is off is flagged.  The other cards are SYNTHETIC
(test_alerts.synthetic_card) beside the worker test double's one card."""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402
from test_alerts import PARAMS, synthetic_card  # noqa: E402

SLOW = "GPU-5e1ec7ed-0002-4000-8000-000000000000"


def run_once(d):
    r = d.post("/runs?wait=20", {"benchmark": "smem_stride", "params": PARAMS})
    assert r.status == 200 and r.json()["status"] == "done", r.body
    return r.json()


def fleet_z_lines(d):
    return [line for line in d.get("/metrics").body.splitlines()
            if line.startswith("gpubench_fleet_robust_z{")]


class FleetMinimumTest(unittest.TestCase):
    def test_too_few_cards_flag_nobody_and_enough_do(self):
        # the synthetic cards are imported: their z is on /metrics with
        # --metrics-peer-results (issue 33's series budget)
        d = Daemon(args=["--confirm-runs", "0", "--metrics-peer-results"]).start()
        try:
            first = run_once(d)
            # Three cards of the model: the double's, one alike, one 7% slow.
            cards = [synthetic_card(first, 1, 1.0), synthetic_card(first, 2, 1.07)]
            r = d.post("/runs/import", "".join(json.dumps(x) + "\n" for x in cards))
            self.assertEqual(r.status, 200, r.body)
            g = d.get("/fleet?benchmark=smem_stride").json()["groups"][0]
            self.assertIs(g["too_few_cards"], True, g)
            self.assertEqual((g["n_cards"], g["cards_needed"]), (3, 4))
            self.assertEqual(len(g["cards"]), 3)
            for card in g["cards"]:
                self.assertIs(card["outlier"], False, card)
                self.assertTrue(all(c["z"] is None and not c["outlier"] for c in card["rows"]))
            self.assertEqual(fleet_z_lines(d), [])
            # A run judged at its end against the same three: not judged.
            second = d.get("/runs/" + run_once(d)["id"]).json()["verdicts"]["fleet"]
            self.assertEqual(second["cards"], 3)
            self.assertIs(second["too_few_cards"], True)
            self.assertEqual(second["cards_needed"], 4)
            self.assertEqual(second["outlier_rows"], [])
            self.assertTrue(all(r["z"] is None for r in second["rows"]))

            # Two more cards alike: five, and the slow one stands out.
            more = [synthetic_card(first, c, 1.0) for c in (3, 4)]
            r = d.post("/runs/import", "".join(json.dumps(x) + "\n" for x in more))
            self.assertEqual(r.status, 200, r.body)
            g = d.get("/fleet?benchmark=smem_stride").json()["groups"][0]
            self.assertIs(g["too_few_cards"], False, g)
            self.assertEqual(g["n_cards"], 5)
            self.assertEqual([c["device_uuid"] for c in g["cards"] if c["outlier"]], [SLOW])
            self.assertTrue(all(c["z"] > 3.5 for c in g["cards"][0]["rows"]))
            self.assertEqual(len(fleet_z_lines(d)), 5 * len(PARAMS["strides"]))
            third = d.get("/runs/" + run_once(d)["id"]).json()["verdicts"]["fleet"]
            self.assertIs(third["too_few_cards"], False)
            self.assertEqual(third["outlier_rows"], [])
        finally:
            self.assertEqual(d.stop(), 0)


if __name__ == "__main__":
    unittest.main()
