"""Prep taken apart: the training loader's per-sample work timed by stage, in the process that does it.

A DataLoader worker (or the main process, with num_workers=0) builds each batch in
`_MapDatasetFetcher.fetch` / `_IterableDatasetFetcher.fetch`: the dataset's items, then the collate
function. While a fetch of the training loader runs (its collate_fn is a _TimedCollate, set by _torch.py
on the loader the hook would count), these stages are timed where the hook can see them without a code change:

- read: torchvision's `pil_loader` (what ImageFolder's default loader calls) reads the file's bytes, timed
  alone, then decodes them from memory; `torchvision.io.read_file`.
- decode: PIL's `ImageFile.load` (PIL decodes lazily, on the first load or convert) and the convert in
  `pil_loader`; `torchvision.io.decode_image`/`decode_jpeg`/`decode_png`. An image opened from a path
  by the dataset's own code reads its file while it decodes: that stage is named `read+decode`.
- transform: each transform of a `torchvision.transforms.Compose`, by its class name.
- collate: the loader's collate_fn.
- the rest of the fetch (the dataset's own code, `Image.open`'s header read, labels) is the fetch's time
  less the stages': the CLI reports it as unattributed.

Times are wall time (perf_counter_ns, tens of ns a read; a thread-CPU clock is a system call), exclusive
of nested stages. Each fetch also reads the thread's CPU clock twice, so the CLI can tell wall from CPU
where workers waited for a core. Each process appends its cumulative totals, one `stages` event
(docs/protocol.md), to DSA_EVENTS_DIR/stages-PID.jsonl at most every FLUSH_EVERY_NS, checked after a
fetch, and once more as it exits; a worker killed by a signal loses at most its last interval.
"""

import atexit
import io
import json
import os
import threading
import time

from ._files import append_line

FLUSH_EVERY_NS = 250_000_000

_ns = time.perf_counter_ns
_cpu_ns = time.thread_time_ns
_ident = threading.get_ident


class _Totals:
    """One process's cumulative stage times; only the thread inside a counted fetch adds to them."""

    def __init__(self, directory):
        self.pid = os.getpid()
        self.path = os.path.join(directory, "stages-%d.jsonl" % self.pid)
        self.stages = {}  # (kind, name) -> [ns, calls]
        self.samples = 0
        self.batches = 0
        self.fetch_ns = 0
        self.fetch_cpu_ns = 0
        self.next_flush = 0
        self.dirty = False
        # While a counted fetch runs: its thread, and the stack of open stages' child time.
        self.thread = None
        self.stack = None

    def line(self):
        stages = [
            {"kind": kind, "name": name, "ms": round(ns / 1e6, 4), "calls": calls}
            for (kind, name), (ns, calls) in self.stages.items()
        ]
        record = {
            "v": 1,
            "type": "stages",
            "t": round(time.time() * 1000.0, 3),
            "pid": self.pid,
            "samples": self.samples,
            "batches": self.batches,
            "fetchMs": round(self.fetch_ns / 1e6, 4),
            "fetchCpuMs": round(self.fetch_cpu_ns / 1e6, 4),
            "stages": stages,
        }
        return json.dumps(record, separators=(",", ":")) + "\n"

    def flush(self):
        if os.getpid() != self.pid or not self.dirty:
            return
        self.dirty = False
        append_line(self.path, self.line())


_state = {"dir": None, "totals": None, "patched": False}
_originals = {}


def enabled():
    return _state["dir"] is not None


def enable(directory):
    """Stages are timed in this process and its forked workers, their totals written under `directory`."""
    if _state["dir"] is None:
        # A forked worker counts its own fetches in its own file, from zero.
        os.register_at_fork(after_in_child=lambda: _state.update(totals=None))
    _state["dir"] = directory


