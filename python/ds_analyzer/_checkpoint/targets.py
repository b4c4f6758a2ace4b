"""What each save API writes to, and where to send it instead: prepare(save, args, kwargs, divert) returns
the arguments to call the save with (a scratch path in place of the target when diverting)."""

import os
import time

from .say import warn_once
from .sizes import file_of_stream, tell, written_since

# HF: a file written this long before the save began still counts as its own
# (file times come from a coarse clock, a tick behind perf_counter).
MTIME_SLACK_S = 0.05


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
        start = tell(target)
        save.measure = lambda: written_since(target, start)
        save.identify = lambda: file_of_stream(target)
        if divert:
            save.note = "open-file"
            warn_once(
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
        warn_once(
            "custom-writer",
            "profiled run: a checkpoint written by a custom writer cannot be diverted "
            "to a scratch path; it is written for real",
        )


def prepare_torch_save(save, args, kwargs, divert):
    target = _arg(args, kwargs, 1, "f")
    return _with_arg(args, kwargs, 1, "f", _prepare_path_or_file(save, target, divert))


def prepare_dcp(save, args, kwargs, divert):
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


def prepare_lightning(save, args, kwargs, divert):
    """Trainer.save_checkpoint(self, filepath, weights_only=False, storage_options=None)."""
    target = _arg(args, kwargs, 1, "filepath")
    return _with_arg(args, kwargs, 1, "filepath", _prepare_path_or_file(save, target, divert))


def prepare_hf(save, args, kwargs, divert):
    """Trainer._save_checkpoint(self, model, trial, ...) writes <args.output_dir>/checkpoint-<step>/."""
    trainer = args[0]
    training_args = trainer.args
    output_dir = training_args.output_dir
    if output_dir is None or not _is_local_path(output_dir):
        _cannot_divert(save, divert)
        return args, kwargs
    if not divert:
        since = time.time() - (time.perf_counter() - save.began) - MTIME_SLACK_S
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
