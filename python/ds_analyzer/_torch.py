"""Zero-code PyTorch instrumentation: DataLoader iteration, synthetic replay, budget.

The patch is on torch.utils.data.dataloader._BaseDataLoaderIter.__next__, the
method every DataLoader iterator (single-process, multi-process, and those of
DataLoader subclasses) goes through, plus DataLoader._get_iterator so that an
iterator knows its loader, and DataLoader.__iter__ to time each epoch's start.
See docs/pytorch.md for why each choice was made.
"""

import atexit
import os
import sys
import time

from . import _recorder, _stages, _subset

_perf = time.perf_counter

# The loader chosen as the training loader, and its dataset (a script that
# builds a new DataLoader every epoch over the same dataset keeps being counted).
_state = {
    "loader": None,
    "dataset": None,
    "explicit": None,  # loader marked with ds_analyzer.training_loader()
    "replay": None,  # synthetic mode: (batch, samples) captured from the real loader
    "pending": None,  # iterator whose batch is out and whose compute is running
    "patched": False,
    "chosen": False,
    "epochs": 0,  # epoch events written (the training loader's epochs, this process)
    "epoch_ended_at": None,  # perf_counter when the training loader's last epoch raised StopIteration
    # profile --continue (docs/pytorch.md, "Training unharmed"):
    "snapshot": None,  # the state at the synthetic block's start (_snapshot.Snapshot), put back at its end
    "owed": None,  # (batch, samples): the first block's real batch, trained on for real once that block is undone
    "unheld": None,  # why the state cannot be held: synthetic blocks then train on real batches
    "passive": False,  # the blocks are over: the loader runs untouched
}
_originals = {}


class _Counted:
    """Per-iterator timing state of the training loader's iterators."""

    __slots__ = ("loader", "rec", "returned_at", "wait_s", "samples", "sync", "replaying", "epoch_len")

    def __init__(self, loader, sync, rec=None):
        self.loader = loader
        self.rec = rec
        self.returned_at = None
        self.wait_s = 0.0
        self.samples = 0
        self.sync = sync
        self.replaying = False
        self.epoch_len = None


def count_samples(batch, default=0):
    """Samples in a batch: the leading dimension of its first tensor-like leaf."""
    for _ in range(4):
        shape = getattr(batch, "shape", None)
        if shape is not None:
            return int(shape[0]) if len(shape) else default
        if isinstance(batch, (list, tuple)):
            if not batch:
                return default
            first = batch[0]
            if isinstance(first, (int, float, str, bytes)):
                return len(batch)  # a list of samples, not a (inputs, targets) pair
            batch = first
        elif isinstance(batch, dict):
            if not batch:
                return default
            batch = next(iter(batch.values()))
        else:
            return default
    return default


def _is_worker_process():
    import torch.utils.data

    return torch.utils.data.get_worker_info() is not None


def _grad_enabled():
    import torch

    return torch.is_grad_enabled()


def _decide(it, rec):
    """Whether this iterator belongs to the training loader (see docs/pytorch.md)."""
    loader = getattr(it, "_dsa_loader", None)
    dataset = getattr(it, "_dataset", None)
    if _state["chosen"]:
        chosen = _state["loader"]
        return (loader is not None and loader is chosen) or (dataset is not None and dataset is _state["dataset"])
    if _recorder.manual_owns_counting or _is_worker_process():
        return False
    explicit = _state["explicit"]
    if explicit is not None:
        ok = loader is explicit
    else:
        # The first loader iterated with autograd on is the training loader:
        # evaluation loops run under torch.no_grad()/inference_mode (the ImageNet
        # example, Lightning's validation and sanity check), and a training step
        # needs gradients.
        ok = _grad_enabled()
    if ok:
        _state["chosen"] = True
        _state["loader"] = loader
        _state["dataset"] = dataset
        # Registered after torch's own exit flag (atexit runs the last registered first): see the function.
        atexit.register(_release_training_loader)
        batch_size = getattr(loader, "batch_size", None)
        workers = getattr(loader, "num_workers", getattr(it, "_num_workers", None))
        settings = loader_settings(loader, workers) if loader is not None else None
        subset = _subset.result_for(dataset) if dataset is not None else None
        if subset is None and _subset.subset_paths() is not None:
            subset = (None, f"the training loader's dataset was not restricted ({type(dataset).__name__})")
        kept, note = subset if subset is not None else (None, None)
        rec.start(batch_size=batch_size, workers=workers, subset_files=kept, subset_note=note, loader=settings)
    return ok