def _totals():
    totals = _state["totals"]
    if totals is None:
        totals = _state["totals"] = _Totals(_state["dir"])
        atexit.register(_flush_quietly, totals)
        try:  # a forked worker leaves through multiprocessing, which runs its finalizers, not atexit
            from multiprocessing import util

            util.Finalize(None, _flush_quietly, args=(totals,), exitpriority=100)
        except Exception:
            pass
    return totals


def _flush_quietly(totals):
    try:
        totals.flush()
    except OSError:
        pass


def _counting():
    """This process's totals when the calling thread is inside a counted fetch, else None."""
    totals = _state["totals"]
    if totals is None or totals.stack is None or totals.thread != _ident():
        return None
    return totals


def timed(kind, name, fn, *args, **kwargs):
    """fn(*args, **kwargs), its time (less that of stages inside it) added to (kind, name) when counting."""
    totals = _counting()
    if totals is None:
        return fn(*args, **kwargs)
    stack = totals.stack
    if stack[-1][1] == name and stack[-1][2] == kind:
        return fn(*args, **kwargs)  # PIL's load() inside pil_loader's decode: one stage, one call
    frame = [0, name, kind]
    stack.append(frame)
    start = _ns()
    try:
        return fn(*args, **kwargs)
    finally:
        elapsed = _ns() - start
        stack.pop()
        if stack:
            stack[-1][0] += elapsed
        entry = totals.stages.get((kind, name))
        if entry is None:
            entry = totals.stages[(kind, name)] = [0, 0]
        entry[0] += elapsed - frame[0]
        entry[1] += 1


class TimedCollate:
    """The training loader's collate_fn, timed; also the mark that its fetches are counted."""

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, data):
        return timed("collate", "collate", self.fn, data)

    def __reduce__(self):  # spawned workers get it pickled
        return (TimedCollate, (self.fn,))


def mark_loader(loader):
    """The loader's fetches are counted from its next iterator on (idempotent)."""
    fn = getattr(loader, "collate_fn", None)
    if fn is None or isinstance(fn, TimedCollate):
        return
    try:
        loader.collate_fn = TimedCollate(fn)
    except Exception:
        pass  # a loader whose collate_fn cannot be set (a read-only property): its stages go untimed, the job runs


def _timed_fetch(original):
    def fetch(self, possibly_batched_index):
        if type(self.collate_fn) is not TimedCollate:
            return original(self, possibly_batched_index)
        totals = _totals()
        if totals.stack is not None:
            return original(self, possibly_batched_index)  # a fetch inside a fetch: the outer one counts
        totals.thread = _ident()
        totals.stack = [[0, None, None]]
        start, cpu = _ns(), _cpu_ns()
        try:
            batch = original(self, possibly_batched_index)
        finally:
            elapsed = _ns() - start
            cpu_elapsed = _cpu_ns() - cpu
            totals.stack = None
            totals.thread = None
        # Counted only when the batch came: an iterable dataset's end raises StopIteration in here.
        totals.fetch_ns += elapsed
        totals.fetch_cpu_ns += cpu_elapsed
        totals.samples += len(possibly_batched_index) if self.auto_collation else 1
        totals.batches += 1
        totals.dirty = True
        now = start + elapsed
        if now >= totals.next_flush:
            totals.next_flush = now + FLUSH_EVERY_NS
            _flush_quietly(totals)
        return batch

    fetch._dsa_original = original
    return fetch


def patch_fetchers(fetch_module):
    """Times the training loader's fetches (torch.utils.data._utils.fetch), in every process."""
    for name in ("_MapDatasetFetcher", "_IterableDatasetFetcher"):
        cls = getattr(fetch_module, name, None)
        if cls is None or getattr(cls.fetch, "_dsa_original", None) is not None:
            continue
        cls.fetch = _timed_fetch(cls.fetch)


def unpatch_fetchers(fetch_module):
    for name in ("_MapDatasetFetcher", "_IterableDatasetFetcher"):
        cls = getattr(fetch_module, name, None)
        original = getattr(getattr(cls, "fetch", None), "_dsa_original", None)
        if original is not None:
            cls.fetch = original


