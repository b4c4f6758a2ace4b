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
to the scratch. docs/pytorch.md, "Checkpoints"; the event is CheckpointEventSchema in
src/schema/events.ts.

One job a module: this one patches the save APIs and holds the manual API; timing.py times a save and writes
its event (held for an fsync after it); targets.py says what each API writes to and puts a scratch in its
place; diversions.py keeps the table of scratch paths; follow.py makes the script's own file operations follow
it; sizes.py measures what a save wrote; say.py writes the stderr lines.
"""

import functools

from . import targets, timing
from .diversions import diverting
from .follow import follow_diversions

__all__ = [
    "ManualCheckpoint",
    "diverting",
    "follow_diversions",
    "patch_dcp",
    "patch_lightning",
    "patch_torch",
    "patch_transformers_trainer",
]


def _patch(owner, name, api, prepare, wrap=timing.timed):
    original = getattr(owner, name, None)
    if original is None or getattr(original, "_dsa", False):
        return False
    wrapped = functools.update_wrapper(wrap(api, original, prepare), original)
    wrapped._dsa = True
    setattr(owner, name, wrapped)
    timing.patch_syncs()
    return True


def patch_torch(torch):
    """torch.save; in a profiled run, torch.load follows a diverted save."""
    _patch(torch, "save", "torch.save", targets.prepare_torch_save)
    follow_diversions(torch)


def patch_dcp(dcp):
    """torch.distributed.checkpoint: save, save_state_dict (deprecated), async_save, where this torch has them.

    Only the package's names: DCP's own async executor calls state_dict_saver.save, which stays as it is.
    """
    _patch(dcp, "save", "dcp.save", targets.prepare_dcp)
    _patch(dcp, "save_state_dict", "dcp.save", targets.prepare_dcp)
    _patch(dcp, "async_save", "dcp.async_save", targets.prepare_dcp, wrap=timing.timed_async)


def patch_lightning(module):
    """lightning.pytorch or pytorch_lightning: Trainer.save_checkpoint (ModelCheckpoint calls it)."""
    trainer = getattr(module, "Trainer", None)
    if trainer is not None:
        _patch(trainer, "save_checkpoint", "lightning", targets.prepare_lightning)


def patch_transformers_trainer(module):
    """transformers.trainer: Trainer._save_checkpoint."""
    trainer = getattr(module, "Trainer", None)
    if trainer is not None:
        _patch(trainer, "_save_checkpoint", "hf-trainer", targets.prepare_hf)


# -- the manual API ------------------------------------------------------------


class ManualCheckpoint:
    """`with ds_analyzer.checkpoint(path):` the block is one save (api 'manual'), sized from `path` after."""

    __slots__ = ("path", "save")

    def __init__(self, path=None):
        self.path = path
        self.save = None

    def __enter__(self):
        save = self.save = timing.begin("manual")
        if save is None:
            return self
        if self.path is not None:
            save.wrote(self.path)
        timing.patch_syncs()
        timing.enter(save)
        return self

    def __exit__(self, kind, value, traceback):
        save = self.save
        if save is None:
            return False
        timing.leave(save)
        if kind is None:
            timing.hold(save)
        else:
            save.cleanup()
        return False
