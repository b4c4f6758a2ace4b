"""Auto-activation: instrument torch when (and only if) the script imports it.

Importing torch costs seconds, so nothing here imports it: a post-import hook
on the `torch` module patches DataLoader and torch.save once torch has finished
loading, and hooks on the checkpoint modules (DCP, Lightning, Hugging Face's
Trainer) patch their saves when the script imports them (_checkpoint/), and one on
aiohttp counts and answers its requests for remote data (_aiohttp.py).
"""

import sys


class _TorchImportHook:
    """A meta-path finder that only wraps the loaders of the modules in _AFTER_IMPORT."""

    def find_spec(self, name, path=None, target=None):
        callback = _AFTER_IMPORT.get(name)
        if callback is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        original = loader.exec_module

        def exec_module(module):
            original(module)
            _AFTER_IMPORT.pop(name, None)
            if not _AFTER_IMPORT:
                _remove_hook()
            callback(module)

        # The loader instance belongs to this one spec: overriding its method
        # on the instance wraps torch's import and nothing else.
        loader.exec_module = exec_module
        return spec

    # Python < 3.4 finders; harmless otherwise.
    def find_module(self, name, path=None):
        return None


_HOOK = _TorchImportHook()


def _remove_hook():
    try:
        sys.meta_path.remove(_HOOK)
    except ValueError:
        pass


def on_torch_loaded(torch):
    try:
        from . import _torch

        _torch.install_accelerator_shim(torch)
        import torch.utils.data.dataloader as dataloader

        _torch.patch(dataloader)
    except Exception as error:  # never break the user's job because of us
        sys.stderr.write(
            f"ds-analyzer: could not instrument PyTorch ({type(error).__name__}: {error}); the job runs unprofiled\n"
        )
    _time_stages(torch)
    _patch_saves("patch_torch", torch)


def _patch_saves(patcher, module):
    """Times a module's checkpoint saves; a failure costs only the checkpoint events."""
    try:
        from . import _checkpoint

        getattr(_checkpoint, patcher)(module)
    except Exception as error:
        sys.stderr.write(
            "ds-analyzer: could not time the checkpoint saves of {} ({}: {})\n".format(
                getattr(module, "__name__", module), type(error).__name__, error
            )
        )


def _stages_wanted():
    """Prep's stages are timed where prep runs: not in a synthetic run (one launch may switch into a real mode)."""
    from . import _recorder

    config = _recorder.config_from_env()
    return config is not None and (config.mode != "synthetic" or config.control_file is not None)


def _time_stages(torch):
    """The training loader's fetches timed by stage (_stages.py); a failure costs only the stage times."""
    try:
        from . import _stages

        if not _stages_wanted():
            return
        _stages.enable(_recorder_dir())
        import torch.utils.data._utils.fetch as fetch

        _stages.patch_fetchers(fetch)
    except Exception as error:
        sys.stderr.write(f"ds-analyzer: could not time prep's stages ({type(error).__name__}: {error})\n")


def _recorder_dir():
    from . import _recorder

    return _recorder.config_from_env().events_dir


def _patch_stage_module(patcher, module):
    try:
        from . import _stages

        if _stages_wanted():
            getattr(_stages, patcher)(module)
    except Exception as error:
        sys.stderr.write(
            "ds-analyzer: could not time prep's stages in {} ({}: {})\n".format(
                getattr(module, "__name__", module), type(error).__name__, error
            )
        )


def on_torchvision_loaded(torchvision):
    _patch_stage_module("patch_torchvision", torchvision)


def on_pil_image_file_loaded(image_file):
    _patch_stage_module("patch_pil", image_file)


def on_dcp_loaded(dcp):
    _patch_saves("patch_dcp", dcp)


def on_lightning_loaded(lightning):
    _patch_saves("patch_lightning", lightning)


def on_transformers_trainer_loaded(trainer_module):
    _patch_saves("patch_transformers_trainer", trainer_module)


