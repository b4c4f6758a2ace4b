"""ds-analyzer, the job side: profile a training loop for `ds-analyzer profile`.

PyTorch scripts need nothing from this module: when `ds-analyzer profile` runs
them, every DataLoader is instrumented automatically (docs/pytorch.md).

For loops that do not use a DataLoader (JAX, TensorFlow, a custom reader):

    import ds_analyzer

    for batch in ds_analyzer.iterate(reader):      # times the wait in next()
        train_step(batch)                           # and the compute in between

A checkpoint saved by the script's own code (torch.save and the DCP, Lightning
and Hugging Face saves are timed without it):

    with ds_analyzer.checkpoint(path):              # one 'checkpoint' event
        my_writer.save(state, path)

or, when there is no iterable to wrap:

    while True:
        with ds_analyzer.data():                    # the loop waits for data here
            batch = reader.read()
        with ds_analyzer.compute(samples=len(batch)):
            train_step(batch)

Outside a profiled run (DSA_MODE unset) all of this is a no-op: `iterate`
returns its argument unchanged and the context managers do nothing.

Reading a profile afterwards (no torch needed; pandas when installed):

    p = ds_analyzer.load("profiles/train-20250101T120000.json")
    p.iterations                                    # one row per iteration
    p.split, p.modes                                # the JSON's analysis, modes
"""

import os as _os
import sys as _sys
import time as _time

from . import _recorder
from ._recorder import BudgetReached

__all__ = [
    "iterate",
    "data",
    "compute",
    "checkpoint",
    "training_loader",
    "activate",
    "enabled",
    "resident_subset",
    "use_subset",
    "load",
    "MODE",
    "SYNTHETIC",
    "BudgetReached",
]
__version__ = "0.1.0"

#: The profiling mode of this run ('synthetic', 'cached', 'cold'), or None.
MODE = _os.environ.get("DSA_MODE") if _os.environ.get("DSA_MODE") in _recorder.MODES else None
#: True in the synthetic mode: a manual loop should reuse its first batch.
SYNTHETIC = MODE == "synthetic"

_perf = _time.perf_counter


def load(path):
    """Reads a profile file: its modes, split and per-iteration rows (docs/export.md, "Python")."""
    # Imported here, not at the top: the job-side hook that sitecustomize
    # loads into every training process never pays for the reader.
    from ._load import load as _load_profile

    return _load_profile(path)


def enabled():
    """Whether this process is being profiled."""
    return _recorder.recorder() is not None


def _manual_recorder():
    rec = _recorder.recorder(source="manual")
    if rec is None:
        return None
    if not rec.started:
        rec.source = "manual"
        # The manual API owns the counting: an automatically instrumented
        # DataLoader inside it must not count its batches a second time.
        _recorder.manual_owns_counting = True
    return rec


def _count(batch, samples):
    if samples is None:
        from ._torch import count_samples

        return count_samples(batch, 0)
    if callable(samples):
        return int(samples(batch))
    return int(samples)


def _sync_device(rec):
    if not rec.config.sync:
        return
    torch = _sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def resident_subset():
    """The files a cached mode on a resident subset asks this job to sample from.

    A frozenset of absolute paths (DSA_SUBSET_FILE, docs/protocol.md), or None
    when the whole dataset may be read. A loop that honours it reads only those
    files and then calls use_subset(kept) before its first batch.
    """
    from . import _subset

    return _subset.subset_paths()


_SUBSET = {}


def use_subset(kept, note=None):
    """Tells the profiler this job samples only from resident_subset(): `kept` samples.

    Goes into the start event (subsetFiles); without it the cached mode on a
    subset is not proven. Call it before iterate() or the first data() block.
    """
    _SUBSET["kept"] = int(kept)
    _SUBSET["note"] = note


def _start(rec, batch_size=None, workers=None):
    rec.start(batch_size=batch_size, workers=workers, subset_files=_SUBSET.get("kept"), subset_note=_SUBSET.get("note"))


def iterate(iterable, samples=None, batch_size=None, workers=None):
    """Wraps any iterable of batches so each step is timed and counted.

    samples: an int, or a function batch -> int; default: the leading dimension
    of the first array-like in the batch. In the synthetic mode the first batch
    is replayed and `iterable` is not consulted again. After the budget, or
    when the profiler asks, the job ends cleanly (SystemExit(0)).
    """
    rec = _manual_recorder()
    if rec is None:
        return iterable
    _start(rec, batch_size=batch_size, workers=workers)
    return _iterate(iterable, rec, samples)


_REPLAY = []
# True while a manual loop's batch is out (iterate() between yields, or a compute() block):
# a checkpoint saved then ran inside a training step.
_STEP_OPEN = [False]


def _in_step():
    return _STEP_OPEN[0]


