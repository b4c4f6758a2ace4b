"""Following a diversion: the script's own file operations on a diverted target act on its scratch.

Each wrapper is a pass-through while nothing is diverted (one truth test), and for paths not diverted.
"""

import atexit
import builtins
import functools
import io
import os
import pathlib
import shutil
import threading

from . import diversions
from .diversions import (
    destination,
    diverting,
    lookup,
    moved,
    path_key,
    remove_scratches,
    rename_destination,
    renamed,
    start_over,
    undivert,
    wrote_for_real,
)
from .say import say

_lock = threading.Lock()


def _reads(mode):
    return not any(c in mode for c in "wax+")


def _follow_open(original):
    def open(file, mode="r", *args, **kwargs):
        if diversions.targets or diversions.overlays:
            found = lookup(file) if isinstance(mode, str) else None
            if found is not None:
                if _reads(mode) or "a" in mode or "+" in mode:
                    file = found[0]  # read (or change in place) the scratch, the file as the script left it
                elif found[1] is not None:
                    undivert(found[1])  # the script writes the file itself
        return original(file, mode, *args, **kwargs)

    return open


def _follow_os_open(original):
    write = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | getattr(os, "O_APPEND", 0)

    def open(path, flags, mode=0o777, *, dir_fd=None):
        if (diversions.targets or diversions.overlays) and dir_fd is None and not flags & write:
            found = lookup(path)
            if found is not None:
                path = found[0]  # an fd on the scratch (an fsync of the saved file after the save)
        return original(path, flags, mode, dir_fd=dir_fd)

    return open


def _follow_path(original):
    """A call whose first argument is a path it reads (os.path.exists, Path.is_file as self, torch.load)."""

    def follow(path, *args, **kwargs):
        if diversions.targets or diversions.overlays:
            found = lookup(path)
            if found is not None:
                # A pathlib method needs a Path for self; the others take either.
                path = type(path)(found[0]) if isinstance(path, pathlib.PurePath) else found[0]
        return original(path, *args, **kwargs)

    return follow


def _follow_remove(original):
    def remove(path, *args, **kwargs):
        if (diversions.targets or diversions.overlays) and not args and not kwargs.get("dir_fd"):
            found = lookup(path)
            if found is not None:
                if found[1] is None:
                    return original(found[0])
                undivert(found[1])  # the scratch and the diversion both go
                return None
        return original(path, *args, **kwargs)

    return remove


def _follow_rename(original):
    def rename(src, dst, *args, **kwargs):
        if (diversions.targets or diversions.overlays) and not args and not kwargs:
            found = lookup(src)
            if found is not None:
                key, scratch = rename_destination(dst)
                original(found[0], scratch)
                renamed(found, key, scratch)
                return None
            wrote_for_real(dst)
        return original(src, dst, *args, **kwargs)

    return rename


def _follow_copy(original, into_folder=True, moves=False):
    """shutil.copyfile/copy/copy2/move: a diverted source is copied (moved) from its scratch to a scratch
    beside `dst`."""

    def copy(src, dst, *args, **kwargs):
        if diversions.targets or diversions.overlays:
            found = lookup(src)
            if found is not None:
                key, scratch = destination(dst, src, into_folder)
                original(found[0], scratch, *args, **kwargs)
                if moves and found[1] is not None and found[1] != key:
                    moved(found, scratch)
                return dst if key == path_key(dst) else os.path.join(dst, os.path.basename(key))
            wrote_for_real(dst)
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
            atexit.register(remove_scratches)  # early: it runs after the script's own atexit handlers
            try:
                os.register_at_fork(after_in_child=start_over)
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
                say(
                    f"profiled run: could not follow scratch checkpoints through {label} "
                    f"({type(error).__name__}: {error})"
                )
