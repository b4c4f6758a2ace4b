"""The ranks' agreement on a block switch and a stop, on one node and on several (docs/multi-node.md).

Torch-free: each rank is a thread with its own Recorder, and the collective is a fake all_reduce(MAX)
over the threads (the injectable Recorder.agree). Each node's profiler writes its own ranks' control
file; the steps of the ranks are kept in lockstep, as a job's collectives keep its ranks.
"""

import json
import os
import threading
import unittest

from helpers import temp_dir

from ds_analyzer import _recorder


class FakeGroup:
    """all_reduce(MAX) element by element over `size` threads, as torch.distributed's would be."""

    def __init__(self, size):
        self.size = size
        self.values = [None] * size
        self.calls = []
        self._in = threading.Barrier(size)
        self._out = threading.Barrier(size)

    def agree_for(self, rank):
        def agree(values):
            self.values[rank] = list(values)
            self._in.wait()
            result = [max(column) for column in zip(*self.values)]
            if rank == 0:
                self.calls.append([list(v) for v in self.values])
            self._out.wait()
            return result

        return agree


def write_control(path, block, mode):
    with open(path + ".partial", "w") as f:
        f.write("%d %s\n" % (block, mode))
    os.rename(path + ".partial", path)


def run_ranks(nodes, ranks_per_node, writes, iterations=60, stop_writes=None, nodes_env=None):
    """Runs every rank for `iterations` boundaries; `writes` maps an iteration to (node, block, mode): that
    node's profiler writes its control file just before the ranks reach it. Returns, per rank, the
    (iteration, block, mode) of each switch and the iteration it stopped at (or None)."""
    root = temp_dir("dsa-agree-")
    files = [os.path.join(root, "CONTROL-%d" % node) for node in range(nodes)]
    stops = [os.path.join(root, "STOP-%d" % node) for node in range(nodes)]
    world = nodes * ranks_per_node
    group = FakeGroup(world)
    seen = [[] for _ in range(world)]
    stopped = [None] * world

    def before_step(i):
        for node, block, mode in writes.get(i, []):
            write_control(files[node], block, mode)
        for node in (stop_writes or {}).get(i, []):
            open(stops[node], "w").close()

    step = {"i": 0}

    def advance():
        step["i"] += 1
        before_step(step["i"])

    barrier = threading.Barrier(world, action=advance)
    before_step(0)

    def rank_main(rank):
        node = rank // ranks_per_node
        config = _recorder.Config(
            mode="synthetic",
            events_dir=root,
            stop_file=stops[node],
            rank=rank,
            world_size=world,
            node_rank=node,
            hostname="node%d" % node,
            control_file=files[node],
            nodes=nodes if nodes_env is None else nodes_env,
        )
        rec = _recorder.Recorder(config)
        rec.agree = group.agree_for(rank)
        for i in range(iterations):
            rec.iterations = i
            if stopped[rank] is None and rec.stop_reason() is not None:
                stopped[rank] = i
            asked = rec.switch_asked()
            if asked is not None:
                rec.switch(asked[0], asked[1], 0)
                seen[rank].append((i, asked[0], asked[1]))
            barrier.wait()

    threads = [threading.Thread(target=rank_main, args=(rank,)) for rank in range(world)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return seen, stopped, group


class SeveralNodes(unittest.TestCase):
    def test_the_switch_waits_for_the_slowest_node_and_every_rank_takes_it_at_one_iteration(self):
        # Node 0 has set its state for block 1 at iteration 5, node 1 only at 25: the looks at 10 and 20 hold.
        seen, _, _ = run_ranks(2, 2, {5: [(0, 1, "cached")], 25: [(1, 1, "cached")]})
        self.assertEqual(seen, [[(30, 1, "cached")]] * 4)

    def test_blocks_follow_one_another_each_at_the_slowest_node(self):
        writes = {3: [(1, 1, "cached")], 14: [(0, 1, "cached")], 31: [(0, 2, "cold")], 48: [(1, 2, "cold")]}
        seen, _, _ = run_ranks(2, 1, writes)
        self.assertEqual(seen, [[(20, 1, "cached"), (50, 2, "cold")]] * 2)

    def test_a_node_without_a_control_file_yet_holds_every_rank(self):
        seen, _, _ = run_ranks(3, 1, {1: [(0, 1, "cold"), (1, 1, "cold")]}, iterations=40)
        self.assertEqual(seen, [[]] * 3)

    def test_one_node_seeing_the_stop_file_stops_every_rank_at_one_iteration(self):
        _, stopped, _ = run_ranks(2, 2, {}, iterations=40, stop_writes={12: [1]})
        self.assertEqual(stopped, [20] * 4)

    def test_one_collective_a_look_carries_the_stop_and_the_negated_block(self):
        _, _, group = run_ranks(2, 1, {5: [(0, 1, "cached")]}, iterations=11)
        # Looks at 0 and 10; at 10 node 0 asks for block 1, node 1 still at block 0.
        self.assertEqual(group.calls, [[[0, 0], [0, 0]], [[0, -1], [0, 0]]])

    def test_separate_files_under_the_one_node_rule_would_switch_the_nodes_apart(self):
        # What the MIN guards against: with the newest block any rank saw (one node's rule), node 1's
        # ranks are pulled to a block their profiler has not prepared, and cannot read it.
        seen, _, _ = run_ranks(2, 1, {5: [(0, 1, "cached")]}, iterations=11, nodes_env=1)
        self.assertEqual(seen, [[(10, 1, "cached")], []])


class OneNode(unittest.TestCase):
    def test_the_newest_block_any_rank_saw_as_before(self):
        seen, _, group = run_ranks(1, 3, {5: [(0, 1, "cold")]}, iterations=21)
        self.assertEqual(seen, [[(10, 1, "cold")]] * 3)
        self.assertEqual(group.calls[1], [[0, 1]] * 3)

    def test_agree_look_takes_the_newest_block_on_one_node_and_the_oldest_on_several(self):
        # This rank saw block 3; two others sent (stop 0, block 2) and (stop 1, block 1), each by the same rule.
        def with_others(sent):
            return lambda values: [max(column) for column in zip(values, *sent)]

        self.assertEqual(_recorder.agree_look(with_others([[0, 2], [1, 1]]), 0, 3, 1), (1, 3))
        self.assertEqual(_recorder.agree_look(with_others([[0, -2], [1, -1]]), 0, 3, 2), (1, 1))


class StartEvent(unittest.TestCase):
    def start_fields(self, nodes, agree=None):
        root = temp_dir("dsa-agree-start-")
        config = _recorder.Config(
            mode="synthetic", events_dir=root, control_file=os.path.join(root, "CONTROL"), nodes=nodes
        )
        rec = _recorder.Recorder(config)
        rec.agree = agree
        rec.start()
        rec.end("budget")
        (name,) = [n for n in os.listdir(root) if n.startswith("events-")]
        with open(os.path.join(root, name)) as f:
            return json.loads(f.readline())

    def test_one_node_offers_to_switch(self):
        self.assertTrue(self.start_fields(1).get("switchModes"))

    def test_several_nodes_without_torch_distributed_do_not(self):
        # No collective to wait for the other nodes' profilers (no torch.distributed, or the manual API):
        # a launch a block.
        self.assertNotIn("switchModes", self.start_fields(2))

    def test_several_nodes_with_a_collective_do(self):
        self.assertTrue(self.start_fields(2, agree=lambda values: values).get("switchModes"))


if __name__ == "__main__":
    unittest.main()
