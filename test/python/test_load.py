"""ds_analyzer.load: a profile's modes, split and per-iteration rows, with and without pandas, and never torch."""

import copy
import json
import os
import subprocess
import sys
import unittest

from helpers import HERE, PACKAGE_DIR

import ds_analyzer
from ds_analyzer import _load

FIXTURES = os.path.normpath(os.path.join(HERE, "..", "fixtures", "profiles"))
QUICK = os.path.join(FIXTURES, "emulated-quick.json")
POOLED = os.path.join(FIXTURES, "remote-latency.json")

try:
    import pandas  # noqa: F401

    HAVE_PANDAS = True
except ImportError:
    HAVE_PANDAS = False
NEEDS_PANDAS = "needs pandas (Debian: apt-get install python3-pandas; run with /usr/bin/python3)"


def read(path):
    with open(path) as f:
        return json.load(f)


def with_events(raw):
    """The cold rank with two epoch starts, a save in a step and one between epochs (the fixture has none)."""
    raw = copy.deepcopy(raw)
    rank = raw["modes"]["cold"]["ranks"][0]
    rank["epochs"] = [
        {"t": 0, "epoch": 0, "i": 0, "createMs": 40.0, "firstWaitMs": rank["iterations"][0]["waitMs"]},
        {
            "t": 0,
            "epoch": 1,
            "i": 100,
            "createMs": 35.0,
            "firstWaitMs": rank["iterations"][100]["waitMs"],
            "gapMs": 3.0,
        },
    ]
    rank["checkpoints"] = [
        {
            "t": 0,
            "i": 50,
            "inStep": True,
            "api": "torch.save",
            "blockingMs": 6.0,
            "syncMs": 1.0,
            "bytes": 1000,
            "persisted": True,
        },
        {
            "t": 0,
            "i": 50,
            "inStep": True,
            "api": "torch.save",
            "blockingMs": 2.5,
            "syncMs": 0,
            "bytes": 1000,
            "persisted": True,
        },
        {
            "t": 0,
            "i": 100,
            "inStep": False,
            "api": "manual",
            "blockingMs": 9.0,
            "syncMs": 0,
            "bytes": None,
            "persisted": True,
        },
    ]
    return raw