def loader_settings(loader, workers):
    """The training loader's settings for the start event (docs/protocol.md, start.loader)."""
    settings = {}
    if isinstance(workers, int):
        settings["workers"] = workers
    script_workers = getattr(loader, "_dsa_script_workers", None)
    if script_workers is not None:
        settings["scriptWorkers"] = script_workers
    prefetch = getattr(loader, "prefetch_factor", None)
    if isinstance(prefetch, int) and isinstance(workers, int) and workers > 0:
        settings["prefetchFactor"] = prefetch
    for key, attr in (("persistentWorkers", "persistent_workers"), ("pinMemory", "pin_memory")):
        value = getattr(loader, attr, None)
        if isinstance(value, bool):
            settings[key] = value
    framework = _framework()
    if framework is not None:
        settings["framework"] = framework
    return settings


def _framework():
    """The training framework that built the loader, so advice can name its own setting."""
    if "transformers.trainer" in sys.modules:
        return "hf-trainer"  # TrainingArguments(dataloader_num_workers=N)
    if "lightning.pytorch" in sys.modules or "pytorch_lightning" in sys.modules:
        return "lightning"  # DataLoader(..., num_workers=N) in the LightningDataModule
    return None


def _may_be_training_loader(loader):
    """At iterator creation, before any batch: whether _decide would count this loader."""
    if _state["chosen"]:
        return loader is _state["loader"] or (
            _state["dataset"] is not None and getattr(loader, "dataset", None) is _state["dataset"]
        )
    if _recorder.manual_owns_counting or _is_worker_process():
        return False
    explicit = _state["explicit"]
    return loader is explicit if explicit is not None else _grad_enabled()


def _override_workers(loader):
    """profile --workers: set the training loader's num_workers before its iterator (and workers) exist."""
    rec = _recorder.recorder()
    wanted = rec.config.num_workers if rec is not None else None
    if wanted is None or not hasattr(loader, "num_workers") or not _may_be_training_loader(loader):
        return
    if getattr(loader, "_dsa_script_workers", None) is None:
        loader._dsa_script_workers = loader.num_workers
    if loader.num_workers == wanted:
        return
    if wanted > 0 and getattr(loader, "prefetch_factor", None) is None:
        # A loader built with num_workers=0 has no prefetch factor (torch >= 2.0): take torch's default.
        loader.prefetch_factor = 2
    if getattr(loader, "_iterator", None) is not None:
        # persistent_workers: the workers of the old count must go before the new count starts.
        _shutdown_workers(loader._iterator)
        loader._iterator = None
    loader.num_workers = wanted


def _cuda_sync_wanted(rec):
    if not rec.config.sync:
        return False
    import torch

    try:
        return bool(torch.cuda.is_available())
    except Exception:
        return False


def _sync_device():
    import torch

    # Only once the script has touched CUDA: creating a context here would cost
    # seconds and memory on a job that trains on the CPU.
    if torch.cuda.is_initialized():
        torch.cuda.synchronize()


def _release_training_loader():
    """At exit: the training loader's persistent workers shut down in order, as when the script drops the loader.

    The profiler holds the loader (_state), so its iterator outlives the script into the interpreter's teardown,
    where torch skips its orderly shutdown: the workers are then terminated, or on torch 2.11 waited for 5 s each
    (a GPU job with 8 workers took 40 s to exit). This runs before torch marks the interpreter as exiting.
    """
    loader = _state["loader"]
    it = getattr(loader, "_iterator", None)
    if it is not None:
        _shutdown_workers(it)
        loader._iterator = None


def _shutdown_workers(it):
    shutdown = getattr(it, "_shutdown_workers", None)
    if shutdown is not None:
        shutdown()


