"""One recorder per process: protocol v1 events, iteration budget, stop file.

Everything here is plain Python (no torch), so the manual API works for any
framework. The DataLoader instrumentation (_torch.py) drives the same recorder.
See docs/protocol.md for the event format and docs/pytorch.md for the choices.
"""

import atexit
import json
import os
import socket
import sys
import threading
import time

MODES = ("synthetic", "cached", "cold")
# What the control file may also say under profile --continue: the blocks are over, train on unprofiled.
TRAIN = "train"
PROTOCOL_VERSION = 1

# Buffered lines are written at most this often (and at the end): the profiler
# tails the files while the job runs, and a write() per iteration would cost the
# training loop a syscall (docs/protocol.md, "Writing cheaply").
FLUSH_INTERVAL_S = 0.1
# Single process: look for the stop file at most this often (a stat() costs
# microseconds; doing it every iteration would dominate our overhead).
STOP_CHECK_INTERVAL_S = 0.1
# Several ranks: look for the stop file only at iterations that are multiples of
# this, and agree on the answer with one all_reduce, so every rank stops at the
# same iteration (a rank leaving alone would hang the others in a collective).
STOP_CHECK_EVERY_ITERATIONS = 10
# The launcher variables that carry this node's rank among the job's nodes, in
# the order they are read (src/schema/events.ts NODE_RANK_ENV): torchrun's
# GROUP_RANK (the rank its global RANKs are numbered from), NODE_RANK (newer
# torchrun, Lightning), Slurm's SLURM_NODEID. None set: node 0.
NODE_RANK_ENV = ("GROUP_RANK", "NODE_RANK", "SLURM_NODEID")
# Longest host name a start event carries (src/schema/events.ts MAX_HOSTNAME_CHARS).
MAX_HOSTNAME_CHARS = 255


class Config:
    """What the CLI asked for, read from DSA_* environment variables."""

    __slots__ = (
        "mode",
        "events_dir",
        "iterations",
        "stop_file",
        "sync",
        "rank",
        "world_size",
        "num_workers",
        "node_rank",
        "hostname",
        "control_file",
        "nodes",
        "continue_run",
    )

    def __init__(
        self,
        mode,
        events_dir,
        iterations=None,
        stop_file=None,
        sync=False,
        rank=0,
        world_size=1,
        num_workers=None,
        node_rank=0,
        hostname=None,
        control_file=None,
        nodes=1,
        continue_run=False,
    ):
        # DSA_CONTINUE=1 (profile --continue): the job is the real run; synthetic blocks are undone (_snapshot.py).
        self.continue_run = continue_run
        # The mode now: DSA_MODE, then each block DSA_CONTROL_FILE switches to (one launch, several modes).
        self.mode = mode
        self.control_file = control_file
        # DSA_NODES: how many nodes' profilers run this job, each writing the control file of its own ranks.
        self.nodes = nodes
        # DSA_NUM_WORKERS: the training loader's num_workers for this run (profile --workers), or None.
        self.num_workers = num_workers
        self.events_dir = events_dir
        self.iterations = iterations
        self.stop_file = stop_file
        self.sync = sync
        self.rank = rank
        self.world_size = world_size
        # Which machine of the job this process runs on: the launcher's node rank, and the host name.
        self.node_rank = node_rank
        self.hostname = socket.gethostname() if hostname is None else hostname


def _int_env(env, name, default):
    try:
        return int(env.get(name, ""))
    except ValueError:
        return default


def node_rank_from_env(env):
    """The first of NODE_RANK_ENV that is set to a non-negative integer, else 0."""
    for name in NODE_RANK_ENV:
        value = _int_env(env, name, -1)
        if value >= 0:
            return value
    return 0


