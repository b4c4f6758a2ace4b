"""Shared helpers for the Python unit tests of ds_analyzer (run with /usr/bin/python3)."""

import atexit
import glob
import importlib.util
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "python"))
if PACKAGE_DIR not in sys.path:
    sys.path.insert(0, PACKAGE_DIR)

# Found, not imported: importing torch costs this process a second or more, and most modules never use it.
HAVE_TORCH = importlib.util.find_spec("torch") is not None

NEEDS_TORCH = "needs torch (Debian: apt-get install python3-torch; run with /usr/bin/python3)"


# Folders the tests made, removed when the test process exits.
_MADE = []
atexit.register(lambda: [shutil.rmtree(path, ignore_errors=True) for path in _MADE])


def temp_dir(prefix):
    """A fresh temporary folder, removed when the tests end."""
    path = tempfile.mkdtemp(prefix=prefix)
    _MADE.append(path)
    return path


IMPORTS_TORCH = re.compile(r"^(import|from) torch\b", re.M)


def run_script(
    source,
    mode="cached",
    iterations=None,
    stop_file=None,
    extra_env=None,
    timeout=120,
    pythonpath=PACKAGE_DIR,
    fresh=False,
):
    """Runs `source` as the CLI runs a job; returns (proc, events by file).

    A job that imports torch runs in a fork of a process that imported it already (zygote.py), unless `fresh`:
    the hook then patches the imported torch, as after ds_analyzer.activate(). A fresh interpreter imports
    torch through the hook's import hook, as under the CLI: a test of that path asks for fresh=True."""
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
    if fresh or not HAVE_TORCH or not IMPORTS_TORCH.search(source):
        proc = subprocess.run(
            [sys.executable, script], env=env, cwd=events_dir, capture_output=True, text=True, timeout=timeout
        )
    else:
        proc = _forked(script, env, events_dir, timeout)
    proc.job_dir = events_dir  # the job's working directory (files it wrote)
    return proc, read_events(os.path.join(events_dir, "events"))


_ZYGOTE = []


def _zygote():
    """The one zygote of this test process, started on first use (its `import torch` paid once)."""
    if not _ZYGOTE:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("DSA_")}
        zygote = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "zygote.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            bufsize=0,  # unbuffered: select() sees each reply line
        )
        _ZYGOTE.append(zygote)
        atexit.register(lambda: (zygote.stdin.close(), zygote.wait()))
        if _reply(zygote, 300) is None:
            raise RuntimeError("the zygote process did not import torch within 300 s")
    return _ZYGOTE[0]


def _reply(zygote, timeout):
    """The zygote's next JSON line; None past `timeout` seconds."""
    ready, _, _ = select.select([zygote.stdout], [], [], timeout)
    if not ready:
        return None
    line = zygote.stdout.readline()
    if not line:
        raise RuntimeError("the zygote process ended")
    return json.loads(line)


def _forked(script, env, cwd, timeout):
    """run_script's job in a fork of the zygote: a CompletedProcess-like result, or TimeoutExpired."""
    job = fork_job(script, env, cwd)
    done = _reply(job.zygote, timeout)
    if done is None:
        job.kill()
        raise subprocess.TimeoutExpired([sys.executable, script], timeout)
    return job.result(done)


def fork_job(script, env, cwd, args=()):
    """`python script *args` forked from the zygote, running: poll it with job.poll(seconds) (None while it runs,
    then the result), for a test that acts on the job's events while it runs; job.kill() ends it and takes the
    zygote's reply, so that the next job's request meets a zygote in step."""
    zygote = _zygote()
    outs = {name: os.path.join(temp_dir("dsa-py-out-"), name) for name in ("stdout", "stderr")}
    request = dict(script=script, args=list(args), cwd=cwd, env=env, **outs)
    zygote.stdin.write((json.dumps(request) + "\n").encode())
    zygote.stdin.flush()
    job = types.SimpleNamespace(zygote=zygote, pid=_reply(zygote, 60)["pid"])

    def result(done):
        texts = {}
        for name, path in outs.items():
            with open(path) as f:
                texts[name] = f.read()
        code = os.waitstatus_to_exitcode(done["status"])
        return types.SimpleNamespace(returncode=code, cpu_s=done["cpuS"], **texts)

    def poll(seconds):
        done = _reply(zygote, seconds)
        return None if done is None else result(done)

    def kill():
        os.kill(job.pid, signal.SIGKILL)
        _reply(zygote, 60)

    job.result, job.poll, job.kill = result, poll, kill
    return job


def read_events(events_dir, prefix="events-"):
    """The event files (events-*.jsonl), or with prefix="stages-" the loader processes' stage totals. Only whole
    lines: a running job's file may end in one still being written."""
    files = {}
    for path in sorted(glob.glob(os.path.join(events_dir, prefix + "*.jsonl"))):
        with open(path) as f:
            files[os.path.basename(path)] = [json.loads(line) for line in f if line.endswith("\n") and line.strip()]
    return files


def iters(events):
    return [e for e in events if e["type"] == "iter"]
