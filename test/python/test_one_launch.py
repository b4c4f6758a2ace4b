"""One launch, several modes: the hook and iterate() switch at the control file's request
(DSA_CONTROL_FILE, docs/protocol.md "One launch"). The script plays the CLI: it rewrites
the control file at set iterations, as the CLI does between blocks."""

import os
import unittest

from helpers import HAVE_TORCH, NEEDS_TORCH, iters, run_script, temp_dir
from test_dataloader import PRELUDE as LOADER_JOB

# The DataLoader tests' job (a counting dataset, a tiny model), and the CLI's part: rewriting the control file.
PRELUDE = (
    LOADER_JOB
    + r"""
import json
CONTROL = os.environ["DSA_CONTROL_FILE"]

def ask(block, mode):
    with open(CONTROL + ".partial", "w") as f:
        f.write("%d %s\n" % (block, mode))
    os.rename(CONTROL + ".partial", CONTROL)

def paced_step(x, y):
    step(x, y)
    time.sleep(0.01)
"""
)


def blocks(events):
    return [e for e in events if e["type"] == "block"]


@unittest.skipUnless(HAVE_TORCH, NEEDS_TORCH)
class OneLaunchTest(unittest.TestCase):
    def run_switching(self, workers):
        control = os.path.join(temp_dir("dsa-control-"), "CONTROL")
        proc, events = run_script(
            PRELUDE
            + r"""
train = DataLoader(Counting(2000, counter), batch_size=4, num_workers=%d)
consulted = []
import atexit
atexit.register(lambda: print(json.dumps(consulted)))  # the budget ends the job with SystemExit
for k, (x, y) in enumerate(train):
    if k == 20:
        ask(1, "synthetic")
    if k == 80:
        ask(2, "cached")
    consulted.append(counter.value)
    paced_step(x, y)
"""
            % workers,
            mode="cached",
            iterations=150,
            extra_env={"DSA_CONTROL_FILE": control},
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        consulted = [int(v) for v in proc.stdout.strip().splitlines()[-1].strip("[]").split(",")]
        (events,) = events.values()
        return events, consulted

    def test_the_loader_keeps_its_workers_through_a_synthetic_block_and_says_what_was_in_flight(self):
        events, consulted = self.run_switching(workers=2)
        start = events[0]
        self.assertTrue(start["switchModes"])
        switches = blocks(events)
        self.assertEqual([(b["block"], b["mode"]) for b in switches], [(1, "synthetic"), (2, "cached")])
        to_synthetic, to_cached = switches
        # Looked at every 0.1 s: the switch comes within a few 10 ms iterations of the request.
        self.assertTrue(20 < to_synthetic["i"] < 40, to_synthetic)
        self.assertTrue(80 < to_cached["i"] < 100, to_cached)
        # 2 workers x prefetch_factor 2 batches handed out at the switch.
        self.assertEqual(to_synthetic["inFlight"], 4)
        self.assertEqual(to_cached["inFlight"], 4)
        # The synthetic block never consults the dataset: only what the workers held ahead is read.
        during = consulted[to_synthetic["i"] + 1 : to_cached["i"]]
        self.assertEqual(len(set(during)), 1, "the dataset was read in the synthetic block")
        # The cached block reads again, continuing the epoch where it was.
        self.assertGreater(consulted[-1], during[-1])
        self.assertEqual(len(iters(events)), 150)

    def test_a_single_process_loader_carries_nothing_over(self):
        events, _ = self.run_switching(workers=0)
        self.assertEqual([b["inFlight"] for b in blocks(events)], [0, 0])


class ManualLoopTest(unittest.TestCase):
    def test_iterate_switches_and_replays_the_last_real_batch(self):
        control = os.path.join(temp_dir("dsa-control-"), "CONTROL")
        proc, events = run_script(
            r"""
import os, time, ds_analyzer
CONTROL = os.environ["DSA_CONTROL_FILE"]
read = []
def batches():
    k = 0
    while True:
        read.append(k)
        yield [k] * 4
        k += 1
seen = []
for n, batch in enumerate(ds_analyzer.iterate(batches())):
    if n == 10:
        with open(CONTROL + ".p", "w") as f:
            f.write("1 synthetic\n")
        os.rename(CONTROL + ".p", CONTROL)
    seen.append(batch[0])
    time.sleep(0.01)
""",
            mode="cold",
            iterations=60,
            extra_env={"DSA_CONTROL_FILE": control},
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        (ev,) = events.values()
        (switch,) = blocks(ev)
        self.assertEqual(switch["mode"], "synthetic")
        self.assertIsNone(switch["inFlight"])  # a plain iterable does not say what it prefetched
        self.assertEqual(len(iters(ev)), 60)


if __name__ == "__main__":
    unittest.main()