def config_from_env(env=None):
    """The profiling configuration, or None when this process is not profiled.

    Unset or unknown DSA_MODE means "not profiled": nothing is patched or written.
    """
    env = os.environ if env is None else env
    mode = env.get("DSA_MODE", "")
    if mode not in MODES:
        return None
    iterations = _int_env(env, "DSA_ITERATIONS", 0)
    num_workers = _int_env(env, "DSA_NUM_WORKERS", -1)
    return Config(
        mode=mode,
        events_dir=env.get("DSA_EVENTS_DIR") or ".",
        iterations=iterations if iterations > 0 else None,
        stop_file=env.get("DSA_STOP_FILE") or None,
        sync=env.get("DSA_SYNC", "1") == "1",
        # torchrun (and torch.distributed.launch --use_env) set RANK/WORLD_SIZE;
        # Slurm sets SLURM_PROCID/SLURM_NTASKS when ranks are started by srun.
        rank=max(0, _int_env(env, "RANK", _int_env(env, "SLURM_PROCID", 0))),
        world_size=max(1, _int_env(env, "WORLD_SIZE", _int_env(env, "SLURM_NTASKS", 1))),
        num_workers=num_workers if num_workers >= 0 else None,
        node_rank=node_rank_from_env(env),
        control_file=env.get("DSA_CONTROL_FILE") or None,
        nodes=max(1, _int_env(env, "DSA_NODES", 1)),
        continue_run=env.get("DSA_CONTINUE") == "1",
    )


def _num(value):
    # repr of a float is the shortest round-tripping text, and valid JSON for finite values.
    return repr(float(value)) if value == value and value not in (float("inf"), float("-inf")) else "0"


class BudgetReached(SystemExit):
    """Raised at an iteration boundary once the job should end: exit code 0.

    A SystemExit, so `except Exception:` in a training script does not swallow
    it and the interpreter exits 0 after running finally blocks and atexit.
    """

    def __init__(self, reason):
        SystemExit.__init__(self, 0)
        self.reason = reason


