"""The manual API (iterate, data/compute) for loops without a DataLoader: no torch needed."""

import unittest

from helpers import iters, run_script


class ManualApiTest(unittest.TestCase):
    def test_iterate_times_a_plain_loop_and_ends_at_the_budget(self):
        proc, events = run_script(
            r"""
import time
from ds_analyzer import iterate
def batches():
    while True:
        time.sleep(0.004)                   # the reader
        yield [1, 2, 3]
try:
    for batch in iterate(batches(), samples=len):
        time.sleep(0.002)                   # the step
finally:
    print("finally")
print("not reached")
""",
            mode="cold",
            iterations=12,
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.split(), ["finally"])
        (ev,) = events.values()
        self.assertEqual((ev[0]["source"], ev[0]["mode"]), ("manual", "cold"))
        it = iters(ev)
        self.assertEqual(len(it), 12)
        self.assertTrue(all(e["samples"] == 3 for e in it))
        self.assertTrue(all(e["waitMs"] >= 3.5 and e["computeMs"] >= 1.5 for e in it), it)
        self.assertEqual((ev[-1]["reason"], ev[-1]["iterations"]), ("budget", 12))

    def test_iterate_replays_the_first_batch_in_synthetic_mode(self):
        proc, events = run_script(
            r"""
from ds_analyzer import iterate, SYNTHETIC
reads = []
def reader():
    for k in range(1000):
        reads.append(k)
        yield [k] * 4
seen = set()
try:
    for batch in iterate(reader()):
        seen.add(tuple(batch))
finally:
    print(SYNTHETIC, len(reads), len(seen))
""",
            mode="synthetic",
            iterations=30,
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.split(), ["True", "1", "1"])
        (ev,) = events.values()
        self.assertEqual(len(iters(ev)), 30)
        self.assertTrue(all(e["samples"] == 4 for e in iters(ev)))  # len() of a list batch

    def test_data_and_compute_context_managers(self):
        proc, events = run_script(
            r"""
import time
import ds_analyzer
for epoch in range(3):                      # ends by itself: 3 x 5 iterations
    for k in range(5):
        with ds_analyzer.data():
            time.sleep(0.003)
        with ds_analyzer.compute(samples=16):
            time.sleep(0.001)
""",
            mode="cached",
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        (ev,) = events.values()
        it = iters(ev)
        self.assertEqual(len(it), 15)
        self.assertTrue(all(e["waitMs"] >= 2.5 and 0.5 <= e["computeMs"] < 50 for e in it), it)
        self.assertEqual((ev[-1]["reason"], ev[-1]["iterations"]), ("exhausted", 15))

    def test_context_managers_honour_the_budget(self):
        proc, events = run_script(
            r"""
import ds_analyzer
while True:
    with ds_analyzer.data():
        batch = [0] * 8
    with ds_analyzer.compute(samples=len(batch)):
        pass
""",
            mode="cached",
            iterations=7,
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        (ev,) = events.values()
        self.assertEqual((ev[-1]["reason"], ev[-1]["iterations"]), ("budget", 7))

    def test_everything_is_a_no_op_without_a_mode(self):
        proc, events = run_script(
            r"""
import ds_analyzer
data = [[1], [2]]
print(ds_analyzer.iterate(data) is data, ds_analyzer.enabled(), ds_analyzer.MODE)
with ds_analyzer.data():
    pass
with ds_analyzer.compute(samples=1):
    pass
""",
            mode=None,
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.split(), ["True", "False", "None"])
        self.assertEqual(events, {})

    def test_an_uncaught_error_ends_with_reason_error(self):
        proc, events = run_script(
            r"""
from ds_analyzer import iterate
for k, batch in enumerate(iterate([[1]] * 10)):
    if k == 3:
        raise ValueError("boom")
""",
            mode="cached",
        )
        self.assertNotEqual(proc.returncode, 0)
        (ev,) = events.values()
        self.assertEqual((ev[-1]["type"], ev[-1]["reason"]), ("end", "error"))


class NodeTest(unittest.TestCase):
    def test_the_node_rank_comes_from_the_launcher_group_rank_then_node_rank_then_slurm(self):
        from ds_analyzer._recorder import config_from_env

        def node_rank(**env):
            return config_from_env(dict(env, DSA_MODE="cold", DSA_EVENTS_DIR="/tmp")).node_rank

        self.assertEqual(node_rank(), 0)
        self.assertEqual(node_rank(SLURM_NODEID="3"), 3)
        self.assertEqual(node_rank(NODE_RANK="2", SLURM_NODEID="3"), 2)
        self.assertEqual(node_rank(GROUP_RANK="1", NODE_RANK="2", SLURM_NODEID="3"), 1)
        # The hook never stops a training job: a malformed variable is passed over.
        self.assertEqual(node_rank(GROUP_RANK="", NODE_RANK="x", SLURM_NODEID="4"), 4)
        self.assertEqual(node_rank(GROUP_RANK="-1"), 0)

    def test_the_start_event_names_the_host_and_the_node_rank(self):
        import socket

        proc, events = run_script(
            r"""
from ds_analyzer import iterate
for batch in iterate([[1]] * 3):
    pass
""",
            mode="cached",
            extra_env={"GROUP_RANK": "2", "RANK": "5"},
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        (ev,) = events.values()
        self.assertEqual(
            (ev[0]["type"], ev[0]["rank"], ev[0]["nodeRank"], ev[0]["hostname"]), ("start", 5, 2, socket.gethostname())
        )
        self.assertNotIn("nodeRank", ev[1], "the node is named once, in the start event")


if __name__ == "__main__":
    unittest.main()
