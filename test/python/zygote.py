"""A process that imported torch once and forks one job a request (helpers.run_script).

`import torch` costs a fresh interpreter a second or more of CPU, most of a small job's time. A forked child
starts where a fresh `python job.py` would after `import torch`: the job's sys.path, environment, working
directory and sitecustomize (so the hook arms as under the CLI), then the script as __main__, then the normal
exit (atexit handlers, flushed files). The hook finds torch imported already and patches it then, as it does
for ds_analyzer.activate() after `import torch`; the tests that the import hook patches torch run fresh.

Protocol, one JSON line each way: {script, args (optional), cwd, env, stdout, stderr} in; {"pid"} once forked, then
{"status", "cpuS"} (wait4's status and the job's CPU seconds) out.
"""

import json
import os
import sys

import torch  # noqa: F401  (the point: imported once, before any fork)

BASE_PATH = sys.path[1:]  # the interpreter's own path, without this file's folder


def _lines(fd):
    pending = b""
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            return
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            yield json.loads(line)


def _say(message):
    os.write(1, (json.dumps(message) + "\n").encode())


def serve():
    """Forks a child per request; returns the request in the child, None when the test process closes stdin."""
    import gc

    gc.freeze()  # torch's objects out of the collector's sight: a child's collections do not copy their pages
    _say({"ready": True})
    for request in _lines(0):
        pid = os.fork()
        if pid == 0:
            return request
        _say({"pid": pid})
        _, status, usage = os.wait4(pid, 0)
        _say({"status": status, "cpuS": usage.ru_utime + usage.ru_stime})
    return None


def run(request):
    """In the child: becomes `python <script>` with the request's environment, then runs the script."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
        out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(out, fd)
        os.close(out)
    os.close(null)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    script = request["script"]
    extra = [p for p in request["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:] = [os.path.dirname(script)] + extra + BASE_PATH
    sys.argv[:] = [script] + request.get("args", [])
    # What site does at start-up, now that the job's PYTHONPATH is on the path: the hook's sitecustomize.
    sys.modules.pop("sitecustomize", None)
    import sitecustomize  # noqa: F401

    with open(script) as f:
        code = compile(f.read(), script, "exec")
    import builtins
    from importlib.machinery import SourceFileLoader

    # This module's globals become the script's, as `python script` makes them: run() goes on with its locals.
    namespace = sys.modules["__main__"].__dict__
    namespace.clear()
    namespace.update(
        __name__="__main__",
        __doc__=None,
        __package__=None,
        __loader__=SourceFileLoader("__main__", script),
        __spec__=None,
        __annotations__={},
        __builtins__=builtins,
        __file__=script,
        __cached__=None,
    )
    exec(code, namespace)


if __name__ == "__main__":
    job = serve()
    if job is not None:
        run(job)
