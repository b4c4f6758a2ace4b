"""Checkpoint saves: timed and sized without a code change, never overwriting the user's files in the synthetic mode.

Each test runs a job in a fresh interpreter with the hook on PYTHONPATH. Lightning, Hugging Face and
torch.distributed.checkpoint are absent from Debian's torch 1.13: fakes with their signatures stand in
(written as packages the job imports, so the import hook itself is exercised, or a module patched the way
the hook patches it).
"""

import os
import unittest

from helpers import HAVE_TORCH, NEEDS_TORCH, iters, run_script

LOOP = r'''
import os, sys, time
import torch
from torch.utils.data import DataLoader, TensorDataset

model = torch.nn.Linear(4, 2)
train = DataLoader(TensorDataset(torch.randn(20, 4), torch.randint(0, 2, (20,))), batch_size=4)

def epochs(n, in_step=None, between=None):
    for epoch in range(n):
        for k, (x, y) in enumerate(train):
            model(x).sum().backward()
            if k == 2 and in_step:
                in_step(epoch)
        if between:
            between(epoch)
'''

# A package on a temporary path, imported by the job: the import hook patches it as it would the real one.
FAKE_PACKAGES = r'''
import tempfile
fake_root = tempfile.mkdtemp(prefix="dsa-fake-")
def fake_package(files):
    for name, text in files.items():
        path = os.path.join(fake_root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    if fake_root not in sys.path:
        sys.path.insert(0, fake_root)
'''


def checkpoints(events):
    return [e for e in events if e["type"] == "checkpoint"]


def only_file(events):
    assert len(events) == 1, "expected one events file, got %s" % list(events)
    return list(events.values())[0]


def scratch_left(folder):
    return [name for _, _, names in os.walk(folder) for name in names if "dsa-synthetic" in name]


@unittest.skipUnless(HAVE_TORCH, NEEDS_TORCH)
class TorchSaveTest(unittest.TestCase):
    def test_cached_mode_saves_for_real_and_says_when_the_save_ran_inside_a_step(self):
        proc, events = run_script(LOOP + r'''
epochs(2, in_step=lambda e: torch.save(model.state_dict(), "step-%d.pt" % e),
       between=lambda e: torch.save({"model": model.state_dict(), "blob": torch.zeros(10000)}, "epoch-%d.pt" % e))
''', mode="cached")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        ev = only_file(events)
        saves = checkpoints(ev)
        self.assertEqual([(s["i"], s["inStep"]) for s in saves], [(2, True), (5, False), (7, True), (10, False)])
        for save, name in zip(saves, ["step-0.pt", "epoch-0.pt", "step-1.pt", "epoch-1.pt"]):
            path = os.path.join(proc.job_dir, name)
            self.assertTrue(os.path.exists(path), name)
            self.assertEqual(save["bytes"], os.path.getsize(path))
            self.assertEqual((save["api"], save["persisted"], save["syncMs"]), ("torch.save", True, 0.0))
            self.assertNotIn("note", save)
            self.assertGreater(save["blockingMs"], 0)
        self.assertGreater(saves[1]["bytes"], 40000)  # the 10000 floats
        # Iterations are untouched: the in-step saves are inside their iterations' computeMs.
        self.assertEqual(len(iters(ev)), 10)
        self.assertEqual(ev[-1]["type"], "end")

    def test_synthetic_mode_writes_a_scratch_file_beside_the_target_and_leaves_the_users_file_alone(self):
        proc, events = run_script(LOOP + r'''
from pathlib import Path
os.makedirs("ckpt")
with open("ckpt/last.pt", "wb") as f:
    f.write(b"the user's real checkpoint")
epochs(2, between=lambda e: torch.save(model.state_dict(), Path("ckpt/last.pt")))
torch.save(model.state_dict(), "ckpt/new.pt")
print(sorted(os.listdir("ckpt")))
''', mode="synthetic")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(os.path.join(proc.job_dir, "ckpt", "last.pt"), "rb") as f:
            self.assertEqual(f.read(), b"the user's real checkpoint")
        self.assertEqual(proc.stdout.strip(), "['last.pt']", "no new file, no scratch left")
        saves = checkpoints(only_file(events))
        self.assertEqual(len(saves), 3)
        for save in saves:
            self.assertEqual((save["api"], save["persisted"], save["note"]), ("torch.save", False, "scratch"))
            self.assertGreater(save["bytes"], 500)  # the scratch file was measured before it went

    def test_synthetic_mode_times_a_save_to_an_open_file_for_real_and_warns_once(self):
        proc, events = run_script(LOOP + r'''
import io
def save(e):
    with open("model-%d.pt" % e, "wb") as f:
        torch.save(model.state_dict(), f)
epochs(2, between=save)
buffer = io.BytesIO()
buffer.write(b"header")
torch.save(model.state_dict(), buffer)
''', mode="synthetic")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        saves = checkpoints(only_file(events))
        self.assertEqual(len(saves), 3)
        for save in saves:
            self.assertEqual((save["persisted"], save["note"]), (True, "open-file"))
        self.assertEqual(saves[0]["bytes"], os.path.getsize(os.path.join(proc.job_dir, "model-0.pt")))
        self.assertGreater(saves[2]["bytes"], 500)  # the position moved from after the header
        self.assertEqual(proc.stderr.count("open file object"), 1, proc.stderr)

    def test_a_save_that_fsyncs_reports_its_sync_time(self):
        proc, events = run_script(LOOP + r'''
class DurableFile(object):          # a stream that forces each write to storage, inside torch.save
    def __init__(self, path):
        self.f = open(path, "wb")
    def write(self, data):
        n = self.f.write(data)
        self.f.flush()
        os.fsync(self.f.fileno())
        return n
    def flush(self):
        self.f.flush()
    def tell(self):
        return self.f.tell()
def durable(e):
    stream = DurableFile("model.pt")
    torch.save(model.state_dict(), stream)
    os.fdatasync(stream.f.fileno())    # after the save returned: not its time
epochs(1, between=durable)
''', mode="cached")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        (save,) = checkpoints(only_file(events))
        self.assertGreater(save["syncMs"], 0)
        self.assertLessEqual(save["syncMs"], save["blockingMs"])
        self.assertEqual(save["bytes"], os.path.getsize(os.path.join(proc.job_dir, "model.pt")))

    def test_a_checkpoint_before_the_first_batch_comes_after_the_start_event(self):
        proc, events = run_script(LOOP + r'''
torch.save(model.state_dict(), "init.pt")
epochs(1)
''', mode="cold")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        ev = only_file(events)
        self.assertEqual([e["type"] for e in ev[:3]], ["start", "checkpoint", "epoch"])
        self.assertEqual((ev[1]["i"], ev[1]["inStep"], ev[1]["rank"]), (0, False, 0))


