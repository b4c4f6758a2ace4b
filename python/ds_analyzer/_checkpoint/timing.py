"""Timing a save: each outermost save's clocks, sizes and fsyncs, written as one 'checkpoint' event.

A blocking save's event is held until the loop's next boundary (the next batch request, an epoch event, the
next save, the recorder's end or the exit): an os.fsync/os.fdatasync on the same thread of a file the save wrote
is part of the save, which extends to the sync's end (note 'synced-after'). An async save's event is written
when its background write ends (writeMs), or at the exit.
"""

import atexit
import functools
import os
import sys
import threading
import time

from .. import _recorder
from .diversions import divert, diverting, undivert
from .follow import follow_diversions
from .say import say
from .sizes import measure, scan, unknown

_perf = time.perf_counter

# Lightning and Hugging Face call torch.save inside their own save: only the
# outermost save of a thread is an event (depth), and its fsyncs go to it (save).
_local = threading.local()
_lock = threading.Lock()
# Outermost blocking saves in progress on any thread, and async saves whose
# background write has not finished: a helper thread's save is part of them.
_blocking = []
unfinished = []
_warned = set()
# The blocking save whose event waits for a sync after it (hold), or None.
_held = None


class _Save:
    """One outermost save: where it wrote, its clocks, and what to undo after it."""

    def __init__(self, api, rec):
        self.api = api
        self.rec = rec
        self.i = rec.iterations
        self.in_step = _in_step()
        self.began = _perf()
        self.sync_s = 0.0
        self.blocking_s = None
        self.measure = unknown
        # The (st_dev, st_ino) of what the save wrote, read when it returns; None: unknown.
        self.identify = unknown
        self.files = None
        self.thread = threading.get_ident()
        self.pid = os.getpid()
        self.ended_at = None  # wall clock at the end of the save (or of a sync after it), once held
        self.synced_after = False
        self.scratch = None  # the scratch path the save went to
        self.new_scratch = None  # the target whose scratch this save made (forgotten if the save fails)
        self.persisted = True
        self.note = None
        self.undo = []  # restore attributes
        self.done = False
        # A save after the recorder's end (a finally block, an atexit handler): diverted, no event.
        self.silent = False

    def divert_to_scratch(self, target, folder=False, overlay=False):
        """Synthetic mode: the save goes to a scratch path beside `target`, measured; it stands in
        for `target` until the exit (divert). `overlay`: `target` is a folder the save writes into."""
        scratch, made = divert(target, folder=folder, overlay=overlay)
        self.persisted = False
        self.note = "scratch"
        self.wrote(scratch)
        self.scratch = scratch
        if made:
            self.new_scratch = (target, overlay)
            follow_diversions()  # the first diversion: the script's file operations follow it from now on
        return scratch

    def wrote(self, path, since=None):
        """The save wrote `path`: its size and its files come from one scan, made when first asked for."""
        scanned = []

        def scanned_once():
            if not scanned:
                scanned.append(scan(path, since) or (None, None))
            return scanned[0]

        self.measure = lambda: scanned_once()[0]
        self.identify = lambda: scanned_once()[1]

    def abandon(self):
        """The save failed (or could not be prepared): undone, and a scratch it made is forgotten."""
        self.cleanup()
        if self.new_scratch is not None:
            target, overlay = self.new_scratch
            self.new_scratch = None
            undivert(target, overlay=overlay)

    def fields(self, write_ms=False):
        blocking_ms = self.blocking_s * 1000.0
        fields = {
            "i": self.i,
            "inStep": self.in_step,
            "api": self.api,
            "blockingMs": round(blocking_ms, 4),
            # Helper threads' fsyncs run in parallel and may add up past the save's own time.
            "syncMs": round(min(self.sync_s * 1000.0, blocking_ms), 4),
        }
        if write_ms is not False:
            fields["writeMs"] = None if write_ms is None else round(write_ms, 4)
        fields["bytes"] = measure(self.measure)
        fields["persisted"] = self.persisted
        note = self.note
        if self.synced_after:
            note = "synced-after" if note is None else note + ",synced-after"
        if note is not None:
            fields["note"] = note
        if self.ended_at is not None:
            fields["t"] = round(self.ended_at * 1000.0, 3)  # when it returned (or its sync ended), not when held
        return fields

    def finish(self, write_ms=False):
        """Writes the event once (an async save: from its callback or at exit), then undoes the diversion."""
        with _lock:
            if self.done:
                return
            self.done = True
        try:
            self.rec.event("checkpoint", self.fields(write_ms))
        finally:
            self.cleanup()

    def cleanup(self):
        for step in reversed(self.undo):
            try:
                step()
            except Exception as error:
                say(f"could not undo a checkpoint diversion ({type(error).__name__}: {error})")
        del self.undo[:]

    def owns(self, fd):
        """Whether `fd` (os.fsync's argument: an fd, or an object with fileno()) is a file this save wrote."""
        try:
            info = os.fstat(fd if isinstance(fd, int) else fd.fileno())
        except Exception:
            return False
        # A scratch stays until the exit (or the script removes it), so its inode is not reused meanwhile.
        return (info.st_dev, info.st_ino) in self.files

    def extend(self, sync_began, sync_ended):
        """A sync after the save, of its own files: the save lasted until it ended."""
        with _lock:
            self.sync_s += sync_ended - sync_began
            self.blocking_s = max(self.blocking_s, sync_ended - self.began)
            self.ended_at = time.time()
            self.synced_after = True