class Recorder:
    """Writes this process's events and decides when the job must end."""

    def __init__(self, config, source="pytorch", clock=time.perf_counter, wall=time.time, cpu=time.process_time):
        self.config = config
        self._cpu = cpu
        self.source = source
        self.iterations = 0
        self.started = False
        self.ended = False
        self.end_reason = None
        self._clock = clock
        self._wall = wall
        # Appended to without a lock (list.append is atomic): the iteration path stays lock-free.
        self._lines = []
        # flush() and end() hold it: an async save's event arrives on a background thread, and a
        # write to a closed (possibly reused) fd must not happen.
        self._lock = threading.Lock()
        # Rare events (checkpoint) that came before the start event, which must stay the file's first line.
        self._early = []
        self._start_written = False
        # Called at the start of end() (the checkpoint layer writes its unfinished async saves).
        self.before_end = []
        # Set by the checkpoint layer while a save's event is held for a sync after it: called at
        # the next boundary (iteration, another event), which writes it. None otherwise.
        self.pending_save = None
        self._fd = None
        self._pid = os.getpid()
        self._next_flush = 0.0
        self._next_stop_check = 0.0
        self._next_control_check = 0.0
        self._stop_seen = False
        # The block the job runs in (0: DSA_MODE; then each switch the control file asked for).
        self.block = 0
        # profile --continue, once the blocks are over: nothing more is looked at or written but the end event.
        self.passive = False
        # profile --continue, where the training state cannot be held: synthetic blocks train on real batches.
        self.unheld = False
        self._failed = False
        self._prefix = '{"v":1,"type":"iter","t":'
        self._rank_part = ',"rank":%d,"i":' % config.rank
        # Set by the torch layer when torch.distributed is initialised: a
        # function (list of int) -> list of int that returns, element by
        # element, the largest value any rank passed (one all_reduce).
        self.agree = None
        # (iteration, stop flag, control file's line, newest block) agreed at the
        # last look: the stop file and the control file share one collective.
        self._agreed = None

    # -- events -----------------------------------------------------------
    def start(self, batch_size=None, workers=None, subset_files=None, subset_note=None, loader=None):
        """Opens this process's event file and writes the start event (once)."""
        if self.started:
            return
        self.started = True
        self._pid = os.getpid()
        cfg = self.config
        found = _distributed_rank()
        if found is not None:
            cfg.rank, cfg.world_size = found
            self._rank_part = ',"rank":%d,"i":' % cfg.rank
        os.makedirs(cfg.events_dir, exist_ok=True)
        path = os.path.join(cfg.events_dir, "events-%d-%d.jsonl" % (cfg.rank, self._pid))
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        fields = [
            '"v":1',
            '"type":"start"',
            '"t":' + _num(self._wall() * 1000.0),
            '"rank":%d' % cfg.rank,
            '"pid":%d' % self._pid,
            '"worldSize":%d' % cfg.world_size,
            f'"mode":"{cfg.mode}"',
            f'"source":"{self.source}"',
            '"hostname":' + json.dumps(str(cfg.hostname)[:MAX_HOSTNAME_CHARS]),
            '"nodeRank":%d' % cfg.node_rank,
        ]
        if isinstance(batch_size, int) and batch_size > 0:
            fields.append('"batchSize":%d' % batch_size)
        if isinstance(workers, int) and workers >= 0:
            fields.append('"workers":%d' % workers)
        # Cached mode on a resident subset (DSA_SUBSET_FILE): how many samples the job kept, and what it found.
        if isinstance(subset_files, int) and subset_files >= 0:
            fields.append('"subsetFiles":%d' % subset_files)
        if subset_note:
            fields.append('"subsetNote":' + json.dumps(str(subset_note)[:1000]))
        # The training loader's settings (num_workers as run and as the script set it, prefetch, pinning).
        if loader:
            fields.append('"loader":' + json.dumps(loader, separators=(",", ":")))
        # On several nodes a switch waits for every node's profiler, which only a collective can tell:
        # a job without one there (no torch.distributed, or the manual API) gets a launch a block
        # (docs/multi-node.md).
        if cfg.control_file is not None and (cfg.nodes <= 1 or self.agree is not None):
            fields.append('"switchModes":true')
        with self._lock:
            self._lines.append("{" + ",".join(fields) + "}\n")
            self._lines.extend(self._event_line(event) for event in self._early)
            del self._early[:]
            self._start_written = True
        self.flush()
        atexit.register(self._at_exit)
        _watch_uncaught_errors(self)

    def iteration(self, wait_s, compute_s, samples):
        """Records one finished iteration (its compute is known only at the next boundary)."""
        if self.pending_save is not None:
            self.pending_save()
        # processCpuMs: this process's CPU time so far (all its threads: collation,
        # pin memory, kernel launches; not its loader workers), so the CLI can
        # tell the main process's CPU per iteration from the workers'.
        self._lines.append(
            '%s%.3f%s%d,"waitMs":%.4f,"computeMs":%.4f,"samples":%d,"processCpuMs":%.3f}\n'
            % (
                self._prefix,
                self._wall() * 1000.0,
                self._rank_part,
                self.iterations,
                wait_s * 1000.0,
                compute_s * 1000.0,
                samples,
                self._cpu() * 1000.0,
            )
        )
        self.iterations += 1
        now = self._clock()
        if now >= self._next_flush:
            self._next_flush = now + FLUSH_INTERVAL_S
            self.flush()

    def event(self, kind, fields, flush=True):
        """Writes a rare event ('checkpoint', 'epoch') from any thread; `fields` after v, type, t, rank."""
        if self.ended:
            return  # the end event is the last line
        if self.pending_save is not None and kind != "checkpoint":
            self.pending_save()  # an epoch starts: the held save is over, and its line comes first
        event = {"v": PROTOCOL_VERSION, "type": kind, "t": round(self._wall() * 1000.0, 3), "rank": 0}
        event.update(fields)
        if not self._start_written:
            with self._lock:
                if not self._start_written:
                    self._early.append(event)  # its rank is known once start() has looked
                    return
        self._lines.append(self._event_line(event))
        if flush:
            self.flush()

    def _event_line(self, event):
        event["rank"] = self.config.rank
        return json.dumps(event, separators=(",", ":")) + "\n"

    def end(self, reason):
        """Writes the end event and closes the file (idempotent)."""
        if self.ended or not self.started:
            return
        for hook in list(self.before_end):
            try:
                hook()
            except Exception as error:
                sys.stderr.write(f"ds-analyzer: {type(error).__name__}: {error}\n")
        self.ended = True
        self.end_reason = reason
        self._lines.append(
            '{"v":1,"type":"end","t":%s,"rank":%d,"reason":"%s","iterations":%d}\n'
            % (_num(self._wall() * 1000.0), self.config.rank, reason, self.iterations)
        )
        self.flush()
        if os.getpid() != self._pid:
            self._fd = None
            return
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
            self._fd = None

    def flush(self):
        # A forked child (DataLoader worker, subprocess) inherits the buffer and
        # the fd: only the process that opened the file may write to it. Checked
        # before the lock, which a fork may have copied while another thread held it.
        if not self._lines or self._fd is None or os.getpid() != self._pid:
            return
        with self._lock:
            if self._fd is None:
                return
            # Take the first n lines, never swap the list: an append racing with
            # this (the iteration path takes no lock) lands after them and stays.
            n = len(self._lines)
            data = "".join(self._lines[:n]).encode("utf-8")
            del self._lines[:n]
            while data:
                written = os.write(self._fd, data)
                data = data[written:]

    # -- when to stop -----------------------------------------------------
    def stop_reason(self):
        """'budget' or 'stop-file' when the job must end at this boundary, else None."""
        cfg = self.config
        if cfg.iterations is not None and self.iterations >= cfg.iterations:
            return "budget"
        if cfg.stop_file is None:
            return None
        if self.agree is not None:
            # Same iterations on every rank, one collective: all ranks agree.
            if self.iterations % STOP_CHECK_EVERY_ITERATIONS:
                return None
            return "stop-file" if self._agreed_look()[0] else None
        if cfg.world_size > 1:
            # Ranks without a collective to agree through: check at the same
            # iteration numbers at least, which is all that can be done.
            if self.iterations % STOP_CHECK_EVERY_ITERATIONS:
                return None
            return "stop-file" if os.path.exists(cfg.stop_file) else None
        if self._stop_seen:
            return "stop-file"
        now = self._clock()
        if now < self._next_stop_check:
            return None
        self._next_stop_check = now + STOP_CHECK_INTERVAL_S
        self._stop_seen = os.path.exists(cfg.stop_file)
        return "stop-file" if self._stop_seen else None

    def switch_asked(self):
        """(block, mode) when the control file asks for a newer block at this boundary, else None.

        Looked at as the stop file is: at most every STOP_CHECK_INTERVAL_S in one process; at the
        same iteration numbers on every rank, agreed with one all_reduce, so the ranks switch together
        (on several nodes, once every node's profiler has set its state for the block: agree_look).
        """
        cfg = self.config
        if cfg.control_file is None:
            return None
        if self.agree is not None or cfg.world_size > 1:
            if self.iterations % STOP_CHECK_EVERY_ITERATIONS:
                return None
            if self.agree is not None:
                asked, newest = self._agreed_look()[1:]
                if newest <= self.block:
                    return None  # on several nodes: this node's profiler is ready, another is not yet
                if asked is None or asked[0] < newest:
                    asked = _read_control_until(cfg.control_file, newest)
            else:
                asked = read_control(cfg.control_file)
        else:
            now = self._clock()
            if now < self._next_control_check:
                return None
            self._next_control_check = now + STOP_CHECK_INTERVAL_S
            asked = read_control(cfg.control_file)
        if asked is None or asked[0] <= self.block:
            return None
        return asked

    def _agreed_look(self):
        """(stop flag, control file's line, the block to be in) at this iteration: one all_reduce for the
        stop file and the control file together, made once an iteration (ranks call it alike)."""
        if self._agreed is not None and self._agreed[0] == self.iterations:
            return self._agreed[1:]
        cfg = self.config
        stop = 1 if cfg.stop_file is not None and os.path.exists(cfg.stop_file) else 0
        asked = read_control(cfg.control_file) if cfg.control_file is not None else None
        stop, newest = agree_look(self.agree, stop, asked[0] if asked is not None else self.block, cfg.nodes)
        self._agreed = (self.iterations, stop, asked, newest)
        return self._agreed[1:]

    def switch(self, block, mode, in_flight):
        """Switches to `mode` from this iteration on, with a block event (docs/protocol.md, 'block')."""
        self.block = block
        self.config.mode = mode
        fields = {"block": block, "mode": mode, "i": self.iterations, "inFlight": in_flight}
        self.event("block", fields)

    def _at_exit(self):
        if os.getpid() != self._pid:
            return
        self.end("error" if self._failed else "exhausted")