class LoadTest(unittest.TestCase):
    def test_rows_hold_the_profiles_own_figures(self):
        raw = read(QUICK)
        rows = _load.load(QUICK).iteration_rows()
        self.assertEqual(len(rows), sum(len(r["iterations"]) for m in raw["modes"].values() for r in m["ranks"]))
        for mode, result in raw["modes"].items():
            summary = result["ranks"][0]["summary"]
            mine = [row for row in rows if row["mode"] == mode]
            self.assertEqual(sum(row["warmup"] for row in mine), summary["warmupIterations"], mode)
            window = [row for row in mine if not row["warmup"]][: summary["measuredIterations"]]
            mean_ms = 1000 * sum(row["duration_s"] for row in window) / len(window)
            self.assertAlmostEqual(mean_ms, summary["iterMs"]["mean"], places=6, msg=mode)
            wait_ms = 1000 * sum(row["wait_s"] for row in window) / len(window)
            self.assertAlmostEqual(wait_ms, summary["waitMs"]["mean"], places=6, msg=mode)
            # t is each iteration's end: the next one starts there (never before it), most within a millisecond.
            gaps = [b["start_s"] - a["end_s"] for a, b in zip(mine, mine[1:])]
            self.assertGreater(min(gaps), -0.001, mode)
            self.assertLess(sorted(gaps)[len(gaps) // 2], 0.001, mode)
        self.assertEqual(set(rows[0]), set(_load.ITERATION_COLUMNS))

    def test_modes_and_split(self):
        raw = read(QUICK)
        p = ds_analyzer.load(QUICK)
        self.assertEqual(list(p.modes), ["synthetic", "cached", "cold"])
        self.assertEqual(p.modes["cold"]["summary"], raw["modes"]["cold"]["summary"])
        self.assertEqual(p.split["fetchStallMs"], raw["analysis"]["fetchStallMs"])
        self.assertIn("iterations", repr(p))

    def test_runs_of_a_pooled_mode(self):
        raw = read(POOLED)
        rows = _load.load(POOLED).iteration_rows()
        for mode, result in raw["modes"].items():
            passes = result["passes"]
            for run, p in enumerate(passes, 1):
                mine = [row for row in rows if row["mode"] == mode and row["run"] == run]
                self.assertTrue(mine, (mode, run))
                for row in mine:
                    self.assertGreaterEqual(row["end_s"] * 1000, p["startedAt"])
                    self.assertLessEqual(row["end_s"] * 1000, p["startedAt"] + p["wallSec"] * 1000)

    def test_epochs_and_checkpoints(self):
        rows = [r for r in _load.iteration_rows(with_events(read(QUICK))) if r["mode"] == "cold"]
        by_i = dict((r["iteration"], r) for r in rows)
        self.assertEqual([by_i[i]["epoch"] for i in (0, 99, 100, 382)], [0, 0, 1, 1])
        self.assertEqual([i for i in by_i if by_i[i]["epoch_start"]], [0, 100])
        self.assertEqual((by_i[50]["checkpoint_saves"], by_i[50]["checkpoint_s"]), (2, 0.0085))
        self.assertEqual((by_i[100]["checkpoint_before_saves"], by_i[100]["checkpoint_before_s"]), (1, 0.009))
        self.assertEqual(sum(r["checkpoint_saves"] for r in rows), 2)
        other = [r for r in _load.iteration_rows(read(QUICK)) if r["mode"] == "synthetic"]
        self.assertTrue(all(r["epoch"] is None and not r["epoch_start"] for r in other))

    @unittest.skipUnless(HAVE_PANDAS, NEEDS_PANDAS)
    def test_a_dataframe_with_pandas(self):
        p = ds_analyzer.load(QUICK)
        self.assertEqual(list(p.iterations.columns), list(_load.ITERATION_COLUMNS))
        self.assertEqual(len(p.iterations), len(p.iteration_rows()))
        summary = read(QUICK)["modes"]["cold"]["summary"]
        cold = p.iterations[(p.iterations["mode"] == "cold") & ~p.iterations["warmup"]].head(
            summary["measuredIterations"]
        )
        self.assertAlmostEqual(cold["wait_s"].mean() * 1000, summary["waitMs"]["mean"], places=6)

    def test_a_list_without_pandas(self):
        # pandas hidden (a None entry in sys.modules makes its import fail), in a process of its own.
        code = (
            f"import sys; sys.modules['pandas'] = None; sys.path.insert(0, {PACKAGE_DIR!r}); import ds_analyzer; "
            f"p = ds_analyzer.load({QUICK!r}); print(type(p.iterations).__name__, len(p.iterations), "
            f"sorted(p.iterations[0]) == sorted({list(_load.ITERATION_COLUMNS)!r}))"
        )
        out = subprocess.check_output([sys.executable, "-c", code]).decode().split()
        self.assertEqual(out, ["list", "623", "True"])

    def test_importing_the_package_loads_neither_the_reader_nor_pandas(self):
        code = (
            f"import sys; sys.path.insert(0, {PACKAGE_DIR!r}); import ds_analyzer; "
            "print([m for m in ('ds_analyzer._load', 'pandas', 'torch') if m in sys.modules])"
        )
        self.assertEqual(subprocess.check_output([sys.executable, "-c", code]).decode().strip(), "[]")

    def test_not_a_profile(self):
        bad = os.path.join(FIXTURES, "gate", "wrong-schema-version.json")
        with self.assertRaisesRegex(ValueError, "schemaVersion"):
            ds_analyzer.load(bad)
        with self.assertRaisesRegex(ValueError, "not JSON"):
            ds_analyzer.load(os.path.join(FIXTURES, "gate", "not-json.json"))


if __name__ == "__main__":
    unittest.main()