def on_elastic_api_loaded(api):
    """Debian 12's torch 1.13 torchrun fails on Python 3.11 before starting any
    rank: Std.from_str("0") returns None there (iterating an IntFlag no longer
    yields its zero and composite members). Fixed for profiled runs only, and
    only when the bug is present, so `ds-analyzer profile -- torchrun ...` works."""
    try:
        std = api.Std
        if std.from_str("0") is not None:
            return
        import re

        def from_str(cls, vm):
            if re.match(api._VALUE_REGEX, vm):
                return cls(int(vm))
            if re.match(api._MAPPING_REGEX, vm):
                return {int(i): cls(int(v)) for i, v in (m.split(":") for m in vm.split(","))}
            raise ValueError(f"{vm} does not match: <{api._VALUE_REGEX}> or <{api._MAPPING_REGEX}>")

        std.from_str = classmethod(from_str)
    except Exception:
        pass


def on_tensorboard_loaded(writer_module):
    """TensorBoard's SummaryWriter logs to the profile's scratch folder, not the script's runs/ (DSA_SCRATCH_DIR)."""
    import os

    scratch = os.environ.get("DSA_SCRATCH_DIR")
    if not scratch or os.environ.get("DSA_KEEP_OUTPUTS") == "1":
        return
    cls = getattr(writer_module, "SummaryWriter", None)
    original = getattr(cls, "__init__", None)
    if original is None or getattr(original, "_dsa_redirected", False):
        return

    def __init__(self, log_dir=None, *args, **kwargs):
        name = os.path.basename(os.path.normpath(log_dir)) if log_dir else "run"
        original(self, os.path.join(scratch, "tensorboard", name), *args, **kwargs)

    __init__._dsa_redirected = True
    cls.__init__ = __init__


def on_aiohttp_loaded(aiohttp):
    """fsspec's HTTP, s3fs and gcsfs send through aiohttp: counted and answered as http.client is (_aiohttp.py)."""
    try:
        from . import _aiohttp

        _aiohttp.patch(aiohttp)
    except Exception as error:
        sys.stderr.write(f"ds-analyzer: could not count the job's aiohttp requests ({type(error).__name__}: {error})\n")


_AFTER_IMPORT = {
    "aiohttp": on_aiohttp_loaded,
    "torch": on_torch_loaded,
    "torch.utils.tensorboard.writer": on_tensorboard_loaded,
    "torchvision": on_torchvision_loaded,
    "PIL.ImageFile": on_pil_image_file_loaded,
    "torch.distributed.elastic.multiprocessing.api": on_elastic_api_loaded,
    "torch.distributed.checkpoint": on_dcp_loaded,
    "lightning.pytorch": on_lightning_loaded,
    "pytorch_lightning": on_lightning_loaded,
    "transformers.trainer": on_transformers_trainer_loaded,
}


def install():
    """Called by the sitecustomize hook when DSA_MODE is set."""
    import os

    try:
        from . import _http

        _http.install(os.environ)  # remote data, cold mode: the job's requests counted in its own processes
    except Exception as error:
        sys.stderr.write(f"ds-analyzer: could not count the job's HTTP requests ({type(error).__name__}: {error})\n")
    if os.environ.get("DSA_MODE") == "synthetic" or os.environ.get("DSA_KEEP_OUTPUTS") != "1":
        try:
            from . import _checkpoint

            # Before the script runs: `from shutil import copyfile` gets the wrapper that follows a scratch save.
            _checkpoint.follow_diversions()
        except Exception as error:
            sys.stderr.write(f"ds-analyzer: could not follow scratch checkpoints ({type(error).__name__}: {error})\n")
    # Modules imported before this ran (activate() from a script): patched now.
    for name in list(_AFTER_IMPORT):
        module = sys.modules.get(name)
        if module is None or (name == "torch" and not hasattr(module, "utils")):
            continue
        _AFTER_IMPORT.pop(name)(module)
    if _AFTER_IMPORT and _HOOK not in sys.meta_path:
        sys.meta_path.insert(0, _HOOK)
