"""DataLoader instrumentation: each test runs a real PyTorch job with the hook on
PYTHONPATH (helpers.run_script; the first test in a fresh interpreter, exactly as
`ds-analyzer profile` does)."""

import os
import tempfile
import unittest

from helpers import HAVE_TORCH, NEEDS_TORCH, iters, run_script

# A job skeleton: a counting dataset (how often the loader was consulted, across
# worker processes), a tiny model, and a training loop with gradients on.
PRELUDE = r"""
import os, sys, time, multiprocessing
import torch
from torch.utils.data import DataLoader, Dataset

class Counting(Dataset):
    def __init__(self, n, counter):
        self.n, self.counter = n, counter
    def __len__(self):
        return self.n
    def __getitem__(self, i):
        with self.counter.get_lock():
            self.counter.value += 1
        return torch.full((4,), float(i)), i % 2

counter = multiprocessing.Value("i", 0)
model = torch.nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.01)

def step(x, y):
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
"""


def only_file(events):
    assert len(events) == 1, f"expected one events file (no worker may write), got {list(events)}"
    return list(events.values())[0]


@unittest.skipUnless(HAVE_TORCH, NEEDS_TORCH)
class DataLoaderTest(unittest.TestCase):
    def test_subclass_loader_is_timed_per_iteration_and_validation_is_not_counted(self):
        proc, events = run_script(
            PRELUDE
            + r"""
class MyLoader(DataLoader):          # a subclass overriding __iter__, as wrappers do
    def __iter__(self):
        for batch in super().__iter__():
            yield batch

train = MyLoader(Counting(40, counter), batch_size=8, shuffle=True, num_workers=2)
val = DataLoader(Counting(24, counter), batch_size=8)
for epoch in range(2):
    for x, y in train:
        step(x, y)
        time.sleep(0.005)
        if epoch == 1:                      # a validation pass nested inside training
            with torch.no_grad():
                for vx, vy in val:
                    model(vx)
    with torch.no_grad():                   # the usual validation pass
        for vx, vy in val:
            model(vx)
print("done")
""",
            mode="cached",
            fresh=True,  # DataLoader patched by the import hook, as under the CLI
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("done", proc.stdout)
        ev = only_file(events)
        start = ev[0]
        self.assertEqual((start["type"], start["mode"], start["source"]), ("start", "cached", "pytorch"))
        self.assertEqual((start["batchSize"], start["workers"], start["rank"], start["worldSize"]), (8, 2, 0, 1))
        it = iters(ev)
        self.assertEqual(len(it), 10)  # 2 epochs x 5 training batches; 3 x val batches never counted
        self.assertEqual([e["i"] for e in it], list(range(10)))
        self.assertTrue(all(e["samples"] == 8 for e in it))
        self.assertTrue(all(e["computeMs"] >= 4.5 for e in it), [e["computeMs"] for e in it])
        self.assertEqual(ev[-1]["type"], "end")
        self.assertEqual((ev[-1]["reason"], ev[-1]["iterations"]), ("exhausted", 10))

    def test_synthetic_replays_the_first_batch_and_never_consults_the_loader_again(self):
        for workers in (0, 2):
            proc, events = run_script(
                PRELUDE
                + r"""
train = DataLoader(Counting(20, counter), batch_size=4, shuffle=True, num_workers=%d, persistent_workers=%s)
seen = []
after_first = None
for epoch in range(3):                  # a loader smaller than the budget: several epochs
    for k, (x, y) in enumerate(train):
        if after_first is None:
            time.sleep(0.3)             # let the workers prefetch what they will
            after_first = counter.value
        seen.append(float(x.sum()))
        step(x, y)
print("consulted", after_first, counter.value, "distinct", len(set(seen)), "batches", len(seen))
"""
                % (workers, workers > 0),
                mode="synthetic",
                iterations=1000,
            )
            self.assertEqual(proc.returncode, 0, proc.stderr)
            words = proc.stdout.split()
            first, final, distinct, batches = int(words[1]), int(words[2]), int(words[4]), int(words[6])
            self.assertEqual(final, first, "the dataset was read after the first batch (workers=%d)" % workers)
            if workers == 0:
                self.assertEqual(first, 4)
            self.assertEqual(distinct, 1)  # the same batch every time
            self.assertEqual(batches, 15)  # epoch lengths kept: 3 x 5
            ev = only_file(events)
            self.assertEqual(ev[-1]["reason"], "exhausted")
            self.assertEqual(len(iters(ev)), 15)

    def test_budget_ends_cleanly_with_exit_0_and_no_worker_left(self):
        proc, events = run_script(
            PRELUDE
            + r"""
def record_worker(_):
    with open("workers.txt", "a") as f:
        f.write("%d\n" % os.getpid())

train = DataLoader(Counting(64, counter), batch_size=4, shuffle=True, num_workers=2, worker_init_fn=record_worker)
try:
    for epoch in range(100):
        for x, y in train:
            try:
                step(x, y)
            except Exception:           # a script that swallows errors must still stop
                pass
    print("loop ended by itself")
finally:
    print("finally ran")
""",
            mode="cold",
            iterations=23,
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertNotIn("loop ended by itself", proc.stdout)
        self.assertIn("finally ran", proc.stdout)
        ev = only_file(events)
        self.assertEqual(len(iters(ev)), 23)
        self.assertEqual((ev[-1]["type"], ev[-1]["reason"], ev[-1]["iterations"]), ("end", "budget", 23))
        with open(os.path.join(proc.job_dir, "workers.txt")) as f:
            pids = [int(line) for line in f if line.strip()]
        self.assertGreaterEqual(len(pids), 2)  # two per epoch: workers are not persistent
        for pid in pids:
            self.assertFalse(_alive(pid), "DataLoader worker %d is still running" % pid)

    def test_persistent_workers_of_a_loop_that_ends_by_itself_shut_down_in_order_at_exit(self):
        # The profiler keeps the training loader; without care its persistent workers outlive the script into the
        # interpreter's teardown, where torch skips its orderly shutdown (on torch 2.11 a GPU job then took 40 s to
        # exit, 5 s per worker). A finalizer registered in each worker runs only when the worker ends in order.
        proc, events = run_script(
            PRELUDE
            + r"""
from multiprocessing import util

def say_clean():
    with open("clean.txt", "a") as f:
        f.write("%d\n" % os.getpid())

def record_worker(_):
    util.Finalize(None, say_clean, exitpriority=100)

def main():
    train = DataLoader(
        Counting(16, counter), batch_size=4, num_workers=2, persistent_workers=True, worker_init_fn=record_worker
    )
    for epoch in range(2):
        for x, y in train:
            step(x, y)
    print("loop ended by itself")

main()
""",
            mode="cached",
            iterations=1000,
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("loop ended by itself", proc.stdout)
        self.assertEqual(only_file(events)[-1]["reason"], "exhausted")
        clean = os.path.join(proc.job_dir, "clean.txt")
        self.assertTrue(
            os.path.exists(clean), "no worker ended in order: they were terminated at the interpreter's teardown"
        )
        with open(clean) as f:
            self.assertEqual(len([line for line in f if line.strip()]), 2)

    def test_stop_file_ends_the_job_at_an_iteration_boundary(self):
        stop = os.path.join(tempfile.mkdtemp(prefix="dsa-stop-"), "STOP")
        proc, events = run_script(
            PRELUDE
            + r"""
train = DataLoader(Counting(400, counter), batch_size=4, num_workers=0)
for i, (x, y) in enumerate(train):
    step(x, y)
    if i == 7:
        open(os.environ["DSA_STOP_FILE"], "w").close()
    time.sleep(0.01)
print("not reached")
""",
            mode="cached",
            iterations=1000,
            stop_file=stop,
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertNotIn("not reached", proc.stdout)
        ev = only_file(events)
        self.assertEqual(ev[-1]["reason"], "stop-file")
        # Checked at most every 100 ms: at 10 ms per step, within ~12 iterations.
        self.assertTrue(8 <= ev[-1]["iterations"] <= 22, ev[-1]["iterations"])

    def assert_training_loader(self, proc, events, batch_size, iterations):
        """The job ended cleanly and one file holds the training loader's batch size and iterations."""
        self.assertEqual(proc.returncode, 0, proc.stderr)
        ev = only_file(events)
        self.assertEqual(ev[0]["batchSize"], batch_size)
        self.assertEqual(len(iters(ev)), iterations)

    def test_first_loader_iterated_with_gradients_is_the_training_loader(self):
        # Validation first (as Lightning's sanity check does), under no_grad.
        proc, events = run_script(
            PRELUDE
            + r"""
val = DataLoader(Counting(12, counter), batch_size=4)
train = DataLoader(Counting(16, counter), batch_size=2, shuffle=True)
with torch.inference_mode():
    for vx, vy in val:
        model(vx)
for x, y in train:
    step(x, y)
""",
            mode="cached",
        )
        self.assert_training_loader(proc, events, batch_size=2, iterations=8)

    def test_explicit_training_loader_and_a_new_loader_per_epoch_over_the_same_dataset(self):
        proc, events = run_script(
            PRELUDE
            + r"""
import ds_analyzer
stats = DataLoader(Counting(8, counter), batch_size=8)      # iterated with grad on, but not training
ds = Counting(12, counter)
first = ds_analyzer.training_loader(DataLoader(ds, batch_size=3))
for x, y in stats:
    pass
for epoch in range(2):
    loader = first if epoch == 0 else DataLoader(ds, batch_size=3, shuffle=True)
    for x, y in loader:
        step(x, y)
""",
            mode="cached",
        )
        self.assert_training_loader(proc, events, batch_size=3, iterations=8)

    def test_cuda_sync_at_iteration_boundaries_with_a_fake_cuda(self):
        fake = r"""
calls = {"sync": 0}
torch.cuda.is_available = lambda: True
torch.cuda.is_initialized = lambda: True
def fake_sync(device=None):
    calls["sync"] += 1
torch.cuda.synchronize = fake_sync
train = DataLoader(Counting(20, counter), batch_size=4)
for x, y in train:
    step(x, y)
print("syncs", calls["sync"])
"""
        proc, events = run_script(PRELUDE + fake, mode="cached")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        # One at every next(): 5 batches, plus the call that ends the epoch.
        self.assertEqual(proc.stdout.split(), ["syncs", "6"])
        proc, _ = run_script(PRELUDE + fake, mode="cached", extra_env={"DSA_SYNC": "0"})
        self.assertEqual(proc.stdout.split(), ["syncs", "0"])

    def test_unprofiled_run_is_untouched(self):
        proc, events = run_script(
            PRELUDE
            + r"""
from torch.utils.data import dataloader
print(dataloader._BaseDataLoaderIter.__next__.__module__, hasattr(torch, "accelerator"))
for x, y in DataLoader(Counting(8, counter), batch_size=4):
    step(x, y)
""",
            mode=None,
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.split()[0], "torch.utils.data.dataloader")
        self.assertEqual(events, {})

    def test_accelerator_shim_only_when_profiling_and_missing(self):
        proc, _ = run_script(
            PRELUDE
            + r"""
print(torch.accelerator.is_available(), torch.accelerator.current_accelerator(), torch.accelerator.device_count())
""",
            mode="cached",
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        if "no torch.accelerator" in proc.stderr:
            self.assertEqual(proc.stdout.split(), ["False", "None", "0"])


def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


if __name__ == "__main__":
    unittest.main()
