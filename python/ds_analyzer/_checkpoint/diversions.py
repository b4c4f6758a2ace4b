"""The diversion table: which scratch path stands in for which target, made, looked up and removed.

A diverted save's scratch stands in for its target until the process exits (then it is removed); a copy or a
move of it goes to a scratch beside its destination, which then stands in for that. diverting() says whether
saves are diverted at all; timing.py adds to the table as saves run, follow.py makes the script's own file
operations read it.
"""

import os
import shutil
import threading

from .. import _recorder
from .say import say


def scratch_beside(target):
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


def remove_path(path):
    if _os_isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        _os_remove(path)


# abspath of a target -> its scratch path (this process only: a forked child starts with none).
targets = {}
# abspath of a folder a save wrote into (Hugging Face's output_dir) -> the scratch folder that holds
# what the saves wrote: a path inside the folder that the scratch has is the scratch's.
overlays = {}
# Whether a diversion is a folder: only then is a path looked up through its parents.
folders = [False]
made = []  # every scratch this process made, removed at the exit
owner_pid = [os.getpid()]
lock = threading.Lock()


def path_key(path):
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


def scratch_in_use(scratch):
    # An async save still writing there: a new save to the same target gets a fresh scratch.
    from .timing import unfinished  # imported here: timing adds to this table

    return any(save.scratch == scratch for save in list(unfinished))


def divert(target, folder=False, overlay=False):
    """(scratch, made): the scratch that stands in for `target`, the one it has already
    (overwritten by this save) unless an async save is still writing it."""
    key = path_key(target)
    if owner_pid[0] != os.getpid():
        start_over()  # before the lock (the parent's may be held) and the table (the parent's) are taken
    table = overlays if overlay else targets
    with lock:
        scratch = table.get(key)
        if scratch is not None and not scratch_in_use(scratch):
            return scratch, False
        scratch = scratch_beside(target)
        register(key, scratch, table, folder or overlay)
    return scratch, True


def register(key, scratch, table=None, folder=False):
    """(under lock) `scratch` now stands in for `key`."""
    (targets if table is None else table)[key] = scratch
    if scratch not in made:
        made.append(scratch)
    if folder:
        folders[0] = True


def undivert(target, overlay=False, remove=True):
    """`target` is no longer diverted; its scratch is removed unless kept (moved away) or still used."""
    key = path_key(target)
    with lock:
        scratch = (overlays if overlay else targets).pop(key, None)
        if scratch is None or not remove or scratch in targets.values() or scratch in overlays.values():
            return
        if scratch in made:
            made.remove(scratch)
    try:
        remove_path(scratch)
    except OSError:
        pass


def lookup(path):
    """(where, key): where the diverted `path` really is and its map key (None for a path inside a
    diverted folder); None when `path` is not diverted."""
    key = path_key(path)
    if key is None:
        return None
    scratch = targets.get(key)
    if scratch is not None:
        return scratch, key
    if not folders[0]:
        return None
    child, parent = key, os.path.dirname(key)
    while parent != child:
        scratch = targets.get(parent) or overlays.get(parent)
        if scratch is not None:
            inside = os.path.join(scratch, os.path.relpath(key, parent))
            if os.path.lexists(inside):
                return inside, None
        child, parent = parent, os.path.dirname(parent)
    return None


def destination(dst, src, into_folder):
    """(key, scratch): where a copy or move of a diverted file to `dst` goes (`into_folder`: shutil.copy,
    copy2 and move put it inside a folder `dst`), and the scratch beside it that stands in for it."""
    key = path_key(dst)
    if into_folder and key not in targets and os.path.isdir(key):
        key = os.path.join(key, os.path.basename(path_key(src)))
    with lock:
        scratch = targets.get(key)
        if scratch is None or scratch_in_use(scratch):
            scratch = scratch_beside(key)
            # Registered before the copy: a copy that fails half way leaves a scratch the exit removes.
            register(key, scratch)
    return key, scratch


def rename_destination(dst):
    """(key, scratch): the scratch that an os.rename/os.replace of a diverted file to `dst` goes to."""
    key = path_key(dst)
    with lock:
        scratch = targets.get(key)
        if scratch is None or scratch_in_use(scratch):
            scratch = scratch_beside(key)
    return key, scratch


def renamed(found, key, scratch):
    """A diverted file (`found`: lookup()'s answer) was renamed to `scratch`, which now stands in for `key`."""
    where, old_key = found
    with lock:
        register(key, scratch)
        if old_key not in (None, key) and targets.get(old_key) == where:
            del targets[old_key]  # moved: the old name is gone, as it would be
            if where in made:
                made.remove(where)


def moved(found, scratch):
    """A diverted file (`found`: lookup()'s answer) was moved by shutil.move to `scratch`: its old name is gone."""
    where, old_key = found
    undivert(old_key, remove=False)
    with lock:
        if where in made and where != scratch:
            made.remove(where)


def wrote_for_real(path):
    """The script itself writes `path` (its own copy, rename, open for writing): that replaces a diversion."""
    if targets:
        key = path_key(path)
        if key in targets:
            undivert(key)


def remove_scratches():
    """At the exit: every scratch this process made is removed (a forked child's inherited ones are not its own)."""
    with lock:
        if owner_pid[0] != os.getpid():
            return
        scratches = list(made)
        del made[:]
        targets.clear()
        overlays.clear()
    for scratch in scratches:
        try:
            remove_path(scratch)
        except FileNotFoundError:
            pass
        except Exception as error:
            say(f"could not remove the scratch checkpoint {scratch} ({type(error).__name__}: {error})")


def start_over():
    """A forked child: the parent's diversions are the parent's to follow and remove."""
    global targets, overlays, made, lock
    targets, overlays, made = {}, {}, []
    folders[0] = False
    owner_pid[0] = os.getpid()
    lock = threading.Lock()  # it may have been held by another thread at the fork


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
