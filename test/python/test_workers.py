"""profile --workers: DSA_NUM_WORKERS reaches the training loader at iterator
creation (DataLoader, a subclass, a loader built anew each epoch), and leaves
other loaders alone. Each test runs a real PyTorch job (helpers.run_script)."""

import json
import unittest

from helpers import HAVE_TORCH, NEEDS_TORCH, iters, run_script

# Each sample carries the pid of the process that built it: the main process
# (num_workers=0) or one of the loader's worker processes.
PRELUDE = r'''
import json, os, sys
import torch
from torch.utils.data import DataLoader, Dataset

class Pids(Dataset):
    def __len__(self):
        return 32
    def __getitem__(self, i):
        return torch.zeros(4), os.getpid()

model = torch.nn.Linear(4, 2)
def step(x):
    model(x).sum().backward()

def worker_pids(batches):
    """pids that built the batches, other than this process."""
    return sorted({int(p) for b in batches for p in b[1]} - {os.getpid()})
'''


def start_of(events):
    assert len(events) == 1, list(events)
    return list(events.values())[0][0]


def report(proc):
    """The job's last stdout line, a JSON object."""
    return json.loads(proc.stdout.strip().splitlines()[-1])


@unittest.skipUnless(HAVE_TORCH, NEEDS_TORCH)
class WorkersOverrideTest(unittest.TestCase):
    def test_a_loader_without_workers_gets_the_asked_count_and_the_start_event_says_so(self):
        proc, events = run_script(
            PRELUDE
            + r"""
loader = DataLoader(Pids(), batch_size=4, num_workers=0)
seen = []
for batch in loader:
    step(batch[0]); seen.append(batch)
print(json.dumps({"pids": worker_pids(seen), "num_workers": loader.num_workers}))
""",
            extra_env={"DSA_NUM_WORKERS": "2"},
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out = report(proc)
        self.assertEqual(len(out["pids"]), 2, "two worker processes built the batches")
        start = start_of(events)
        self.assertEqual(start["workers"], 2)
        self.assertEqual(start["loader"]["workers"], 2)
        self.assertEqual(start["loader"]["scriptWorkers"], 0)
        self.assertEqual(start["loader"]["prefetchFactor"], 2)
        self.assertIs(start["loader"]["pinMemory"], False)

    def test_a_subclass_overriding_iter_and_a_validation_loader(self):
        proc, events = run_script(
            PRELUDE
            + r"""
class Wrapped(DataLoader):          # as Lightning and Accelerate wrap theirs
    def __iter__(self):
        for batch in super().__iter__():
            yield batch

train = Wrapped(Pids(), batch_size=4, num_workers=2, persistent_workers=True)
val = DataLoader(Pids(), batch_size=8, num_workers=2)
seen, val_seen = [], []
for epoch in range(2):
    for batch in train:
        step(batch[0]); seen.append(batch)
    with torch.no_grad():
        for batch in val:
            val_seen.append(batch)
print(json.dumps({"train": worker_pids(seen), "val": worker_pids(val_seen)}))
""",
            extra_env={"DSA_NUM_WORKERS": "1"},
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out = report(proc)
        self.assertEqual(len(out["train"]), 1, "the training loader ran one (persistent) worker in both epochs")
        self.assertEqual(len(out["val"]), 4, "the validation loader kept its two workers per epoch")
        start = start_of(events)
        self.assertEqual((start["workers"], start["loader"]["scriptWorkers"]), (1, 2))
        self.assertIs(start["loader"]["persistentWorkers"], True)

    def test_a_loader_built_anew_each_epoch_is_overridden_every_time(self):
        proc, events = run_script(
            PRELUDE
            + r"""
dataset = Pids()
per_epoch = []
for epoch in range(3):
    loader = DataLoader(dataset, batch_size=4, shuffle=True, num_workers=1)
    seen = []
    for batch in loader:
        step(batch[0]); seen.append(batch)
    per_epoch.append(len(worker_pids(seen)))
print(json.dumps({"per_epoch": per_epoch}))
""",
            extra_env={"DSA_NUM_WORKERS": "3"},
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(report(proc)["per_epoch"], [3, 3, 3])
        self.assertEqual(len(iters(list(events.values())[0])), 24)

    def test_zero_workers_loads_in_the_main_process_and_without_the_variable_nothing_changes(self):
        script = (
            PRELUDE
            + r"""
loader = DataLoader(Pids(), batch_size=4, num_workers=2)
seen = []
for batch in loader:
    step(batch[0]); seen.append(batch)
print(json.dumps({"pids": worker_pids(seen)}))
"""
        )
        proc, events = run_script(script, extra_env={"DSA_NUM_WORKERS": "0"})
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(report(proc)["pids"], [])
        self.assertEqual((start_of(events)["workers"], start_of(events)["loader"]["scriptWorkers"]), (0, 2))
        self.assertNotIn("prefetchFactor", start_of(events)["loader"])

        proc, events = run_script(script)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(len(report(proc)["pids"]), 2)
        self.assertNotIn("scriptWorkers", start_of(events)["loader"])

    def test_iterations_carry_the_main_process_cpu_time(self):
        proc, events = run_script(
            PRELUDE
            + r"""
import time
loader = DataLoader(Pids(), batch_size=4, num_workers=0)
for batch in loader:
    step(batch[0])
    end = time.process_time() + 0.01     # 10 ms of CPU in the main process per step
    while time.process_time() < end:
        pass
"""
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        cpu = [e["processCpuMs"] for e in iters(list(events.values())[0])]
        self.assertEqual(len(cpu), 8)
        steps = [b - a for a, b in zip(cpu, cpu[1:])]
        self.assertTrue(all(s >= 9.5 for s in steps), steps)


if __name__ == "__main__":
    unittest.main()
