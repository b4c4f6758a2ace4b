"""Checkpoint saves: timed and sized without a code change, never overwriting the user's files in the synthetic mode.

Each test runs a job with the hook on PYTHONPATH (helpers.run_script: forked from a process that imported torch
once, but for the tests marked fresh=True, which import torch through the hook as under the CLI). Lightning,
Hugging Face and torch.distributed.checkpoint are absent from Debian's torch 1.13: fakes with their signatures stand in
(written as packages the job imports, so the import hook itself is exercised, or a module patched the way
the hook patches it). The diversion logic case by case (the table of scratch paths, each file operation that
follows it, each API's target) is tested in this process, without torch, in test_diversions.py.
"""

import json
import os
import sys
import unittest

from helpers import HAVE_TORCH, NEEDS_TORCH, iters, run_script

LOOP = r"""
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
"""

# A package on a temporary path, imported by the job: the import hook patches it as it would the real one.
FAKE_PACKAGES = r"""
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
"""


def checkpoints(events):
    return [e for e in events if e["type"] == "checkpoint"]


def only_file(events):
    assert len(events) == 1, f"expected one events file, got {list(events)}"
    return list(events.values())[0]


def scratch_left(folder):
    return [name for _, _, names in os.walk(folder) for name in names if "dsa-scratch" in name]


