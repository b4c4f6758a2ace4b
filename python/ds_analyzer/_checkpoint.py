"""Checkpoint saves: each outermost save timed and sized, one 'checkpoint' event.

Patched when their modules are imported (_auto._AFTER_IMPORT): torch.save,
torch.distributed.checkpoint's save / save_state_dict / async_save, Lightning's
Trainer.save_checkpoint, Hugging Face Trainer._save_checkpoint; and the manual
ds_analyzer.checkpoint(). In a profiled run a save is written to a scratch
path beside its target (same file system, so the same write speed) and
measured: the user's checkpoints are never overwritten (diverting() says when:
every mode, unless DSA_KEEP_OUTPUTS=1, profile --keep-outputs, asks for real
saves; the synthetic mode always, its model being trained on one batch). The scratch stands in
for the target until the process exits (then it is removed): the script's own
copies, renames, removals, reads and existence checks of the target follow it
to the scratch ("following a diversion" below). docs/pytorch.md,
"Checkpoints"; the event is CheckpointEventSchema in src/schema/events.ts.

A blocking save's event is held until the loop's next boundary (the next batch
request, an epoch event, the next save, the recorder's end or the exit): an
os.fsync/os.fdatasync on the same thread of a file the save wrote (same device
and inode: the file, the file object's fd, the tmp file os.replace'd into place,
any file of a checkpoint folder or the folder itself) is part of the save, which
extends to the sync's end (note 'synced-after').
"""

import atexit
import builtins
import functools
import io
import os
import pathlib
import shutil
import stat
import sys
import threading
import time

from . import _recorder

_perf = time.perf_counter