# -- running a save ------------------------------------------------------------


def _inside_a_save():
    if getattr(_local, "depth", 0):
        return True
    # DCP writes with helper threads, and an async save writes in the background:
    # their torch.save calls are parts of the save already being timed.
    return bool(_blocking or unfinished) and threading.current_thread() is not threading.main_thread()


def begin(api):
    """A _Save for an outermost save when profiled, else None (the original runs untouched)."""
    rec = _recorder.recorder()
    # profile --continue after the blocks: the job's saves are its own, untimed and written where it asks.
    if rec is None or rec.passive or _inside_a_save():
        return None
    if rec.ended:
        if not diverting(rec.config.mode):
            return None
        save = _Save(api, rec)  # still diverted: the user's checkpoints are never overwritten
        save.silent = True
        return save
    if _held is not None:
        _flush_held()  # the next save: the held one is over
    return _Save(api, rec)


def enter(save):
    _local.depth = getattr(_local, "depth", 0) + 1
    _local.save = save
    with _lock:
        _blocking.append(save)


def leave(save):
    save.blocking_s = _perf() - save.began
    with _lock:
        _blocking.remove(save)
    _local.depth -= 1
    _local.save = None


def _run_blocking(save, original, args, kwargs):
    """Runs the save with its depth and fsync accounting; returns its result."""
    enter(save)
    try:
        return original(*args, **kwargs)
    finally:
        leave(save)


def _begin_prepared(api, prepare, args, kwargs):
    """The save begun and the arguments to call it with; save None (the call's own arguments) when it runs untimed."""
    save = begin(api)
    if save is None:
        return None, args, kwargs
    try:
        call_args, call_kwargs = prepare(save, args, kwargs, diverting(save.rec.config.mode))
    except Exception as error:
        save.abandon()
        say(f"could not time a checkpoint save ({type(error).__name__}: {error}); it runs untimed")
        return None, args, kwargs
    return save, call_args, call_kwargs


def timed(api, original, prepare):
    """Wraps a blocking save API. prepare(save, args, kwargs, divert) -> (args, kwargs) to call it with."""

    def save_wrapper(*args, **kwargs):
        save, call_args, call_kwargs = _begin_prepared(api, prepare, args, kwargs)
        if save is None:
            return original(*call_args, **call_kwargs)
        try:
            result = _run_blocking(save, original, call_args, call_kwargs)
        except BaseException:
            save.abandon()  # the user's error, raised as is; no event for a save that failed
            raise
        if save.silent:
            save.cleanup()
        else:
            hold(save)
        return result

    return save_wrapper


def timed_async(api, original, prepare):
    """Wraps dcp.async_save: blockingMs is the call (staging); writeMs when its future completes."""

    def async_save_wrapper(*args, **kwargs):
        save, call_args, call_kwargs = _begin_prepared(api, prepare, args, kwargs)
        if save is None:
            return original(*call_args, **call_kwargs)
        if save.silent:
            try:
                result = _run_blocking(save, original, call_args, call_kwargs)
            except BaseException:
                save.abandon()
                raise
            future = _future_of(result)
            if future is not None:
                future.add_done_callback(lambda done: save.cleanup())  # the writer's path back once written
            return result
        with _lock:
            unfinished.append(save)
        _at_end(save.rec, _write_unfinished)
        try:
            result = _run_blocking(save, original, call_args, call_kwargs)
        except BaseException:
            _forget(save)
            save.abandon()
            raise
        try:
            _when_written(result, save)
        except Exception as error:
            say(f"could not follow an async checkpoint save ({type(error).__name__}: {error})")
        return result

    return async_save_wrapper