def _end_job(it, rec, reason):
    rec.end(reason)
    # Workers go before SystemExit unwinds the script, so none is left behind
    # whatever the script does on its way out.
    _shutdown_workers(it)
    loader = getattr(it, "_dsa_loader", None)
    if loader is not None and getattr(loader, "_iterator", None) is it:
        loader._iterator = None
    raise _recorder.BudgetReached(reason)


def _agree_fn():
    """all_reduce(MAX) of a few integers (a flag, a block number) across ranks, element by element, in one
    collective, when torch.distributed is running."""
    dist = sys.modules.get("torch.distributed")
    if dist is None or not dist.is_available() or not dist.is_initialized() or dist.get_world_size() < 2:
        return None
    import torch

    def agree(values):
        device = "cpu"
        if dist.get_backend() == "nccl":
            device = torch.device("cuda", torch.cuda.current_device())
        tensor = torch.tensor([int(v) for v in values], dtype=torch.int64, device=device)
        dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
        return [int(v) for v in tensor.tolist()]

    return agree


def _instrumented_next(self):
    if _state["passive"]:
        return _passive_next(self)
    counted = self.__dict__.get("_dsa")
    if counted is False:
        return _originals["__next__"](self)
    if counted is None:
        rec = _recorder.recorder()
        if rec is not None and rec.agree is None:
            # Before the start event, which offers to switch on several nodes only with a collective to agree through.
            rec.agree = _agree_fn()
        if rec is None or rec.ended or not _decide(self, rec):
            self._dsa = False
            return _originals["__next__"](self)
        counted = self._dsa = _Counted(getattr(self, "_dsa_loader", None), _cuda_sync_wanted(rec), rec)
        held = not rec.config.continue_run or _state["snapshot"] is not None
        if (
            rec.config.control_file is not None
            and rec.config.mode == "synthetic"
            and _state["replay"] is not None
            and held
        ):
            # One launch, a new epoch inside a synthetic block: replay from its first batch.
            counted.replaying = True
            counted.epoch_len = _len_or_none(self)
    rec = counted.rec

    # Iteration boundary: the previous batch's compute ends here.
    if counted.sync:
        _sync_device()
    now = _perf()
    pending = _state["pending"]
    if pending is not None:
        _state["pending"] = None
        # A batch whose iterator was abandoned (a `break` out of the loop) has no
        # measurable compute: it is dropped rather than charged with whatever
        # ran in between.
        if pending is counted:
            rec.iteration(counted.wait_s, now - counted.returned_at, counted.samples)
    if rec.ended:
        raise _recorder.BudgetReached(rec.end_reason or "budget")
    reason = rec.stop_reason()
    if reason is not None:
        _end_job(self, rec, reason)
    switch = rec.switch_asked()
    if switch is not None:
        _switch_mode(self, counted, rec, switch)
        if _state["passive"]:
            return _passive_next(self)

    start = _perf()
    if counted.replaying:
        # Under --continue the replay never ends the script's epoch: the epoch it is in is real, and ends with its data.
        if not rec.config.continue_run:
            if counted.epoch_len is not None and self._num_yielded >= counted.epoch_len:
                _state["epoch_ended_at"] = start
                raise StopIteration
            self._num_yielded += 1
        batch, samples = _state["replay"]
    elif _state["owed"] is not None:
        batch, samples = _state["owed"]
        _state["owed"] = None
    else:
        try:
            batch = _originals["__next__"](self)
        except StopIteration:
            _state["epoch_ended_at"] = _perf()
            raise
        samples = count_samples(batch, getattr(counted.loader, "batch_size", None) or 0)
        if rec.config.control_file is not None:
            # One launch: the batch a later synthetic block replays is the last real one.
            _state["replay"] = (batch, samples)
            counted.replaying = rec.config.mode == "synthetic"
            counted.epoch_len = _len_or_none(self)
            if counted.replaying and rec.config.continue_run:
                if _state["unheld"] is not None:
                    counted.replaying = False  # the state cannot be held: this synthetic block trains on real batches
                elif rec.block == 0 and _state["snapshot"] is None:
                    # The first block's first batch is real: held now, before any step, and trained on after the block.
                    counted.replaying = _hold(rec, 0)
                    if counted.replaying:
                        _state["owed"] = (batch, samples)
        elif rec.config.mode == "synthetic":
            _begin_replay(self, counted, batch, samples)
    counted.returned_at = _perf()
    counted.wait_s = counted.returned_at - start
    counted.samples = samples
    _state["pending"] = counted
    epoch_start = self.__dict__.get("_dsa_epoch")
    if epoch_start is not None:
        self._dsa_epoch = None
        _write_epoch(rec, counted, epoch_start)
    return batch