# Lightning and Hugging Face call torch.save inside their own save: only the
# outermost save of a thread is an event (depth), and its fsyncs go to it (save).
_local = threading.local()
_lock = threading.Lock()
# Outermost blocking saves in progress on any thread, and async saves whose
# background write has not finished: a helper thread's save is part of them.
_blocking = []
_unfinished = []
_warned = set()
# The blocking save whose event waits for a sync after it (_hold), or None.
_held = None
# HF: a file written this long before the save began still counts as its own
# (file times come from a coarse clock, a tick behind perf_counter).
MTIME_SLACK_S = 0.05


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
        self.measure = _unknown
        # The (st_dev, st_ino) of what the save wrote, read when it returns; None: unknown.
        self.identify = _unknown
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
        for `target` until the exit (_divert). `overlay`: `target` is a folder the save writes into."""
        scratch, made = _divert(target, folder=folder, overlay=overlay)
        self.persisted = False
        self.note = "scratch"
        self.wrote(scratch)
        self.scratch = scratch
        if made:
            self.new_scratch = (target, overlay)
        return scratch

    def wrote(self, path, since=None):
        """The save wrote `path`: its size and its files come from one scan, made when first asked for."""
        scanned = []

        def scan():
            if not scanned:
                scanned.append(_scan(path, since) or (None, None))
            return scanned[0]

        self.measure = lambda: scan()[0]
        self.identify = lambda: scan()[1]

    def abandon(self):
        """The save failed (or could not be prepared): undone, and a scratch it made is forgotten."""
        self.cleanup()
        if self.new_scratch is not None:
            target, overlay = self.new_scratch
            self.new_scratch = None
            _undivert(target, overlay=overlay)

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
        fields["bytes"] = _measure(self.measure)
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
                _say(f"could not undo a checkpoint diversion ({type(error).__name__}: {error})")
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
    return bool(_blocking or _unfinished) and threading.current_thread() is not threading.main_thread()


def _begin(api):
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


def _enter(save):
    _local.depth = getattr(_local, "depth", 0) + 1
    _local.save = save
    with _lock:
        _blocking.append(save)


def _leave(save):
    save.blocking_s = _perf() - save.began
    with _lock:
        _blocking.remove(save)
    _local.depth -= 1
    _local.save = None


def _run_blocking(save, original, args, kwargs):
    """Runs the save with its depth and fsync accounting; returns its result."""
    _enter(save)
    try:
        return original(*args, **kwargs)
    finally:
        _leave(save)


def _begin_prepared(api, prepare, args, kwargs):
    """The save begun and the arguments to call it with; save None (the call's own arguments) when it runs untimed."""
    save = _begin(api)
    if save is None:
        return None, args, kwargs
    try:
        call_args, call_kwargs = prepare(save, args, kwargs, diverting(save.rec.config.mode))
    except Exception as error:
        save.abandon()
        _say(f"could not time a checkpoint save ({type(error).__name__}: {error}); it runs untimed")
        return None, args, kwargs
    return save, call_args, call_kwargs


def _timed(api, original, prepare):
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
            _hold(save)
        return result

    return save_wrapper


def _timed_async(api, original, prepare):
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
            _unfinished.append(save)
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
            _say(f"could not follow an async checkpoint save ({type(error).__name__}: {error})")
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
        if save in _unfinished:
            _unfinished.remove(save)


def _write_unfinished():
    """The job ends before an async save's write did: its event, writeMs null."""
    with _lock:
        pending = list(_unfinished)
        del _unfinished[:]
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


def _hold(save):
    """A blocking save returned: its event waits for the loop's next boundary, when a sync after it can be told."""
    global _held
    rec = save.rec
    try:
        files = None if rec.ended else save.identify()
    except Exception as error:
        _say(f"could not follow a checkpoint save ({type(error).__name__}: {error})")
        files = None
    if not files:
        _finish_quietly(save)  # nothing a sync could be matched with
        return
    # Measured and undone now, as the script goes on (it may close the file, list the folder):
    # only the event waits.
    size = _measure(save.measure)
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
        _say(f"could not record a checkpoint save ({type(error).__name__}: {error})")


# -- what each API saves to ----------------------------------------------------


def _arg(args, kwargs, index, name):
    return args[index] if len(args) > index else kwargs.get(name)


def _with_arg(args, kwargs, index, name, value):
    if len(args) > index:
        return args[:index] + (value,) + args[index + 1 :], kwargs
    kwargs = dict(kwargs)
    kwargs[name] = value
    return args, kwargs


def _is_local_path(target):
    if isinstance(target, bytes):
        target = os.fsdecode(target)
    if isinstance(target, str):
        return "://" not in target  # s3://, gs://: not a path we can put a scratch beside
    return hasattr(target, "__fspath__")


def _prepare_path_or_file(save, target, divert, folder=False):
    """What to save to instead of `target`: a scratch path (divert), else `target` itself."""
    if _is_local_path(target):
        if divert:
            return save.divert_to_scratch(target, folder=folder)
        save.wrote(target)
        return target
    if hasattr(target, "write"):
        start = _tell(target)
        save.measure = lambda: _written_since(target, start)
        save.identify = lambda: _file_of_stream(target)
        if divert:
            save.note = "open-file"
            _warn_once(
                "open-file",
                "profiled run: a checkpoint saved to an open file object cannot be diverted "
                "to a scratch file; it is written for real",
            )
        return target
    _cannot_divert(save, divert)
    return target


def _cannot_divert(save, divert):
    if divert:
        save.note = "custom-writer"
        _warn_once(
            "custom-writer",
            "profiled run: a checkpoint written by a custom writer cannot be diverted "
            "to a scratch path; it is written for real",
        )


def _prepare_torch_save(save, args, kwargs, divert):
    target = _arg(args, kwargs, 1, "f")
    return _with_arg(args, kwargs, 1, "f", _prepare_path_or_file(save, target, divert))


def _prepare_dcp(save, args, kwargs, divert):
    """dcp.save(state_dict, *, checkpoint_id=None, storage_writer=None, ...);
    older: save(state_dict, storage_writer)."""
    checkpoint_id = kwargs.get("checkpoint_id")  # keyword-only
    if checkpoint_id is not None and _is_local_path(checkpoint_id):
        kwargs = dict(kwargs, checkpoint_id=_prepare_path_or_file(save, checkpoint_id, divert, folder=True))
        return args, kwargs
    writer = _arg(args, kwargs, 1, "storage_writer")
    path = getattr(writer, "path", None)
    if path is None or not _is_local_path(path):
        _cannot_divert(save, divert)
        return args, kwargs
    # FileSystemWriter: its path is diverted and put back when the save is over.
    new = _prepare_path_or_file(save, path, divert, folder=True)
    if new is not path:
        writer.path = type(path)(new)
        save.undo.insert(0, lambda: setattr(writer, "path", path))
    return args, kwargs


def _prepare_lightning(save, args, kwargs, divert):
    """Trainer.save_checkpoint(self, filepath, weights_only=False, storage_options=None)."""
    target = _arg(args, kwargs, 1, "filepath")
    return _with_arg(args, kwargs, 1, "filepath", _prepare_path_or_file(save, target, divert))


def _prepare_hf(save, args, kwargs, divert):
    """Trainer._save_checkpoint(self, model, trial, ...) writes <args.output_dir>/checkpoint-<step>/."""
    trainer = args[0]
    training_args = trainer.args
    output_dir = training_args.output_dir
    if output_dir is None or not _is_local_path(output_dir):
        _cannot_divert(save, divert)
        return args, kwargs
    if not divert:
        since = time.time() - (_perf() - save.began) - MTIME_SLACK_S
        save.wrote(output_dir, since)
        return args, kwargs
    # The checkpoint-<step> folders go to a scratch folder that stands in for output_dir's entries.
    scratch = save.divert_to_scratch(output_dir, folder=True, overlay=True)
    state = getattr(trainer, "state", None)
    best = getattr(state, "best_model_checkpoint", None)
    # object.__setattr__: some transformers versions freeze TrainingArguments.
    object.__setattr__(training_args, "output_dir", scratch)

    def restore():
        object.__setattr__(training_args, "output_dir", output_dir)
        # A best checkpoint inside the scratch folder goes at the exit: keep the last real one.
        now_best = getattr(state, "best_model_checkpoint", None)
        if isinstance(now_best, str) and now_best.startswith(scratch):
            state.best_model_checkpoint = best

    save.undo.insert(0, restore)
    return args, kwargs


# -- sizes and scratch paths ---------------------------------------------------


def _unknown():
    """A save's size or files when nothing says where it wrote."""
    return None


def _measure(measure):
    try:
        value = measure()
    except Exception:
        return None
    return None if value is None else int(value)


def _scan(path, since=None):
    """(bytes, {(st_dev, st_ino)}) of a file, or of a folder: the bytes of the files under it, and the
    folder, its subfolders and files (those modified at or after `since`); None if absent."""
    path = os.fspath(path)
    try:
        info = os.stat(path)
    except OSError:
        return None
    found = {(info.st_dev, info.st_ino)}
    if not stat.S_ISDIR(info.st_mode):
        return (info.st_size if stat.S_ISREG(info.st_mode) else None), found
    total = 0
    for folder, subfolders, names in os.walk(path):
        for name in subfolders + names:
            try:
                info = os.stat(os.path.join(folder, name))
            except OSError:
                continue
            if since is None or info.st_mtime >= since:
                found.add((info.st_dev, info.st_ino))
                if stat.S_ISREG(info.st_mode):
                    total += info.st_size
    return total, found


def _file_of_stream(stream):
    """{(st_dev, st_ino)} of an open file object's file; None for a stream without one (BytesIO)."""
    try:
        info = os.fstat(stream.fileno())
    except Exception:
        return None
    return {(info.st_dev, info.st_ino)}


def _tell(stream):
    try:
        return stream.tell()
    except Exception:
        return None


def _written_since(stream, start):
    end = _tell(stream)
    return None if start is None or end is None else max(0, end - start)


def _scratch_beside(target):
    """<dir>/.<name>.dsa-scratch-<pid>: the target's own folder, so its file system and speed."""
    target = os.path.abspath(os.fsdecode(os.fspath(target))).rstrip(os.sep) or os.sep
    folder, name = os.path.split(target)
    scratch = os.path.join(folder, ".%s.dsa-scratch-%d" % (name, os.getpid()))
    n = 1
    while os.path.lexists(scratch + ("" if n == 1 else "-%d" % n)):
        n += 1  # an async save still writing, or a leftover: never reuse it
    return scratch + ("" if n == 1 else "-%d" % n)


# The originals, for the scratch files themselves (follow_diversions() wraps os.remove and os.path.isdir).
_os_remove = os.remove
_os_isdir = os.path.isdir


def _remove(path):
    if _os_isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        _os_remove(path)


# -- following a diversion ----------------------------------------------------
#
# A diverted save's scratch stands in for its target until the process exits: the script's own file
# operations on the target (shutil.copyfile/copy/copy2/move, os.replace/rename/remove/unlink, open and
# os.open for reading, torch.load, os.path.exists/isfile/isdir/getsize, pathlib.Path.exists/is_file/is_dir;
# pathlib's replace, rename, unlink and open call those) act on the scratch instead, and
# a copy or a move of it goes to a scratch beside its destination, which then stands in for that. Each
# wrapper is a pass-through while nothing is diverted (one truth test), and for paths not diverted.

# abspath of a target -> its scratch path (this process only: a forked child starts with none).
_diverted = {}
# abspath of a folder a save wrote into (Hugging Face's output_dir) -> the scratch folder that holds
# what the saves wrote: a path inside the folder that the scratch has is the scratch's.
_overlays = {}
# Whether a diversion is a folder: only then is a path looked up through its parents.
_folders = [False]
_scratches = []  # every scratch this process made, removed at the exit
_scratch_pid = [os.getpid()]
_divert_lock = threading.Lock()


def _key(path):
    """The absolute path a path-like names, or None (an fd, a file object)."""
    if path is None or isinstance(path, int):
        return None
    try:
        path = os.fspath(path)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        return os.path.abspath(path)
    except Exception:
        return None


def _scratch_in_use(scratch):
    # An async save still writing there: a new save to the same target gets a fresh scratch.
    return any(save.scratch == scratch for save in list(_unfinished))


def _divert(target, folder=False, overlay=False):
    """(scratch, made): the scratch that stands in for `target`, the one it has already
    (overwritten by this save) unless an async save is still writing it."""
    key = _key(target)
    table = _overlays if overlay else _diverted
    with _divert_lock:
        if _scratch_pid[0] != os.getpid():
            _start_over()
        scratch = table.get(key)
        if scratch is not None and not _scratch_in_use(scratch):
            return scratch, False
        scratch = _scratch_beside(target)
        _register(key, scratch, table, folder or overlay)
    follow_diversions()
    return scratch, True


def _register(key, scratch, table=None, folder=False):
    """(under _divert_lock) `scratch` now stands in for `key`."""
    (_diverted if table is None else table)[key] = scratch
    if scratch not in _scratches:
        _scratches.append(scratch)
    if folder:
        _folders[0] = True


def _undivert(target, overlay=False, remove=True):
    """`target` is no longer diverted; its scratch is removed unless kept (moved away) or still used."""
    key = _key(target)
    with _divert_lock:
        scratch = (_overlays if overlay else _diverted).pop(key, None)
        if scratch is None or not remove or scratch in _diverted.values() or scratch in _overlays.values():
            return
        if scratch in _scratches:
            _scratches.remove(scratch)
    try:
        _remove(scratch)
    except OSError:
        pass


def _lookup(path):
    """(where, key): where the diverted `path` really is and its map key (None for a path inside a
    diverted folder); None when `path` is not diverted."""
    key = _key(path)
    if key is None:
        return None
    scratch = _diverted.get(key)
    if scratch is not None:
        return scratch, key
    if not _folders[0]:
        return None
    child, parent = key, os.path.dirname(key)
    while parent != child:
        scratch = _diverted.get(parent) or _overlays.get(parent)
        if scratch is not None:
            inside = os.path.join(scratch, os.path.relpath(key, parent))
            if os.path.lexists(inside):
                return inside, None
        child, parent = parent, os.path.dirname(parent)
    return None


def _destination(dst, src, into_folder):
    """(key, scratch): where a copy or move of a diverted file to `dst` goes (`into_folder`: shutil.copy,
    copy2 and move put it inside a folder `dst`), and the scratch beside it that stands in for it."""
    key = _key(dst)
    if into_folder and key not in _diverted and os.path.isdir(key):
        key = os.path.join(key, os.path.basename(_key(src)))
    with _divert_lock:
        scratch = _diverted.get(key)
        if scratch is None or _scratch_in_use(scratch):
            scratch = _scratch_beside(key)
            # Registered before the copy: a copy that fails half way leaves a scratch the exit removes.
            _register(key, scratch)
    return key, scratch


def _wrote_for_real(path):
    """The script itself writes `path` (its own copy, rename, open for writing): that replaces a diversion."""
    if _diverted:
        key = _key(path)
        if key in _diverted:
            _undivert(key)


def _remove_scratches():
    """At the exit: every scratch this process made is removed (a forked child's inherited ones are not its own)."""
    with _divert_lock:
        if _scratch_pid[0] != os.getpid():
            return
        scratches = list(_scratches)
        del _scratches[:]
        _diverted.clear()
        _overlays.clear()
    for scratch in scratches:
        try:
            _remove(scratch)
        except FileNotFoundError:
            pass
        except Exception as error:
            _say(f"could not remove the scratch checkpoint {scratch} ({type(error).__name__}: {error})")


def _start_over():
    """A forked child: the parent's diversions are the parent's to follow and remove."""
    global _diverted, _overlays, _scratches, _divert_lock
    _diverted, _overlays, _scratches = {}, {}, []
    _folders[0] = False
    _scratch_pid[0] = os.getpid()
    _divert_lock = threading.Lock()  # it may have been held by another thread at the fork


def _reads(mode):
    return not any(c in mode for c in "wax+")


def _follow_open(original):
    def open(file, mode="r", *args, **kwargs):
        if _diverted or _overlays:
            found = _lookup(file) if isinstance(mode, str) else None
            if found is not None:
                if _reads(mode) or "a" in mode or "+" in mode:
                    file = found[0]  # read (or change in place) the scratch, the file as the script left it
                elif found[1] is not None:
                    _undivert(found[1])  # the script writes the file itself
        return original(file, mode, *args, **kwargs)

    return open


def _follow_os_open(original):
    write = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | getattr(os, "O_APPEND", 0)

    def open(path, flags, mode=0o777, *, dir_fd=None):
        if (_diverted or _overlays) and dir_fd is None and not flags & write:
            found = _lookup(path)
            if found is not None:
                path = found[0]  # an fd on the scratch (an fsync of the saved file after the save)
        return original(path, flags, mode, dir_fd=dir_fd)

    return open


def _follow_path(original):
    """A call whose first argument is a path it reads (os.path.exists, Path.is_file as self, torch.load)."""

    def follow(path, *args, **kwargs):
        if _diverted or _overlays:
            found = _lookup(path)
            if found is not None:
                # A pathlib method needs a Path for self; the others take either.
                path = type(path)(found[0]) if isinstance(path, pathlib.PurePath) else found[0]
        return original(path, *args, **kwargs)

    return follow


def _follow_remove(original):
    def remove(path, *args, **kwargs):
        if (_diverted or _overlays) and not args and not kwargs.get("dir_fd"):
            found = _lookup(path)
            if found is not None:
                if found[1] is None:
                    return original(found[0])
                _undivert(found[1])  # the scratch and the diversion both go
                return None
        return original(path, *args, **kwargs)

    return remove


def _follow_rename(original):
    def rename(src, dst, *args, **kwargs):
        if (_diverted or _overlays) and not args and not kwargs:
            found = _lookup(src)
            if found is not None:
                key = _key(dst)
                with _divert_lock:
                    scratch = _diverted.get(key)
                    if scratch is None or _scratch_in_use(scratch):
                        scratch = _scratch_beside(key)
                original(found[0], scratch)
                with _divert_lock:
                    _register(key, scratch)
                    if found[1] not in (None, key) and _diverted.get(found[1]) == found[0]:
                        del _diverted[found[1]]  # moved: the old name is gone, as it would be
                        if found[0] in _scratches:
                            _scratches.remove(found[0])
                return None
            _wrote_for_real(dst)
        return original(src, dst, *args, **kwargs)

    return rename


def _follow_copy(original, into_folder=True, moves=False):
    """shutil.copyfile/copy/copy2/move: a diverted source is copied (moved) from its scratch to a scratch
    beside `dst`."""

    def copy(src, dst, *args, **kwargs):
        if _diverted or _overlays:
            found = _lookup(src)
            if found is not None:
                key, scratch = _destination(dst, src, into_folder)
                original(found[0], scratch, *args, **kwargs)
                if moves and found[1] is not None and found[1] != key:
                    _undivert(found[1], remove=False)  # moved: the old name is gone, as it would be
                    with _divert_lock:
                        if found[0] in _scratches and found[0] != scratch:
                            _scratches.remove(found[0])
                return dst if key == _key(dst) else os.path.join(dst, os.path.basename(key))
            _wrote_for_real(dst)
        return original(src, dst, *args, **kwargs)

    return copy


_FOLLOWED = (
    (builtins, "open", _follow_open),
    (io, "open", _follow_open),
    (os, "open", _follow_os_open),
    (os, "replace", _follow_rename),
    (os, "rename", _follow_rename),
    (os, "remove", _follow_remove),
    (os, "unlink", _follow_remove),
    (shutil, "copyfile", lambda original: _follow_copy(original, into_folder=False)),
    (shutil, "copy", _follow_copy),
    (shutil, "copy2", _follow_copy),
    (shutil, "move", lambda original: _follow_copy(original, moves=True)),
    (os.path, "exists", _follow_path),
    (os.path, "isfile", _follow_path),
    (os.path, "isdir", _follow_path),
    (os.path, "getsize", _follow_path),
    (pathlib.Path, "exists", _follow_path),
    (pathlib.Path, "is_file", _follow_path),
    (pathlib.Path, "is_dir", _follow_path),
)
_FOLLOWING = []


def diverting(mode=None):
    """Whether saves go to scratch paths: the synthetic mode always (its model trains on one batch); every other
    mode unless the user asked for real saves (DSA_KEEP_OUTPUTS=1, profile --keep-outputs). `mode`: DSA_MODE."""
    mode = os.environ.get("DSA_MODE") if mode is None else mode
    if mode == "synthetic" and os.environ.get("DSA_CONTINUE") == "1":
        # profile --continue where the state cannot be held: the synthetic block trains on real batches, so its
        # saves are the run's own.
        rec = _recorder.recorder()
        if rec is not None and rec.unheld:
            return False
    return mode == "synthetic" or os.environ.get("DSA_KEEP_OUTPUTS") != "1"


def follow_diversions(torch=None):
    """Synthetic mode: wraps the file operations that follow a diversion (once each; torch.load once torch is here).

    Called at start-up (_auto.install), by patch_torch, and at the first diversion. A wrapper that cannot
    be installed leaves the original, with one line on stderr.
    """
    if not diverting():
        return
    targets = list(_FOLLOWED) + ([(torch, "load", _follow_path)] if torch is not None else [])
    with _lock:
        if not _FOLLOWING:
            _FOLLOWING.append(True)
            atexit.register(_remove_scratches)  # early: it runs after the script's own atexit handlers
            try:
                os.register_at_fork(after_in_child=_start_over)
            except Exception:
                pass  # the pid checks still hold
        for owner, name, wrap in targets:
            original = getattr(owner, name, None)
            if original is None or getattr(original, "_dsa", False):
                continue
            label = "{}.{}".format(getattr(owner, "__name__", owner), name)
            try:
                if owner is io and original is getattr(builtins.open, "__wrapped__", None):
                    wrapped = builtins.open  # the same open, one wrapper
                else:
                    wrapped = functools.update_wrapper(wrap(original), original)
                    wrapped._dsa = True
                setattr(owner, name, wrapped)
            except Exception as error:
                try:
                    setattr(owner, name, original)
                except Exception:
                    pass
                _say(
                    f"profiled run: could not follow scratch checkpoints through {label} "
                    f"({type(error).__name__}: {error})"
                )


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


def _patch_syncs():
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


# -- patches -------------------------------------------------------------------


def _patch(owner, name, api, prepare, wrap=_timed):
    original = getattr(owner, name, None)
    if original is None or getattr(original, "_dsa", False):
        return False
    wrapped = functools.update_wrapper(wrap(api, original, prepare), original)
    wrapped._dsa = True
    setattr(owner, name, wrapped)
    _patch_syncs()
    return True


def patch_torch(torch):
    """torch.save; in a profiled run, torch.load follows a diverted save."""
    _patch(torch, "save", "torch.save", _prepare_torch_save)
    follow_diversions(torch)


def patch_dcp(dcp):
    """torch.distributed.checkpoint: save, save_state_dict (deprecated), async_save, where this torch has them.

    Only the package's names: DCP's own async executor calls state_dict_saver.save, which stays as it is.
    """
    _patch(dcp, "save", "dcp.save", _prepare_dcp)
    _patch(dcp, "save_state_dict", "dcp.save", _prepare_dcp)
    _patch(dcp, "async_save", "dcp.async_save", _prepare_dcp, wrap=_timed_async)


def patch_lightning(module):
    """lightning.pytorch or pytorch_lightning: Trainer.save_checkpoint (ModelCheckpoint calls it)."""
    trainer = getattr(module, "Trainer", None)
    if trainer is not None:
        _patch(trainer, "save_checkpoint", "lightning", _prepare_lightning)


def patch_transformers_trainer(module):
    """transformers.trainer: Trainer._save_checkpoint."""
    trainer = getattr(module, "Trainer", None)
    if trainer is not None:
        _patch(trainer, "_save_checkpoint", "hf-trainer", _prepare_hf)


# -- the manual API ------------------------------------------------------------


class ManualCheckpoint:
    """`with ds_analyzer.checkpoint(path):` the block is one save (api 'manual'), sized from `path` after."""

    __slots__ = ("path", "save")

    def __init__(self, path=None):
        self.path = path
        self.save = None

    def __enter__(self):
        save = self.save = _begin("manual")
        if save is None:
            return self
        if self.path is not None:
            save.wrote(self.path)
        _patch_syncs()
        _enter(save)
        return self

    def __exit__(self, kind, value, traceback):
        save = self.save
        if save is None:
            return False
        _leave(save)
        if kind is None:
            _hold(save)
        else:
            save.cleanup()
        return False


def _warn_once(key, message):
    if key not in _warned:
        _warned.add(key)
        _say(message)


def _say(message):
    sys.stderr.write(f"ds-analyzer: {message}\n")