@unittest.skipUnless(HAVE_TORCH, NEEDS_TORCH)
class FrameworkSaveTest(unittest.TestCase):
    LIGHTNING = LOOP + FAKE_PACKAGES + r'''
trainer_source = """
import torch
class Trainer(object):
    def save_checkpoint(self, filepath, weights_only=False, storage_options=None):
        torch.save({"state_dict": {"w": torch.zeros(1000)}}, filepath)   # Lightning's checkpoint IO, inside
"""
fake_package({"lightning/__init__.py": "", "lightning/pytorch/__init__.py": trainer_source,
              "pytorch_lightning/__init__.py": trainer_source})
import lightning.pytorch as L
import pytorch_lightning as PL
os.makedirs("ckpts")
with open("ckpts/epoch=0.ckpt", "w") as f:
    f.write("from an earlier run")
epochs(1, between=lambda e: L.Trainer().save_checkpoint("ckpts/epoch=0.ckpt"))
PL.Trainer().save_checkpoint(filepath="ckpts/last.ckpt")
print(sorted(os.listdir("ckpts")))
'''

    def test_a_lightning_save_is_one_event_whatever_it_calls_inside(self):
        for mode in ("cached", "synthetic"):
            proc, events = run_script(self.LIGHTNING, mode=mode)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            saves = checkpoints(only_file(events))
            self.assertEqual([s["api"] for s in saves], ["lightning", "lightning"], mode)
            self.assertTrue(all(s["bytes"] > 4000 for s in saves), saves)
            folder = os.path.join(proc.job_dir, "ckpts")
            with open(os.path.join(folder, "epoch=0.ckpt"), "rb") as f:
                earlier = f.read() == b"from an earlier run"
            if mode == "synthetic":
                self.assertTrue(earlier, "the synthetic mode overwrote a checkpoint")
                self.assertEqual(proc.stdout.strip(), "['epoch=0.ckpt']")
                self.assertTrue(all(not s["persisted"] and s["note"] == "scratch" for s in saves))
            else:
                self.assertFalse(earlier)
                self.assertEqual(proc.stdout.strip(), "['epoch=0.ckpt', 'last.ckpt']")
                self.assertEqual(saves[1]["bytes"], os.path.getsize(os.path.join(folder, "last.ckpt")))

    HF = LOOP + FAKE_PACKAGES + r'''
trainer_source = """
import os, types, torch
class Trainer(object):
    def __init__(self, output_dir):
        self.args = types.SimpleNamespace(output_dir=output_dir)
        self.state = types.SimpleNamespace(global_step=0, best_model_checkpoint=None)
    def _save_checkpoint(self, model, trial, metrics=None):
        folder = os.path.join(self.args.output_dir, "checkpoint-%d" % self.state.global_step)
        os.makedirs(folder, exist_ok=True)
        torch.save(model.state_dict(), os.path.join(folder, "pytorch_model.bin"))
        torch.save({"lr": torch.zeros(2000)}, os.path.join(folder, "optimizer.pt"))
        self.state.best_model_checkpoint = folder
"""
fake_package({"transformers/__init__.py": "", "transformers/trainer.py": trainer_source})
from transformers.trainer import Trainer
os.makedirs("out/checkpoint-1")
with open("out/checkpoint-1/optimizer.pt", "wb") as f:
    f.write(b"x" * 100000)                       # an older checkpoint: not this save's bytes
os.utime("out/checkpoint-1/optimizer.pt", (time.time() - 600, time.time() - 600))
trainer = Trainer("out")
trainer.state.best_model_checkpoint = "out/checkpoint-1"
def save(e):
    trainer.state.global_step = 5 * (e + 1)
    trainer._save_checkpoint(model, None)
epochs(1, between=save)
print(trainer.args.output_dir, trainer.state.best_model_checkpoint, sorted(os.listdir("out")))
'''

    def test_hugging_face_checkpoints_go_to_a_scratch_output_dir_in_the_synthetic_mode(self):
        proc, events = run_script(self.HF, mode="synthetic")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.split(), ["out", "out/checkpoint-1", "['checkpoint-1']"])
        (save,) = checkpoints(only_file(events))
        self.assertEqual((save["api"], save["persisted"], save["note"]), ("hf-trainer", False, "scratch"))
        self.assertTrue(8000 < save["bytes"] < 100000, save)
        self.assertEqual(scratch_left(proc.job_dir), [])

    def test_hugging_face_checkpoints_are_sized_from_the_files_the_save_wrote(self):
        proc, events = run_script(self.HF, mode="cached")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        folder = os.path.join(proc.job_dir, "out", "checkpoint-5")
        (save,) = checkpoints(only_file(events))
        self.assertEqual(save["bytes"], sum(os.path.getsize(os.path.join(folder, n)) for n in os.listdir(folder)))
        self.assertEqual((save["api"], save["persisted"]), ("hf-trainer", True))

    def test_a_failure_inside_the_instrumentation_runs_the_original_save(self):
        proc, events = run_script(LOOP + FAKE_PACKAGES + r'''
fake_package({"transformers/__init__.py": "", "transformers/trainer.py": """
class Trainer(object):
    args = None                                   # no output_dir: the hook cannot prepare the save
    def _save_checkpoint(self, model, trial, metrics=None):
        print("saved by the original")
"""})
from transformers.trainer import Trainer
epochs(1, between=lambda e: Trainer()._save_checkpoint(model, None))
''', mode="synthetic")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.strip(), "saved by the original")
        self.assertEqual(len([line for line in proc.stderr.splitlines() if "could not time a checkpoint" in line]), 1, proc.stderr)
        self.assertEqual(checkpoints(only_file(events)), [])


