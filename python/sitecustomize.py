"""ds-analyzer's activation hook, put first on PYTHONPATH by `ds-analyzer profile`.

1. It chains the sitecustomize it shadows (Debian's apport hook, a site's own):
   the next one on sys.path runs exactly as if this file were not there.
2. Only when DSA_MODE is set (the CLI is profiling this job) does it import
   ds_analyzer and arm the PyTorch instrumentation. Without DSA_MODE it does
   nothing else at all: no import, no patch, no file.
"""


def _chain_next_sitecustomize():
    import importlib.machinery
    import importlib.util
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    # The chained module takes the name, as if it had been imported directly.
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


def _activate():
    import os

    if os.environ.get("DSA_MODE", "") == "":
        return
    try:
        from ds_analyzer import _auto

        _auto.install()
    except Exception as error:  # the job must run even if the profiler cannot
        import sys

        sys.stderr.write(f"ds-analyzer: instrumentation not installed ({type(error).__name__}: {error})\n")


try:
    _chain_next_sitecustomize()
finally:
    _activate()