def _write_epoch(rec, counted, epoch_start):
    """The training loader's epoch began: its first batch is out (docs/protocol.md, 'epoch')."""
    began, create_s = epoch_start
    ended = _state["epoch_ended_at"]
    _state["epoch_ended_at"] = None
    loader = counted.loader
    fields = {
        "epoch": _state["epochs"],
        "i": rec.iterations,
        "createMs": round(create_s * 1000.0, 4),
        "firstWaitMs": round(counted.wait_s * 1000.0, 4),
    }
    # Absent for epoch 0, and when the last epoch was left with `break` (it never ended).
    if _state["epochs"] > 0 and ended is not None and ended <= began:
        fields["gapMs"] = round((began - ended) * 1000.0, 4)
    fields["epochIterations"] = _epoch_iterations(loader)
    workers = getattr(loader, "num_workers", None)
    if isinstance(workers, int) and workers >= 0:
        fields["workers"] = workers
    persistent = getattr(loader, "persistent_workers", None)
    if isinstance(persistent, bool):
        fields["persistentWorkers"] = persistent
    _state["epochs"] += 1
    rec.event("epoch", fields, flush=False)


def _epoch_iterations(loader):
    try:
        length = len(loader)
    except Exception:
        return None  # an IterableDataset without __len__
    return length if isinstance(length, int) and length > 0 else None


def _switch_mode(it, counted, rec, switch):
    """The control file asked for another block: switch at this boundary (docs/pytorch.md, "One launch").

    The loader keeps its workers through a synthetic block, so the next real block continues the
    epoch; the batches they hold were prefetched under the old state, and the block event says how many.
    """
    block, mode = switch
    in_flight = _in_flight(it, counted)
    held = True
    if rec.config.continue_run:
        held = _unharmed_switch(rec, block, mode)
        if _state["owed"] is not None and in_flight is not None:
            in_flight += 1  # the owed batch was fetched in the first block's state
        if mode == _recorder.TRAIN:
            _go_passive(rec, block)
            return
    rec.switch(block, mode, in_flight)
    counted.replaying = mode == "synthetic" and _state["replay"] is not None and held
    counted.epoch_len = _len_or_none(it)


def _unharmed_switch(rec, block, mode):
    """profile --continue at a switch: the synthetic block ending is undone; one starting is held. Whether held."""
    snap = _state["snapshot"]
    if snap is not None:
        _state["snapshot"] = None
        restore_s = snap.restore()
        rec.event(
            "snapshot",
            {
                "block": rec.block,
                "action": "restore",
                "i": rec.iterations,
                "ms": round(restore_s * 1000.0, 3),
                "bytes": snap.bytes,
            },
        )
    return _hold(rec, block) if mode == "synthetic" else True


def _hold(rec, block):
    """Takes the state the synthetic block starting now will change; False (said once) where it cannot be held."""
    from . import _snapshot

    if _state["unheld"] is None:
        try:
            snap = _snapshot.Snapshot()
        except Exception as error:  # CannotHold, or anything else: the job is never harmed for a measurement
            _state["unheld"] = (
                str(error) if isinstance(error, _snapshot.CannotHold) else f"{type(error).__name__}: {error}"
            )
            sys.stderr.write(
                "ds-analyzer: the training state cannot be held ({}): synthetic blocks train on real "
                "batches instead\n".format(_state["unheld"])
            )
        else:
            _state["snapshot"] = snap
            rec.event(
                "snapshot",
                {
                    "block": block,
                    "action": "take",
                    "i": rec.iterations,
                    "ms": round(snap.take_s * 1000.0, 3),
                    "bytes": snap.bytes,
                },
            )
            return True
    rec.unheld = True
    rec.event("snapshot", {"block": block, "action": "refused", "i": rec.iterations, "reason": _state["unheld"][:1000]})
    return False