# torch.distributed.checkpoint is not in torch 1.13: a fake with the signatures of torch 2.x
# (save/async_save with checkpoint_id or a FileSystemWriter; fsync of each file as FileSystemWriter
# does; async_save writing in a thread), patched by the hook's own callback.
FAKE_DCP = r'''
import types, pathlib, concurrent.futures
from ds_analyzer import _auto

class FileSystemWriter(object):
    def __init__(self, path):
        self.path = pathlib.Path(path)

def _write(state_dict, folder):
    os.makedirs(folder, exist_ok=True)
    for name in ("__0_0.distcp", ".metadata"):
        with open(os.path.join(folder, name), "wb") as f:
            torch.save(state_dict, f)             # DCP writes tensors with torch.save into its stream
            f.flush()
            os.fsync(f.fileno())

def save(state_dict, *, checkpoint_id=None, storage_writer=None, planner=None, process_group=None, no_dist=False):
    _write(state_dict, str(checkpoint_id) if checkpoint_id is not None else str(storage_writer.path))

executor = concurrent.futures.ThreadPoolExecutor(1)
def async_save(state_dict, *, checkpoint_id=None, storage_writer=None, planner=None, process_group=None):
    staged = {k: v.clone() for k, v in state_dict.items()}
    def background():
        time.sleep(0.2)
        save(staged, checkpoint_id=checkpoint_id, storage_writer=storage_writer)
    return executor.submit(background)

dcp = types.ModuleType("torch.distributed.checkpoint")
dcp.save, dcp.async_save, dcp.FileSystemWriter = save, async_save, FileSystemWriter
_auto.on_dcp_loaded(dcp)
'''


