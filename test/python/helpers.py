"""Shared helpers for the Python unit tests of ds_analyzer (run with /usr/bin/python3)."""

import atexit
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "python"))
if PACKAGE_DIR not in sys.path:
    sys.path.insert(0, PACKAGE_DIR)

try:
    import torch  # noqa: F401

    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

NEEDS_TORCH = "needs torch (Debian: apt-get install python3-torch; run with /usr/bin/python3)"


# Folders the tests made, removed when the test process exits.
_MADE = []
atexit.register(lambda: [shutil.rmtree(path, ignore_errors=True) for path in _MADE])


def temp_dir(prefix):
    """A fresh temporary folder, removed when the tests end."""
    path = tempfile.mkdtemp(prefix=prefix)
    _MADE.append(path)
    return path


def run_script(
    source, mode="cached", iterations=None, stop_file=None, extra_env=None, timeout=120, pythonpath=PACKAGE_DIR
):
    """Runs `source` in a fresh interpreter the way the CLI runs a job; returns (proc, events by file)."""
    events_dir = temp_dir("dsa-py-test-")
    script = os.path.join(events_dir, "job.py")
    with open(script, "w") as f:
        f.write(source)
    env = dict(os.environ)
    env.pop("DSA_MODE", None)
    env["PYTHONPATH"] = pythonpath
    if mode is not None:
        env.update(
            {
                "DSA_MODE": mode,
                "DSA_EVENTS_DIR": os.path.join(events_dir, "events"),
                "DSA_SYNC": "1",
                "DSA_PROTOCOL": "1",
            }
        )
        if iterations is not None:
            env["DSA_ITERATIONS"] = str(iterations)
        if stop_file is not None:
            env["DSA_STOP_FILE"] = stop_file
        # The save-timing tests look at real saves; test_checkpoint's diversion tests ask for the default (none).
        env["DSA_KEEP_OUTPUTS"] = "1"
    env.update(extra_env or {})
    env = {name: value for name, value in env.items() if value is not None}
    proc = subprocess.run(
        [sys.executable, script], env=env, cwd=events_dir, capture_output=True, text=True, timeout=timeout
    )
    proc.job_dir = events_dir  # the job's working directory (files it wrote)
    return proc, read_events(os.path.join(events_dir, "events"))


def read_events(events_dir, prefix="events-"):
    """The event files (events-*.jsonl), or with prefix="stages-" the loader processes' stage totals."""
    files = {}
    for path in sorted(glob.glob(os.path.join(events_dir, prefix + "*.jsonl"))):
        with open(path) as f:
            files[os.path.basename(path)] = [json.loads(line) for line in f if line.strip()]
    return files


def iters(events):
    return [e for e in events if e["type"] == "iter"]