def _future_of(result):
    """async_save's Future, or None: torch >= 2.3 returns a Future; later versions an
    AsyncSaveResponse whose upload_completion is the write's Future."""
    future = result if hasattr(result, "add_done_callback") else getattr(result, "upload_completion", None)
    return future if hasattr(future, "add_done_callback") else None


def _when_written(result, save):
    future = _future_of(result)
    if future is None:
        return  # written at exit, writeMs null

    def written(done):
        _forget(save)
        try:
            failed = done.cancelled() or done.exception() is not None
        except Exception:
            failed = True
        if failed:
            save.abandon()  # no event for a write that did not happen
            return
        _finish_quietly(save, write_ms=(_perf() - save.began) * 1000.0)

    future.add_done_callback(written)  # runs at once when already done


def _forget(save):
    with _lock:
        if save in unfinished:
            unfinished.remove(save)


def _write_unfinished():
    """The job ends before an async save's write did: its event, writeMs null."""
    with _lock:
        pending = list(unfinished)
        del unfinished[:]
    for save in pending:
        _finish_quietly(save, write_ms=None)


_AT_END = []


def _at_end(rec, hook):
    """`hook` runs before the recorder's end event (a budget's end or the exit, while the file is open)
    and at the exit (a recorder that never started: the scratch still goes); once per recorder."""
    if (rec, hook) in _AT_END:
        return
    _AT_END.append((rec, hook))
    rec.before_end.append(hook)
    atexit.register(hook)


def hold(save):
    """A blocking save returned: its event waits for the loop's next boundary, when a sync after it can be told."""
    global _held
    rec = save.rec
    try:
        files = None if rec.ended else save.identify()
    except Exception as error:
        say(f"could not follow a checkpoint save ({type(error).__name__}: {error})")
        files = None
    if not files:
        _finish_quietly(save)  # nothing a sync could be matched with
        return
    # Measured and undone now, as the script goes on (it may close the file, list the folder):
    # only the event waits.
    size = measure(save.measure)
    save.measure = lambda: size
    save.cleanup()
    save.files = files
    save.ended_at = time.time()
    with _lock:
        previous, _held = _held, save
    _at_end(rec, _flush_held)
    rec.pending_save = _flush_held  # the recorder calls it at the next boundary
    if previous is not None:
        _finish_quietly(previous)


def _flush_held():
    """Writes the held save's event: at the next boundary, save, end or exit."""
    global _held
    with _lock:
        save, _held = _held, None
    if save is None:
        return
    if save.rec.pending_save is _flush_held:
        save.rec.pending_save = None
    if save.pid != os.getpid():
        return  # a forked child (a loader worker): the parent writes it
    _finish_quietly(save)


def _finish_quietly(save, write_ms=False):
    try:
        save.finish(write_ms)
    except Exception as error:
        say(f"could not record a checkpoint save ({type(error).__name__}: {error})")


# -- fsync accounting ----------------------------------------------------------


def _timed_sync(original):
    """os.fsync/os.fdatasync, adding their time to the save in progress.

    Wrapped once for good, not swapped in and out around each save: swapping a
    module attribute while other threads run would race with them.
    """

    def sync(fd):
        save = getattr(_local, "save", None)
        if save is None:
            held = _held
            if held is not None and held.thread == threading.get_ident() and held.owns(fd):
                # After the save returned, before the loop went on: forcing its data out is part of it.
                began = _perf()
                try:
                    return original(fd)
                finally:
                    held.extend(began, _perf())
        if save is None and _blocking and threading.current_thread() is not threading.main_thread():
            save = _blocking[-1]  # a helper thread of that save (DCP's writer threads)
        if save is None:
            return original(fd)
        began = _perf()
        try:
            return original(fd)
        finally:
            elapsed = _perf() - began
            with _lock:
                save.sync_s += elapsed

    return functools.update_wrapper(sync, original)


def patch_syncs():
    for name in ("fsync", "fdatasync"):
        original = getattr(os, name, None)
        if original is not None and not hasattr(original, "__wrapped__"):
            setattr(os, name, _timed_sync(original))


# -- in a training step? -------------------------------------------------------


def _in_step():
    """Whether a counted batch is out and the loop has not asked for the next one."""
    torch_layer = sys.modules.get("ds_analyzer._torch")
    if torch_layer is not None and torch_layer._state["pending"] is not None:
        return True
    manual = sys.modules.get("ds_analyzer")
    return bool(manual is not None and manual._in_step())