def _go_passive(rec, block):
    """The blocks are over (control file: `<block> train`): from here the loader runs as if never patched."""
    rec.block = block
    rec.config.mode = _recorder.TRAIN
    rec.passive = True
    _state["passive"] = True
    _state["pending"] = None
    _state["replay"] = None
    # The loader's next workers fetch untimed (persistent workers keep the copy they were given).
    loader = _state["loader"]
    if isinstance(getattr(loader, "collate_fn", None), _stages.TimedCollate):
        try:
            loader.collate_fn = loader.collate_fn.fn
        except Exception:
            pass
    rec.flush()


def _passive_next(it):
    """The loader's own __next__, but for the first block's owed batch when no real block came after it."""
    owed = _state["owed"]
    if owed is not None and it.__dict__.get("_dsa"):
        _state["owed"] = None
        return owed[0]
    return _originals["__next__"](it)


def _in_flight(it, counted):
    """Batches handed to the loader's workers and not yet to the loop; None when the iterator does not say."""
    outstanding = getattr(it, "_tasks_outstanding", None)
    if isinstance(outstanding, int):
        return max(0, outstanding)
    if getattr(it, "_num_workers", None) == 0:
        return 0  # the single-process iterator prepares each batch when asked
    return None


def _len_or_none(it):
    try:
        return len(it)
    except TypeError:
        return None  # IterableDataset without __len__


def _begin_replay(it, counted, batch, samples):
    """Synthetic mode: keep this batch, stop the real loader (no fetch, no prep)."""
    _state["replay"] = (batch, samples)
    counted.replaying = True
    try:
        counted.epoch_len = len(it)
    except TypeError:
        counted.epoch_len = None  # IterableDataset without __len__: replay until the budget
    _shutdown_workers(it)
    loader = counted.loader
    if loader is not None and getattr(loader, "_iterator", None) is it:
        # persistent_workers: the next epoch must not _reset() the stopped workers.
        loader._iterator = None


def _instrumented_iter(self):
    """iter(loader), timed for the epoch event.

    Each call is timed, not only each new iterator: with persistent_workers,
    torch keeps one iterator and calls its _reset() here every epoch.
    """
    began = _perf()
    it = _originals["__iter__"](self)
    _mark_epoch_start(it, began)
    return it


def _mark_epoch_start(it, began):
    try:
        it._dsa_epoch = (began, _perf() - began)
    except AttributeError:
        pass  # an iterator with __slots__: no epoch events for it


def _instrumented_get_iterator(self):
    began = _perf()
    rec = _recorder.recorder()
    switchable = rec is not None and rec.config.control_file is not None
    if (
        not switchable
        and _state["replay"] is not None
        and ((self is _state["loader"]) or (_state["dataset"] is not None and self.dataset is _state["dataset"]))
    ):
        it = _ReplayIter(self)
    else:
        _restrict_to_subset(self)
        _override_workers(self)
        if _stages.enabled() and not _state["passive"] and _may_be_training_loader(self):
            # Before the iterator exists: its workers get the marked collate_fn, and count their fetches.
            _stages.mark_loader(self)
        it = _originals["_get_iterator"](self)
        it._dsa_loader = self
    # For a subclass whose __iter__ calls _get_iterator() without DataLoader.__iter__ (which overwrites this).
    _mark_epoch_start(it, began)
    return it


def _restrict_to_subset(loader):
    """Cached mode on a resident subset: before the iterator (and its workers) exists, shrink the dataset."""
    paths = _subset.subset_paths()
    if paths is None or getattr(loader, "dataset", None) is None:
        return
    seen = _subset.result_for(loader.dataset) is not None
    kept, note = _subset.restrict(loader.dataset, paths)
    if kept is not None:
        _subset.fix_sampler(loader)
    if not seen:
        sys.stderr.write(f"ds-analyzer: cached mode on a resident subset: {note}\n")


_ReplayIter = None