# -- torchvision and PIL -------------------------------------------------------


def _stage_name(transform):
    name = getattr(type(transform), "__name__", "transform")
    if name == "function":
        name = getattr(transform, "__name__", name)  # a plain function in a Compose
    return name


def patch_torchvision(torchvision):
    """Compose's transforms, pil_loader's read and decode, torchvision.io's read and decodes."""
    if _originals.get("torchvision"):
        return
    _originals["torchvision"] = True
    compose = torchvision.transforms.Compose
    compose_call = compose.__call__

    def __call__(self, img):
        if _counting() is None:
            return compose_call(self, img)
        # torchvision's own loop, with each transform timed by its class name (a nested Compose times its own).
        for t in self.transforms:
            img = t(img) if isinstance(t, compose) else timed("transform", _stage_name(t), t, img)
        return img

    compose.__call__ = __call__
    _originals["compose"] = (compose, compose_call)

    folder = getattr(getattr(torchvision, "datasets", None), "folder", None)
    if folder is not None and hasattr(folder, "pil_loader"):
        pil_loader = folder.pil_loader

        def timed_pil_loader(path):
            if _counting() is None:
                return pil_loader(path)
            data = timed("read", "read", _read_bytes, path)
            return timed("decode", "decode", _decode_bytes, data)

        folder.pil_loader = timed_pil_loader
        _originals["pil_loader"] = (folder, pil_loader)

    tv_io = getattr(torchvision, "io", None)
    if tv_io is not None:
        image_module = getattr(tv_io, "image", None)
        for fn_name, kind in (
            ("read_file", "read"),
            ("decode_image", "decode"),
            ("decode_jpeg", "decode"),
            ("decode_png", "decode"),
        ):
            for module in (tv_io, image_module):
                fn = getattr(module, fn_name, None) if module is not None else None
                if fn is None or getattr(fn, "_dsa_original", None) is not None:
                    continue
                wrapped = _timed_function(kind, fn)
                setattr(module, fn_name, wrapped)
                _originals.setdefault("io", []).append((module, fn_name, fn))


def _timed_function(kind, fn):
    def wrapper(*args, **kwargs):
        return timed(kind, kind, fn, *args, **kwargs)

    wrapper._dsa_original = fn
    wrapper.__name__ = getattr(fn, "__name__", kind)
    wrapper.__doc__ = getattr(fn, "__doc__", None)
    return wrapper


def _read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def _decode_bytes(data):
    from PIL import Image

    # pil_loader's decode, from the bytes already read: the same image, and the read timed apart.
    img = Image.open(io.BytesIO(data))
    return img.convert("RGB")


def patch_pil(image_file_module):
    """PIL decodes on the first load(): timed as decode, or read+decode when the image reads its file."""
    cls = getattr(image_file_module, "ImageFile", None)
    if cls is None or getattr(cls.load, "_dsa_original", None) is not None:
        return
    load = cls.load

    def timed_load(self, *args, **kwargs):
        if _counting() is None:
            return load(self, *args, **kwargs)
        name = "decode" if isinstance(getattr(self, "fp", None), (io.BytesIO, type(None))) else "read+decode"
        return timed("decode", name, load, self, *args, **kwargs)

    timed_load._dsa_original = load
    cls.load = timed_load
    _originals["pil"] = (cls, load)


def unpatch_for_tests():
    """Puts torchvision and PIL back, forgets the totals (tests)."""
    compose = _originals.pop("compose", None)
    if compose is not None:
        compose[0].__call__ = compose[1]
    loader = _originals.pop("pil_loader", None)
    if loader is not None:
        loader[0].pil_loader = loader[1]
    for module, name, fn in _originals.pop("io", []):
        setattr(module, name, fn)
    pil = _originals.pop("pil", None)
    if pil is not None:
        pil[0].load = pil[1]
    _originals.pop("torchvision", None)
    _state.update(dir=None, totals=None)
