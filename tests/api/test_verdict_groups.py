"""Which runs a verdict's group takes (issue 14, the speed of GET /compare
with baseline= and candidate=): a card:, host:, label: or driver: selector
picks its key first (the verdict key of its newest valid run: benchmark,
card model, params) and then the newest 200 runs of THAT key, in SQL, so
that runs of another parameter set are neither read nor take places in the
group; they are counted in excluded_other_key (those made since the oldest
run taken).

The runs are a SYNTHETIC fleet generated here (test_verdicts.make_run:
seeded lognormal samples, meta.synthetic true), imported through POST
/runs/import; no number comes from a GPU."""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon  # noqa: E402
import test_verdicts  # noqa: E402
from test_verdicts import make_run, uuid_of  # noqa: E402

KEY_A = (1, 2, 32)   # strides of one parameter set
KEY_B = (1, 2)       # and of another
GROUP_MAX_RUNS = 200  # server/http/api_verdicts.c


def at(run, minute):
    """The run made at 2026-02-01 plus minute minutes (ids ascend with it)."""
    when = "2026-02-%02dT%02d:%02d:00.000Z" % (1 + minute // 1440, minute // 60 % 24, minute % 60)
    run["created_at"] = run["started_at"] = run["finished_at"] = when
    return run


class VerdictGroupsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = Daemon(gpus=0).start()
        runs, minute = [], 0
        # Card 11: 150 runs of key A and 150 of key B, alternating, a B
        # run the newest of all but an invalid one, then one valid A run
        # newer still: the group's key is A (its newest VALID run's).
        cls.mixed_a = []
        for i in range(150):
            a = at(make_run(11, 1, strides=KEY_A, label="mixed"), minute)
            b = at(make_run(11, 1, strides=KEY_B, label="mixed"), minute + 1)
            minute += 2
            runs += [a, b]
            cls.mixed_a.append(a["id"])
        newest_a = at(make_run(11, 1, strides=KEY_A, label="mixed"), minute)
        cls.invalid_b = at(make_run(11, 1, strides=KEY_B, label="mixed", noisy=True,
                                    shift={1: 2.0, 2: 2.0}), minute + 1)
        minute += 2
        runs += [newest_a, cls.invalid_b]
        cls.mixed_a.append(newest_a["id"])
        # Card 12: 250 runs of key A: the group is the newest 200.
        cls.long_a = []
        for i in range(250):
            r = at(make_run(12, 1, strides=KEY_A, label="long"), minute)
            minute += 1
            runs.append(r)
            cls.long_a.append(r["id"])
        r = cls.d.post("/runs/import", "".join(json.dumps(x) + "\n" for x in runs))
        assert r.status == 200 and r.json()["imported"] == len(runs), r

    @classmethod
    def tearDownClass(cls):
        assert cls.d.stop() == 0

    compare = test_verdicts.VerdictsTest.compare  # GET /compare?baseline=&candidate=, 200

    def test_group_takes_every_run_of_its_key_not_half(self):
        # Newest 200 runs of ANY key would hold 100 of key A; the group
        # holds all 151 of key A, and says how many of key B it passed over.
        a = self.compare("card:" + uuid_of(11), "card:" + uuid_of(11), benchmark="smem_stride")
        base = a["baseline"]
        self.assertEqual(base["n_runs"], 151)
        self.assertEqual(base["runs"], sorted(self.mixed_a, reverse=True))
        self.assertEqual(base["key"]["params"]["strides"], list(KEY_A))
        # every B run is newer than the oldest A run: 150 valid, 1 invalid
        self.assertEqual(base["excluded_other_key"], 151)
        self.assertEqual(base["excluded_invalid"], 0)
        self.assertEqual(a["rows"][0]["n_baseline"], 151 * 20)
        self.assertIs(a["comparable"], True)

    def test_key_is_the_newest_valid_runs(self):
        # With invalid runs brought in, the newest run (invalid, key B)
        # decides the key, and its invalid run is in the group.
        a = self.compare("card:" + uuid_of(11), "card:" + uuid_of(11), benchmark="smem_stride",
                         include_invalid="true")
        self.assertEqual(a["baseline"]["key"]["params"]["strides"], list(KEY_B))
        self.assertEqual(a["baseline"]["n_runs"], 151)
        self.assertEqual(a["baseline"]["runs"][0], self.invalid_b["id"])

    def test_group_is_the_newest_runs_of_its_key(self):
        a = self.compare("card:" + uuid_of(12), "card:" + uuid_of(11), benchmark="smem_stride")
        self.assertEqual(a["baseline"]["n_runs"], GROUP_MAX_RUNS)
        self.assertEqual(a["baseline"]["runs"], sorted(self.long_a, reverse=True)[:GROUP_MAX_RUNS])
        self.assertEqual(a["baseline"]["excluded_other_key"], 0)
        self.assertEqual(a["rows"][0]["n_baseline"], GROUP_MAX_RUNS * 20)
        # the same through label: and with since= (the newest 60 minutes)
        b = self.compare("label:long", "card:" + uuid_of(11), benchmark="smem_stride",
                         since="2026-02-01T%02d:%02d:00Z" % ((302 + 190) // 60, (302 + 190) % 60))
        self.assertEqual(b["baseline"]["n_runs"], 60)
        self.assertEqual(b["baseline"]["runs"], sorted(self.long_a, reverse=True)[:60])

    def test_without_benchmark_the_newest_runs(self):
        a = self.compare("card:" + uuid_of(12), "card:" + uuid_of(11))
        self.assertEqual(a["benchmark"], "smem_stride")
        self.assertEqual(a["baseline"]["n_runs"], GROUP_MAX_RUNS)
        self.assertEqual(a["candidate"]["n_runs"], 151)


if __name__ == "__main__":
    unittest.main(verbosity=2)