def _iterate(iterable, rec, samples):
    it = iter(iterable)
    pending = False
    wait_s = 0.0
    count = 0
    returned = 0.0
    try:
        while True:
            _sync_device(rec)
            now = _perf()
            if pending:
                rec.iteration(wait_s, now - returned, count)
                pending = _STEP_OPEN[0] = False
            reason = rec.stop_reason()
            if reason is not None or rec.ended:
                rec.end(reason or "budget")
                raise BudgetReached(reason or "budget")
            switch = rec.switch_asked()
            if switch is not None and switch[1] == _recorder.TRAIN:
                # profile --continue: the blocks are over; the loop runs on its iterable, unprofiled.
                _go_passive(rec, switch[0])
                for batch in it:
                    yield batch
                return
            if switch is not None:
                # A plain iterable does not say what it prefetched: the CLI then finds the carried batches itself.
                rec.switch(switch[0], switch[1], None)
            if rec.config.continue_run and rec.config.mode == "synthetic" and (switch is not None or not count):
                _cannot_hold(rec)
            start = _perf()
            switchable = rec.config.control_file is not None
            if _REPLAY and rec.config.mode == "synthetic" and not rec.config.continue_run:
                batch, count = _REPLAY[0]
            else:
                try:
                    batch = next(it)
                except StopIteration:
                    return
                count = _count(batch, samples)
                if switchable:
                    # One launch: a later synthetic block replays the last real batch.
                    _REPLAY[:] = [(batch, count)]
                elif SYNTHETIC:
                    _REPLAY.append((batch, count))
            returned = _perf()
            wait_s = returned - start
            pending = _STEP_OPEN[0] = True
            yield batch
    finally:
        _STEP_OPEN[0] = False
        close = getattr(it, "close", None)
        if close is not None:
            close()


class _Phases:
    """State of the data()/compute() context managers (one loop per process)."""

    def __init__(self):
        self.wait_s = 0.0
        self.started = 0.0
        self.samples = 0


_PHASES = _Phases()


class _Data:
    __slots__ = ("rec",)

    def __enter__(self):
        rec = self.rec = _manual_recorder()
        if rec is None:
            return self
        _start(rec)
        reason = rec.stop_reason()
        if reason is not None or rec.ended:
            rec.end(reason or "budget")
            raise BudgetReached(reason or "budget")
        _PHASES.started = _perf()
        return self

    def __exit__(self, kind, value, traceback):
        if self.rec is not None and kind is None:
            _PHASES.wait_s += _perf() - _PHASES.started
        return False


class _Compute:
    __slots__ = ("rec", "samples")

    def __init__(self, samples):
        self.samples = samples

    def __enter__(self):
        rec = self.rec = _manual_recorder()
        if rec is not None:
            _start(rec)
            _PHASES.started = _perf()
            _STEP_OPEN[0] = True
        return self

    def __exit__(self, kind, value, traceback):
        rec = self.rec
        _STEP_OPEN[0] = False
        if rec is not None and kind is None:
            _sync_device(rec)
            rec.iteration(_PHASES.wait_s, _perf() - _PHASES.started, int(self.samples))
            _PHASES.wait_s = 0.0
        return False


def data():
    """Context manager around the part of the loop that obtains a batch.

    Entering it is an iteration boundary: after the budget, or when the
    profiler asks, it ends the job cleanly with SystemExit(0).
    """
    return _Data()


def compute(samples=0):
    """Context manager around the training step; leaving it records one iteration."""
    return _Compute(samples)


def checkpoint(path=None):
    """Context manager around a checkpoint save the hook cannot see (a custom writer).

    The block is timed as one save (api 'manual'); `path`, a file or folder, is
    sized after it. The save is the script's own: in the synthetic mode it is
    not diverted. torch.save and the DCP, Lightning and Hugging Face saves
    inside the block are part of it, not events of their own. A no-op outside a
    profiled run.
    """
    from . import _checkpoint

    return _checkpoint.ManualCheckpoint(path)


def training_loader(loader):
    """Marks the DataLoader to count, when the automatic choice would be wrong.

    Call it before the loader is first iterated. A no-op outside a profiled run.
    """
    if _recorder.recorder() is None:
        return loader
    from . import _torch

    _torch.mark_training_loader(loader)
    return loader


def activate():
    """Instruments PyTorch in this process without the sitecustomize hook
    (e.g. an interpreter that ignores PYTHONPATH). A no-op when not profiled."""
    if _recorder.recorder() is None:
        return False
    from . import _auto

    _auto.install()
    return True


def _go_passive(rec, block):
    rec.block = block
    rec.config.mode = _recorder.TRAIN
    rec.passive = True
    _STEP_OPEN[0] = False
    rec.flush()


def _cannot_hold(rec):
    """profile --continue: iterate() cannot see the training state to undo a synthetic block, so it trains on real
    batches, and says so: the CLI leaves the block out (docs/pytorch.md, "Training unharmed")."""
    rec.unheld = True
    rec.event(
        "snapshot",
        {
            "block": rec.block,
            "action": "refused",
            "i": rec.iterations,
            "reason": "ds_analyzer.iterate() cannot hold the training state; the zero-code DataLoader hook can",
        },
    )