def agree_look(agree, stop, asked, nodes):
    """(stop, block to be in) agreed by every rank through `agree` (an element-wise MAX over ranks).

    The stop is the MAX: a rank that sees the stop file stops them all. The block, on one node, is the
    newest any rank saw (one profiler wrote the file all ranks read; a rank that read it a moment before
    the rename is pulled along). On several nodes each node's profiler writes its own ranks' file only
    once it has set its page cache for the block, so the block is the oldest any rank saw: the MAX of
    its negation. The switch then waits for the slowest node. A rank whose read came just before the
    rename holds the switch one look longer, never apart.
    """
    if nodes <= 1:
        stop, newest = agree([stop, asked])
        return stop, newest
    stop, oldest = agree([stop, -asked])
    return stop, -oldest


def read_control(path):
    """(block, mode) from the control file's line `<block> <mode>`, or None (no file yet, or not such a line)."""
    try:
        with open(path) as f:
            parts = f.read(64).split()
    except OSError:
        return None
    if len(parts) != 2 or (parts[1] not in MODES and parts[1] != TRAIN):
        return None
    try:
        block = int(parts[0])
    except ValueError:
        return None
    return (block, parts[1]) if block > 0 else None


def _read_control_until(path, block, timeout_s=1.0):
    """Another rank saw `block` first: read the file until this rank sees it too (the CLI renames it in whole)."""
    deadline = time.monotonic() + timeout_s
    while True:
        asked = read_control(path)
        if (asked is not None and asked[0] >= block) or time.monotonic() > deadline:
            return asked
        time.sleep(0.001)