def _make_replay_iter_class(base):
    class ReplayIter(base):
        """Synthetic mode, later epochs: the epoch's length, no workers, no dataset access."""

        def __init__(self, loader):
            base.__init__(self, loader)
            self._dsa_loader = loader
            rec = _recorder.recorder()
            counted = _Counted(loader, _cuda_sync_wanted(rec) if rec is not None else False, rec)
            counted.replaying = True
            try:
                counted.epoch_len = len(self)
            except TypeError:
                counted.epoch_len = None
            self._dsa = counted

        def _next_data(self):
            raise AssertionError("ds-analyzer: a replayed loader must not be consulted")

    return ReplayIter


def patch(dataloader_module):
    """Installs the instrumentation into torch.utils.data.dataloader (idempotent)."""
    global _ReplayIter
    if _state["patched"]:
        return
    base = dataloader_module._BaseDataLoaderIter
    loader_cls = dataloader_module.DataLoader
    _originals["__next__"] = base.__next__
    _originals["_get_iterator"] = loader_cls._get_iterator
    _originals["__iter__"] = loader_cls.__iter__
    base.__next__ = _instrumented_next
    loader_cls._get_iterator = _instrumented_get_iterator
    loader_cls.__iter__ = _instrumented_iter
    _ReplayIter = _make_replay_iter_class(base)
    _state["patched"] = True


def unpatch(dataloader_module):
    """Restores torch (tests)."""
    if not _state["patched"]:
        return
    dataloader_module._BaseDataLoaderIter.__next__ = _originals["__next__"]
    dataloader_module.DataLoader._get_iterator = _originals["_get_iterator"]
    dataloader_module.DataLoader.__iter__ = _originals["__iter__"]
    _state["patched"] = False


def reset_for_tests():
    for key in ("loader", "dataset", "explicit", "replay", "pending", "epoch_ended_at", "snapshot", "owed", "unheld"):
        _state[key] = None
    _state["passive"] = False
    _state["chosen"] = False
    _state["epochs"] = 0


def mark_training_loader(loader):
    """Counts this loader and no other (when the automatic choice is wrong)."""
    _state["explicit"] = loader
    if _state["chosen"] and _state["loader"] is not loader:
        # Too late to change: iterations were already counted for another loader.
        sys.stderr.write("ds-analyzer: training_loader() called after another loader was already counted; ignored\n")


# -- torch.accelerator shim --------------------------------------------------


def install_accelerator_shim(torch):
    """torch < 2.6 lacks torch.accelerator, which current example scripts call.

    Added only to a profiled run (DSA_MODE set), only when missing, and backed
    by torch.cuda, so a script that would die with AttributeError on an older
    torch runs as it would with a CUDA-or-CPU torch 2.6. DSA_NO_SHIM=1 turns it off.
    """
    if hasattr(torch, "accelerator") or os.environ.get("DSA_NO_SHIM") == "1":
        return False
    import types

    cuda = torch.cuda
    mod = types.ModuleType("torch.accelerator")
    noted = []

    def note():
        # Said once, and only when the script really uses the shim.
        if not noted:
            noted.append(True)
            sys.stderr.write(
                f"ds-analyzer: torch {torch.__version__} has no torch.accelerator (torch >= 2.6); "
                "a shim backed by torch.cuda "
                "stands in for this profiled run (DSA_NO_SHIM=1 turns it off)\n"
            )

    mod.__doc__ = "ds-analyzer shim of torch.accelerator (torch < 2.6), backed by torch.cuda"

    def is_available():
        note()
        return bool(cuda.is_available())

    def current_accelerator(check_available=False):
        note()
        return torch.device("cuda") if cuda.is_available() else None

    def device_count():
        note()
        return cuda.device_count() if cuda.is_available() else 0

    def current_device_index():
        note()
        return cuda.current_device() if cuda.is_available() else -1

    def set_device_index(device):
        note()
        if cuda.is_available():
            cuda.set_device(device)

    def synchronize(device=None):
        note()
        if cuda.is_available() and cuda.is_initialized():
            cuda.synchronize(device)

    mod.is_available = is_available
    mod.current_accelerator = current_accelerator
    mod.device_count = device_count
    mod.current_device_index = mod.current_device_idx = current_device_index
    mod.set_device_index = mod.set_device_idx = set_device_index
    mod.synchronize = synchronize
    torch.accelerator = mod
    sys.modules["torch.accelerator"] = mod
    return True