@unittest.skipUnless(HAVE_TORCH, NEEDS_TORCH)
class TorchSaveTest(unittest.TestCase):
    def test_with_keep_outputs_the_cached_mode_saves_for_real_and_says_when_the_save_ran_inside_a_step(self):
        # run_script sets DSA_KEEP_OUTPUTS=1 (profile --keep-outputs) unless a test takes it away.
        proc, events = run_script(
            LOOP
            + r"""
epochs(2, in_step=lambda e: torch.save(model.state_dict(), "step-%d.pt" % e),
       between=lambda e: torch.save({"model": model.state_dict(), "blob": torch.zeros(10000)}, "epoch-%d.pt" % e))
""",
            mode="cached",
            fresh=True,  # torch.save patched by the import hook, as under the CLI
        )
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
        proc, events = run_script(
            LOOP
            + r"""
from pathlib import Path
os.makedirs("ckpt")
with open("ckpt/last.pt", "wb") as f:
    f.write(b"the user's real checkpoint")
epochs(2, between=lambda e: torch.save(model.state_dict(), Path("ckpt/last.pt")))
torch.save(model.state_dict(), "ckpt/new.pt")
print(sorted(os.listdir("ckpt")), os.getpid())
""",
            mode="synthetic",
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(os.path.join(proc.job_dir, "ckpt", "last.pt"), "rb") as f:
            self.assertEqual(f.read(), b"the user's real checkpoint")
        # While the job runs, one scratch per target (the second save to last.pt overwrote the first's).
        listing, pid = proc.stdout.strip().rsplit(" ", 1)
        self.assertEqual(listing, f"['.last.pt.dsa-scratch-{pid}', '.new.pt.dsa-scratch-{pid}', 'last.pt']")
        self.assertEqual(
            os.listdir(os.path.join(proc.job_dir, "ckpt")), ["last.pt"], "no new file, no scratch left at the exit"
        )
        saves = checkpoints(only_file(events))
        self.assertEqual(len(saves), 3)
        for save in saves:
            self.assertEqual((save["api"], save["persisted"], save["note"]), ("torch.save", False, "scratch"))
            self.assertGreater(save["bytes"], 500)  # the scratch file was measured before it went

    def test_by_default_a_real_mode_saves_to_scratch_files(self):
        # diverting()'s answer for every mode and flag: test_diversions.DivertingTest.
        proc, events = run_script(
            LOOP
            + r"""
os.makedirs("ckpt")
with open("ckpt/last.pt", "wb") as f:
    f.write(b"the user's real checkpoint")
epochs(2, between=lambda e: torch.save(model.state_dict(), "ckpt/last.pt"))
print(torch.load("ckpt/last.pt").keys())   # the script's own load follows its save
""",
            mode="cold",
            extra_env={"DSA_KEEP_OUTPUTS": None},
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("weight", proc.stdout)
        with open(os.path.join(proc.job_dir, "ckpt", "last.pt"), "rb") as f:
            self.assertEqual(f.read(), b"the user's real checkpoint")
        self.assertEqual(os.listdir(os.path.join(proc.job_dir, "ckpt")), ["last.pt"], "no scratch left at the exit")
        saves = checkpoints(only_file(events))
        self.assertEqual([(s["persisted"], s["note"]) for s in saves], [(False, "scratch")] * 2)

    def test_synthetic_mode_times_a_save_to_an_open_file_for_real_and_warns_once(self):
        proc, events = run_script(
            LOOP
            + r"""
import io
def save(e):
    with open("model-%d.pt" % e, "wb") as f:
        torch.save(model.state_dict(), f)
epochs(2, between=save)
buffer = io.BytesIO()
buffer.write(b"header")
torch.save(model.state_dict(), buffer)
""",
            mode="synthetic",
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        saves = checkpoints(only_file(events))
        self.assertEqual(len(saves), 3)
        for save in saves:
            self.assertEqual((save["persisted"], save["note"]), (True, "open-file"))
        self.assertEqual(saves[0]["bytes"], os.path.getsize(os.path.join(proc.job_dir, "model-0.pt")))
        self.assertGreater(saves[2]["bytes"], 500)  # the position moved from after the header
        self.assertEqual(proc.stderr.count("open file object"), 1, proc.stderr)

    def test_a_save_that_fsyncs_reports_its_sync_time(self):
        proc, events = run_script(
            LOOP
            + r"""
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
    os.fdatasync(stream.f.fileno())    # after the save, but the stream has no fileno(): the hook cannot tell its file
epochs(1, between=durable)
""",
            mode="cached",
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        (save,) = checkpoints(only_file(events))
        self.assertGreater(save["syncMs"], 0)
        self.assertLessEqual(save["syncMs"], save["blockingMs"])
        self.assertEqual(save["bytes"], os.path.getsize(os.path.join(proc.job_dir, "model.pt")))

    def test_a_checkpoint_before_the_first_batch_comes_after_the_start_event(self):
        proc, events = run_script(
            LOOP
            + r"""
torch.save(model.state_dict(), "init.pt")
epochs(1)
""",
            mode="cold",
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        ev = only_file(events)
        self.assertEqual([e["type"] for e in ev[:3]], ["start", "checkpoint", "epoch"])
        self.assertEqual((ev[1]["i"], ev[1]["inStep"], ev[1]["rank"]), (0, False, 0))


@unittest.skipUnless(HAVE_TORCH, NEEDS_TORCH)
class FrameworkSaveTest(unittest.TestCase):
    LIGHTNING = (
        LOOP
        + FAKE_PACKAGES
        + r'''
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
    )

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
                self.assertEqual([n for n in eval(proc.stdout) if "dsa-scratch" not in n], ["epoch=0.ckpt"])
                self.assertEqual(os.listdir(folder), ["epoch=0.ckpt"], "the scratch files go at the exit")
                self.assertTrue(all(not s["persisted"] and s["note"] == "scratch" for s in saves))
            else:
                self.assertFalse(earlier)
                self.assertEqual(proc.stdout.strip(), "['epoch=0.ckpt', 'last.ckpt']")
                self.assertEqual(saves[1]["bytes"], os.path.getsize(os.path.join(folder, "last.ckpt")))

    HF = (
        LOOP
        + FAKE_PACKAGES
        + r'''
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
if os.environ["DSA_MODE"] == "synthetic":   # what the save wrote stands in for out/checkpoint-5 until the exit
    from pathlib import Path
    print(Path("out/checkpoint-5").is_dir(), len(torch.load("out/checkpoint-5/pytorch_model.bin")),
          os.path.exists("out/checkpoint-1/optimizer.pt"), os.path.exists("out/checkpoint-6"))
'''
    )

    def test_hugging_face_checkpoints_go_to_a_scratch_output_dir_in_the_synthetic_mode(self):
        proc, events = run_script(self.HF, mode="synthetic")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(
            proc.stdout.split(), ["out", "out/checkpoint-1", "['checkpoint-1']", "True", "2", "True", "False"]
        )
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
        proc, events = run_script(
            LOOP
            + FAKE_PACKAGES
            + r'''
fake_package({"transformers/__init__.py": "", "transformers/trainer.py": """
class Trainer(object):
    args = None                                   # no output_dir: the hook cannot prepare the save
    def _save_checkpoint(self, model, trial, metrics=None):
        print("saved by the original")
"""})
from transformers.trainer import Trainer
epochs(1, between=lambda e: Trainer()._save_checkpoint(model, None))
''',
            mode="synthetic",
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.strip(), "saved by the original")
        self.assertEqual(
            len([line for line in proc.stderr.splitlines() if "could not time a checkpoint" in line]), 1, proc.stderr
        )
        self.assertEqual(checkpoints(only_file(events)), [])


# torch.distributed.checkpoint is not in torch 1.13: a fake with the signatures of torch 2.x
# (save/async_save with checkpoint_id or a FileSystemWriter; fsync of each file as FileSystemWriter
# does; async_save writing in a thread), patched by the hook's own callback.
FAKE_DCP = r"""
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
"""


@unittest.skipUnless(HAVE_TORCH, NEEDS_TORCH)
class DistributedCheckpointTest(unittest.TestCase):
    def test_dcp_save_sizes_the_folder_and_counts_its_fsyncs(self):
        proc, events = run_script(
            LOOP
            + FAKE_DCP
            + r"""
epochs(1, between=lambda e: dcp.save(model.state_dict(), checkpoint_id="dcp/step-5"))
""",
            mode="cached",
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        (save,) = checkpoints(only_file(events))
        folder = os.path.join(proc.job_dir, "dcp", "step-5")
        self.assertEqual(save["bytes"], sum(os.path.getsize(os.path.join(folder, n)) for n in os.listdir(folder)))
        self.assertEqual((save["api"], save["persisted"]), ("dcp.save", True))
        self.assertGreater(save["syncMs"], 0)

    def test_dcp_save_with_a_writer_is_diverted_and_the_writer_put_back_in_the_synthetic_mode(self):
        proc, events = run_script(
            LOOP
            + FAKE_DCP
            + r"""
writer = FileSystemWriter("dcp/step")
epochs(1, between=lambda e: dcp.save(model.state_dict(), storage_writer=writer))
print(writer.path, os.path.exists("dcp"))
# The scratch folder stands in for the checkpoint folder and its files until the exit.
print(os.path.isdir("dcp/step"), os.path.isfile("dcp/step/.metadata"), len(torch.load("dcp/step/__0_0.distcp")))
""",
            mode="synthetic",
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(
            proc.stdout.split(), ["dcp/step", "True", "True", "True", "2"]
        )  # only the parent the scratch sat in
        self.assertEqual(os.listdir(os.path.join(proc.job_dir, "dcp")), [])
        (save,) = checkpoints(only_file(events))
        self.assertEqual((save["persisted"], save["note"]), (False, "scratch"))
        self.assertGreater(save["bytes"], 500)

    def test_async_save_writes_its_event_when_the_background_write_ends(self):
        proc, events = run_script(
            LOOP
            + FAKE_DCP
            + r"""
futures = []
epochs(2, in_step=lambda e: futures.append(dcp.async_save(model.state_dict(), checkpoint_id="dcp/%d" % e)))
for f in futures:
    f.result()
time.sleep(0.1)
""",
            mode="synthetic",
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        saves = checkpoints(only_file(events))
        # The torch.save calls of the background write are part of it, not events of their own.
        self.assertEqual(
            [(s["api"], s["i"], s["inStep"]) for s in saves], [("dcp.async_save", 2, True), ("dcp.async_save", 7, True)]
        )
        for save in saves:
            self.assertLess(save["blockingMs"], 150)
            self.assertGreaterEqual(save["writeMs"], 200)
            self.assertGreater(save["bytes"], 500)
            self.assertEqual(save["syncMs"], 0, "the background write's fsyncs are not blocking time")
        self.assertEqual(os.listdir(os.path.join(proc.job_dir, "dcp")), [], "scratch folders removed after each write")

    def test_an_async_save_still_running_at_exit_is_written_with_no_write_time(self):
        proc, events = run_script(
            LOOP
            + FAKE_DCP
            + r"""
import concurrent.futures
never = concurrent.futures.Future()              # a write that never reports back
from ds_analyzer._checkpoint import targets, timing
stuck = timing.timed_async("dcp.async_save", lambda *a, **k: never, targets.prepare_dcp)
epochs(1, between=lambda e: stuck(model.state_dict(), checkpoint_id="dcp/x"))
""",
            mode="cached",
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        ev = only_file(events)
        (save,) = checkpoints(ev)
        self.assertIsNone(save["writeMs"])
        self.assertEqual(ev[-1]["type"], "end")


# A save followed by the script's own fsync of what it wrote, timed by the script: the figures the
# hook's event must agree with (its sync inside the script's, its blocking time inside the script's span).
TIMED = r"""
import json
timed = []
def durable(save, sync):
    began = time.perf_counter()
    save()
    returned = time.perf_counter()
    sync_ms = sync()
    span_ms = (time.perf_counter() - began) * 1000.0
    timed.append({"saveMs": (returned - began) * 1000.0, "syncMs": sync_ms, "spanMs": span_ms})
def fsync_path(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        began = time.perf_counter()
        os.fsync(fd)
        return (time.perf_counter() - began) * 1000.0
    finally:
        os.close(fd)
big = {"model": model.state_dict(), "blob": torch.randn(8 * 1024 * 1024)}   # 32 MiB
"""


def printed_json(proc):
    """The JSON list the job printed last."""
    return json.loads(proc.stdout.splitlines()[-1])


@unittest.skipUnless(HAVE_TORCH, NEEDS_TORCH)
class SyncAfterSaveTest(unittest.TestCase):
    """An fsync of the saved file after the save returned, before the loop asks for the next batch, is the save's."""

    def assert_synced_after(self, save, timed, note="synced-after"):
        self.assertEqual(save.get("note"), note, save)
        self.assertGreater(save["syncMs"], 0)
        # The hook's clocks run inside the script's: its sync within the script's, its save within the span.
        self.assertLessEqual(save["syncMs"], timed["syncMs"] + 0.5)
        self.assertGreater(save["blockingMs"], save["syncMs"])
        self.assertGreaterEqual(save["blockingMs"], timed["saveMs"] - 2.0)
        self.assertLessEqual(save["blockingMs"], timed["spanMs"] + 0.5)

    def test_a_fsync_of_the_saved_path_extends_the_save(self):
        proc, events = run_script(
            LOOP
            + TIMED
            + r"""
epochs(1, in_step=lambda e: durable(lambda: torch.save(big, "ckpt.pt"), lambda: fsync_path("ckpt.pt")))
print(json.dumps(timed))
""",
            mode="cached",
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        ev = only_file(events)
        (save,) = checkpoints(ev)
        (timed,) = printed_json(proc)
        self.assert_synced_after(save, timed)
        self.assertEqual((save["i"], save["inStep"], save["persisted"]), (2, True, True))
        self.assertEqual(save["bytes"], os.path.getsize(os.path.join(proc.job_dir, "ckpt.pt")))
        self.assertGreater(save["bytes"], 32 * 1024 * 1024)
        # Its line still comes before its iteration's, and the iterations are untouched.
        kinds = [(e["type"], e.get("i")) for e in ev]
        self.assertLess(kinds.index(("checkpoint", 2)), kinds.index(("iter", 2)))
        self.assertEqual(len(iters(ev)), 5)
        sys.stderr.write(
            "\n32 MiB torch.save + fsync of its path: the script saw the save {:.1f} ms, the fsync {:.1f} ms; "
            "the event: blockingMs {:.1f}, syncMs {:.1f}\n".format(
                timed["saveMs"], timed["syncMs"], save["blockingMs"], save["syncMs"]
            )
        )

    def test_a_save_to_an_open_file_flushed_and_fsynced_is_extended(self):
        proc, events = run_script(
            LOOP
            + TIMED
            + r"""
def into_file(e):
    with open("ckpt.pt", "wb") as f:
        def sync():
            f.flush()
            began = time.perf_counter()
            os.fsync(f)                 # a file object: os.fsync takes its fileno()
            return (time.perf_counter() - began) * 1000.0
        durable(lambda: torch.save(big, f), sync)
epochs(1, between=into_file)
print(json.dumps(timed))
""",
            mode="cached",
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        (save,) = checkpoints(only_file(events))
        self.assert_synced_after(save, printed_json(proc)[0])
        self.assertEqual(
            (save["inStep"], save["bytes"]), (False, os.path.getsize(os.path.join(proc.job_dir, "ckpt.pt")))
        )

    def test_a_tmp_file_replaced_into_place_then_fsynced_is_extended(self):
        proc, events = run_script(
            LOOP
            + TIMED
            + r"""
def replace_then_sync():
    os.replace("ckpt.pt.tmp", "ckpt.pt")
    ms = fsync_path("ckpt.pt")
    fd = os.open(".", os.O_RDONLY)       # the folder, for the rename: not a file the save wrote
    os.fsync(fd)
    os.close(fd)
    return ms
epochs(1, in_step=lambda e: durable(lambda: torch.save(big, "ckpt.pt.tmp"), replace_then_sync))
print(json.dumps(timed))
""",
            mode="cached",
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        (save,) = checkpoints(only_file(events))
        self.assert_synced_after(save, printed_json(proc)[0])

    def test_every_file_of_a_checkpoint_folder_synced_after_extends_it(self):
        proc, events = run_script(
            LOOP
            + FAKE_DCP
            + r"""
import json
after = []
def save(e):
    dcp.save({"blob": torch.randn(1024 * 1024)}, checkpoint_id="dcp/step")
    for name in sorted(os.listdir("dcp/step")) + [""]:      # each file, then the folder itself
        fd = os.open(os.path.join("dcp/step", name), os.O_RDONLY)
        began = time.perf_counter()
        os.fdatasync(fd)
        after.append((time.perf_counter() - began) * 1000.0)
        os.close(fd)
epochs(1, between=save)
print(json.dumps(after))
""",
            mode="cached",
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        (save,) = checkpoints(only_file(events))
        after = printed_json(proc)
        self.assertEqual(len(after), 3)
        self.assertEqual(save["note"], "synced-after")
        self.assertLessEqual(save["syncMs"], save["blockingMs"])
        # The fsyncs inside the save and the three after it (each a few microseconds short of the script's clock).
        self.assertGreaterEqual(save["syncMs"], sum(after) - 0.5)

    def test_an_fsync_of_another_file_is_not_the_saves(self):
        proc, events = run_script(
            LOOP
            + TIMED
            + r"""
def other():
    with open("metrics.json", "w") as f:
        f.write("{}")
        f.flush()
        os.fsync(f.fileno())
    return 0.0
epochs(1, in_step=lambda e: durable(lambda: torch.save(model.state_dict(), "ckpt.pt"), other))
print(json.dumps(timed))
""",
            mode="cached",
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        (save,) = checkpoints(only_file(events))
        (timed,) = printed_json(proc)
        self.assertEqual(save["syncMs"], 0.0)
        self.assertNotIn("note", save)
        self.assertLessEqual(save["blockingMs"], timed["saveMs"] + 0.5)

    def test_an_fsync_after_the_next_batch_request_is_not_the_saves(self):
        proc, events = run_script(
            LOOP
            + r"""
saved = []
def in_step(e):
    if not saved:
        torch.save(model.state_dict(), "ckpt.pt")
        saved.append(1)
    else:
        fd = os.open("ckpt.pt", os.O_RDONLY)   # a later epoch: the save's event was written at the boundary
        os.fsync(fd)
        os.close(fd)
epochs(2, in_step=in_step)
""",
            mode="cached",
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        (save,) = checkpoints(only_file(events))
        self.assertEqual((save["syncMs"], save.get("note")), (0.0, None))

    def test_a_save_synced_as_the_job_ends_is_still_written(self):
        # After the loop, then the exit; and inside the last step of a budget (the next request ends the job).
        for iterations, script in (
            (
                None,
                r"""
epochs(1)
durable(lambda: torch.save(big, "final.pt"), lambda: fsync_path("final.pt"))
print(json.dumps(timed))
""",
            ),
            (
                3,
                r"""
try:
    epochs(1, in_step=lambda e: durable(lambda: torch.save(big, "ckpt.pt"), lambda: fsync_path("ckpt.pt")))
finally:
    print(json.dumps(timed))
""",
            ),
        ):
            proc, events = run_script(LOOP + TIMED + script, mode="cached", iterations=iterations)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            ev = only_file(events)
            (save,) = checkpoints(ev)
            self.assert_synced_after(save, printed_json(proc)[0])
            self.assertEqual(
                (ev[-1]["type"], ev[-1]["reason"]), ("end", "exhausted" if iterations is None else "budget")
            )
            self.assertEqual(save["inStep"], iterations is not None)

    def test_synthetic_mode_counts_a_sync_of_the_scratch_copy_but_not_of_another_file(self):
        proc, events = run_script(
            LOOP
            + TIMED
            + FAKE_PACKAGES
            + r'''
fake_package({"lightning/__init__.py": "", "lightning/pytorch/__init__.py": """
import torch
opened = []
class Trainer(object):
    def save_checkpoint(self, filepath, weights_only=False, storage_options=None):
        torch.save({"blob": torch.randn(1024 * 1024)}, filepath)
        opened.append(open(filepath, "rb"))     # a handle on what it wrote, kept past the save
"""})
import lightning.pytorch as L
os.makedirs("ckpt")
with open("ckpt/last.pt", "wb") as f:
    f.write(b"the user's real checkpoint" * 1000)
def users_path():
    ms = fsync_path("ckpt/last.pt")            # os.open follows the diversion: the scratch copy is synced
    with open("ckpt/other.bin", "wb") as f:    # another file: not the save's
        f.write(b"x" * 100000)
        f.flush()
        os.fsync(f.fileno())
    return ms
def scratch_copy():
    began = time.perf_counter()
    os.fsync(L.opened[-1].fileno())
    return (time.perf_counter() - began) * 1000.0
epochs(1, in_step=lambda e: durable(lambda: torch.save(big, "ckpt/last.pt"), users_path),
       between=lambda e: durable(lambda: L.Trainer().save_checkpoint("ckpt/last.pt"), scratch_copy))
print(json.dumps(timed))
''',
            mode="synthetic",
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(sorted(os.listdir(os.path.join(proc.job_dir, "ckpt"))), ["last.pt", "other.bin"])
        with open(os.path.join(proc.job_dir, "ckpt", "last.pt"), "rb") as f:
            self.assertEqual(f.read(), b"the user's real checkpoint" * 1000)
        users, scratch = checkpoints(only_file(events))
        timed = printed_json(proc)
        self.assertEqual((users["api"], users["persisted"]), ("torch.save", False))
        self.assert_synced_after(users, timed[0], note="scratch,synced-after")
        self.assertGreater(users["bytes"], 32 * 1024 * 1024)
        self.assertEqual((scratch["api"], scratch["persisted"]), ("lightning", False))
        self.assert_synced_after(scratch, timed[1], note="scratch,synced-after")


@unittest.skipUnless(HAVE_TORCH, NEEDS_TORCH)
class ScratchFollowsTheScriptTest(unittest.TestCase):
    """Synthetic mode: the scratch stands in for its target through the script's own file operations until the exit.

    Each file operation's case (an earlier run's files, copies into a folder, moves, removals) is in
    test_diversions.FollowTest, without torch; here the hook installs it all in a real job."""

    def assert_no_scratch_and(self, proc, files):
        """The job exited 0, no scratch is left, and the job's folder holds exactly `files` (name -> bytes,
        or None: any)."""
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(scratch_left(proc.job_dir), [])
        found = sorted(n for n in os.listdir(proc.job_dir) if n not in ("job.py", "events"))
        self.assertEqual(found, sorted(files), proc.stdout)
        for name, content in files.items():
            if content is not None:
                with open(os.path.join(proc.job_dir, name), "rb") as f:
                    self.assertEqual(f.read(), content, name)

    # pytorch/examples imagenet/main.py's save_checkpoint, unmodified.
    IMAGENET = (
        LOOP
        + r"""
import shutil
def save_checkpoint(state, is_best, filename='checkpoint.pth.tar'):
    torch.save(state, filename)
    if is_best:
        shutil.copyfile(filename, 'model_best.pth.tar')
def between(e):
    save_checkpoint({"epoch": e + 1, "state_dict": model.state_dict()}, is_best=True)
    print(e, os.path.exists("checkpoint.pth.tar"), os.path.isfile("model_best.pth.tar"),
          torch.load("model_best.pth.tar")["epoch"], torch.load("checkpoint.pth.tar")["epoch"])
epochs(2, between=between)
with open("model_best.pth.tar", "rb") as f:
    print(len(f.read()) == os.path.getsize("checkpoint.pth.tar") > 500)
shutil.copyfile("notes.txt", "notes-copy.txt")   # a file nothing diverted: copied for real
"""
    )

    def test_imagenet_save_then_copyfile_to_model_best_follows_the_scratch(self):
        proc, events = run_script(
            r"""
with open("notes.txt", "w") as f:
    f.write("mine")
"""
            + self.IMAGENET,
            mode="synthetic",
            fresh=True,  # the file operations wrapped before torch is imported, as under the CLI
        )
        self.assertEqual(proc.stdout.splitlines(), ["0 True True 1 1", "1 True True 2 2", "True"], proc.stderr)
        self.assert_no_scratch_and(proc, {"notes.txt": b"mine", "notes-copy.txt": b"mine"})
        saves = checkpoints(only_file(events))
        self.assertEqual([(s["api"], s["note"], s["persisted"]) for s in saves], [("torch.save", "scratch", False)] * 2)

    def test_an_atomic_save_tmp_then_os_replace_follows_and_its_fsync_is_the_saves(self):
        proc, events = run_script(
            LOOP
            + r"""
import json
def atomic(e):
    torch.save({"epoch": e, "blob": torch.randn(100000)}, "ckpt.pt.tmp")
    os.replace("ckpt.pt.tmp", "ckpt.pt")
    fd = os.open("ckpt.pt", os.O_RDONLY)       # forced out after the rename: part of the save
    os.fsync(fd)
    os.close(fd)
    print(os.path.exists("ckpt.pt.tmp"), os.path.exists("ckpt.pt"), torch.load("ckpt.pt")["epoch"])
epochs(2, between=atomic)
torch.save({"epoch": 9}, "other.tmp")
os.rename("other.tmp", "other.pt")
with open("other.pt", "rb") as f:
    print(torch.load(f)["epoch"], os.path.getsize("other.pt") > 0)
""",
            mode="synthetic",
        )
        self.assertEqual(proc.stdout.splitlines(), ["False True 0", "False True 1", "9 True"], proc.stderr)
        self.assert_no_scratch_and(proc, {})
        saves = checkpoints(only_file(events))
        self.assertEqual([s["note"] for s in saves], ["scratch,synced-after"] * 2 + ["scratch"])
        self.assertTrue(all(s["syncMs"] > 0 for s in saves[:2]), saves)

    def test_a_save_after_the_budget_ends_the_job_is_still_diverted_and_followed(self):
        proc, events = run_script(
            LOOP
            + r"""
from shutil import copyfile                      # bound by name: wrapped at start-up, so still followed
try:
    epochs(2, in_step=lambda e: torch.save(model.state_dict(), "step.pt"))
finally:                                          # the budget's SystemExit runs it
    torch.save({"final": 1}, "final.pt")
    copyfile("step.pt", "best.pt")
    print(torch.load("final.pt")["final"], os.path.exists("best.pt"))
""",
            mode="synthetic",
            iterations=4,
        )
        self.assertEqual(proc.stdout.strip(), "1 True")
        self.assert_no_scratch_and(proc, {})
        ev = only_file(events)
        self.assertEqual(len(checkpoints(ev)), 1, "no event after the end")
        self.assertEqual((ev[-1]["type"], ev[-1]["reason"]), ("end", "budget"))

    def test_a_forked_child_neither_follows_nor_removes_the_parents_scratch(self):
        proc, events = run_script(
            LOOP
            + r"""
import sys
torch.save(model.state_dict(), "ckpt.pt")
pid = os.fork()
if pid == 0:
    print("child", os.path.exists("ckpt.pt"))
    sys.stdout.flush()
    sys.exit(0)                                   # runs the child's atexit handlers
os.waitpid(pid, 0)
print("parent", os.path.exists("ckpt.pt"), len(torch.load("ckpt.pt")))
""",
            mode="synthetic",
        )
        self.assertEqual(proc.stdout.splitlines(), ["child False", "parent True 2"], proc.stderr)
        self.assert_no_scratch_and(proc, {})

    def test_other_modes_wrap_nothing(self):
        proc, events = run_script(
            LOOP
            + r"""
import builtins, shutil
print([hasattr(f, "_dsa") for f in (builtins.open, shutil.copyfile, os.replace, os.path.exists, torch.load)])
""",
            mode="cached",
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.strip(), "[False, False, False, False, False]")


class ManualCheckpointTest(unittest.TestCase):
    def test_a_manual_checkpoint_block_is_one_save_sized_from_its_path(self):
        proc, events = run_script(
            r"""
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
""",
            mode="cached",
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        saves = checkpoints(only_file(events))
        self.assertEqual(len(saves), 2)
        self.assertEqual(
            (saves[0]["api"], saves[0]["bytes"], saves[0]["persisted"], saves[0]["inStep"]),
            ("manual", 3000, True, True),
        )
        self.assertGreater(saves[0]["syncMs"], 0)
        self.assertEqual((saves[1]["bytes"], saves[1]["inStep"]), (None, False))

    def test_outside_a_profiled_run_checkpoint_does_nothing(self):
        proc, events = run_script(
            r"""
import ds_analyzer
with ds_analyzer.checkpoint("x"):
    print("ran")
""",
            mode=None,
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.strip(), "ran")
        self.assertEqual(events, {})


if __name__ == "__main__":
    unittest.main()