def _distributed_rank():
    """(rank, world size) from an initialised torch.distributed, else None.

    Ranks started by torch.multiprocessing.spawn (the ImageNet example's
    --multiprocessing-distributed) have no RANK/WORLD_SIZE variables: only
    init_process_group(rank=...) knows them. torch is not imported here.
    """
    dist = sys.modules.get("torch.distributed")
    if dist is None:
        return None
    try:
        if dist.is_available() and dist.is_initialized():
            return max(0, int(dist.get_rank())), max(1, int(dist.get_world_size()))
    except Exception:
        pass
    return None


def _watch_uncaught_errors(recorder):
    """Marks the end reason 'error' when the script dies of an uncaught exception."""
    previous = sys.excepthook

    def hook(kind, value, traceback):
        if not issubclass(kind, SystemExit):
            recorder._failed = True
            recorder.end("error")
        previous(kind, value, traceback)

    sys.excepthook = hook


_RECORDER = None
_RECORDER_PID = None
# Set when the manual API (iterate/data/compute) counts iterations in this
# process: the automatic DataLoader instrumentation then counts nothing.
manual_owns_counting = False


def recorder(source="pytorch"):
    """This process's recorder, or None when not profiled (DSA_MODE unset)."""
    global _RECORDER, _RECORDER_PID
    pid = os.getpid()
    if _RECORDER_PID == pid:
        return _RECORDER
    # First use in this process (a forked child starts over: it must not reuse
    # its parent's file).
    config = config_from_env()
    _RECORDER = Recorder(config, source=source) if config is not None else None
    _RECORDER_PID = pid
    return _RECORDER


def reset_for_tests():
    global _RECORDER, _RECORDER_PID
    global manual_owns_counting
    _RECORDER = None
    _RECORDER_PID = None
    manual_owns_counting = False