@unittest.skipUnless(HAVE_TORCH, NEEDS_TORCH)
class DistributedCheckpointTest(unittest.TestCase):
    def test_dcp_save_sizes_the_folder_and_counts_its_fsyncs(self):
        proc, events = run_script(LOOP + FAKE_DCP + r'''
epochs(1, between=lambda e: dcp.save(model.state_dict(), checkpoint_id="dcp/step-5"))
''', mode="cached")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        (save,) = checkpoints(only_file(events))
        folder = os.path.join(proc.job_dir, "dcp", "step-5")
        self.assertEqual(save["bytes"], sum(os.path.getsize(os.path.join(folder, n)) for n in os.listdir(folder)))
        self.assertEqual((save["api"], save["persisted"]), ("dcp.save", True))
        self.assertGreater(save["syncMs"], 0)

    def test_dcp_save_with_a_writer_is_diverted_and_the_writer_put_back_in_the_synthetic_mode(self):
        proc, events = run_script(LOOP + FAKE_DCP + r'''
writer = FileSystemWriter("dcp/step")
epochs(1, between=lambda e: dcp.save(model.state_dict(), storage_writer=writer))
print(writer.path, os.path.exists("dcp"))
''', mode="synthetic")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.split(), ["dcp/step", "True"])  # only the parent the scratch sat in
        self.assertEqual(os.listdir(os.path.join(proc.job_dir, "dcp")), [])
        (save,) = checkpoints(only_file(events))
        self.assertEqual((save["persisted"], save["note"]), (False, "scratch"))
        self.assertGreater(save["bytes"], 500)

    def test_async_save_writes_its_event_when_the_background_write_ends(self):
        proc, events = run_script(LOOP + FAKE_DCP + r'''
futures = []
epochs(2, in_step=lambda e: futures.append(dcp.async_save(model.state_dict(), checkpoint_id="dcp/%d" % e)))
for f in futures:
    f.result()
time.sleep(0.1)
''', mode="synthetic")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        saves = checkpoints(only_file(events))
        # The torch.save calls of the background write are part of it, not events of their own.
        self.assertEqual([(s["api"], s["i"], s["inStep"]) for s in saves], [("dcp.async_save", 2, True), ("dcp.async_save", 7, True)])
        for save in saves:
            self.assertLess(save["blockingMs"], 150)
            self.assertGreaterEqual(save["writeMs"], 200)
            self.assertGreater(save["bytes"], 500)
            self.assertEqual(save["syncMs"], 0, "the background write's fsyncs are not blocking time")
        self.assertEqual(os.listdir(os.path.join(proc.job_dir, "dcp")), [], "scratch folders removed after each write")

    def test_an_async_save_still_running_at_exit_is_written_with_no_write_time(self):
        proc, events = run_script(LOOP + FAKE_DCP + r'''
import concurrent.futures
never = concurrent.futures.Future()              # a write that never reports back
from ds_analyzer import _checkpoint
stuck = _checkpoint._timed_async("dcp.async_save", lambda *a, **k: never, _checkpoint._prepare_dcp)
epochs(1, between=lambda e: stuck(model.state_dict(), checkpoint_id="dcp/x"))
''', mode="cached")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        ev = only_file(events)
        (save,) = checkpoints(ev)
        self.assertIsNone(save["writeMs"])
        self.assertEqual(ev[-1]["type"], "end")


class ManualCheckpointTest(unittest.TestCase):
    def test_a_manual_checkpoint_block_is_one_save_sized_from_its_path(self):
        proc, events = run_script(r'''
import os
import ds_analyzer
for batch in ds_analyzer.iterate([[1, 2]] * 6, samples=len):
    with ds_analyzer.checkpoint("state"):
        os.makedirs("state", exist_ok=True)
        with open("state/part-0", "wb") as f:
            f.write(b"x" * 3000)
            f.flush()
            os.fsync(f.fileno())
    break
with ds_analyzer.checkpoint():
    pass
''', mode="cached")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        saves = checkpoints(only_file(events))
        self.assertEqual(len(saves), 2)
        self.assertEqual((saves[0]["api"], saves[0]["bytes"], saves[0]["persisted"], saves[0]["inStep"]), ("manual", 3000, True, True))
        self.assertGreater(saves[0]["syncMs"], 0)
        self.assertEqual((saves[1]["bytes"], saves[1]["inStep"]), (None, False))

    def test_outside_a_profiled_run_checkpoint_does_nothing(self):
        proc, events = run_script(r'''
import ds_analyzer
with ds_analyzer.checkpoint("x"):
    print("ran")
''', mode=None)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.strip(), "ran")
        self.assertEqual(events, {})


if __name__ == "__main__":
    unittest.main()
