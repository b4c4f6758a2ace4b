"""The job's own HTTP requests to the data's origins, counted inside its processes (remote data, cold mode).

`ds-analyzer profile --remote` meters the cold mode here instead of through its proxy when it can: a proxy
that carries every byte costs about a CPU core at 200 MB/s and 2,000 requests/s, this costs microseconds per
request and nothing per byte (bench/client-meter.bench.ts). It patches Python's http.client, which
boto3/botocore, requests, urllib3 and urllib all send through (plain HTTP and HTTPS alike, since it sits
above TLS), and counts only requests to DSA_NET_ORIGINS (host:port, comma-separated). What it cannot see:
other clients (curl, the AWS CRT, a native library), and bodies without a Content-Length (chunked), whose
bytes are not counted. aiohttp (fsspec's HTTP filesystem, s3fs, gcsfs) does not send through http.client:
_aiohttp.py counts its requests in these same counters, through begin(), responded() and end().

In a cached block of one launch the requests for the data's objects are answered from the CLI's local copy
(_serve.py): those count apart, as localRequests and localBytes, and never in requests or bytes, which stay
what came over the network.

Bytes are the body bytes the client took: the response's declared length less what is left unread, read
when a request ends or when the counters are written, so no read is wrapped. Each line carries the block of one launch
it was counted in (the control file's, as _serve.py reads it): a process that sees the block change at its
next request writes its line of the old block first, so a block's counts are the rise of its lines, whenever
the CLI reads them. A body follows its request: one read across a switch (a shard streamed over many batches)
counts in the block its request began in, until the process's next request. Each process appends its
cumulative counters to DSA_NET_DIR/net-PID.jsonl at most every FLUSH_EVERY_S (from a daemon thread, so a
long shard download is seen while it streams) and once more as it exits; a process killed by a signal loses
at most its last FLUSH_EVERY_S of counts.
"""

import atexit
import json
import os
import threading
import time
import weakref

from . import _serve
from ._files import append_line

FLUSH_EVERY_S = 0.25
# Timings kept per process between two lines written: enough for p99, bounded whatever the request rate.
MAX_SAMPLES = 20000

_perf = time.perf_counter
# Wall time in ms from the monotonic clock: one clock read per request instead of two.
_WALL_MS_AT_PERF_ZERO = time.time() * 1000.0 - _perf() * 1000.0


class _Counters:
    def __init__(self, directory):
        self.pid = os.getpid()
        self.path = os.path.join(directory, "net-%d.jsonl" % self.pid)
        self.lock = threading.Lock()
        self.requests = 0
        self.ended_bytes = 0
        self.busy_s = 0.0
        self.in_flight = 0
        self.max_in_flight = 0
        self.first_ms = None  # wall time of the first request, and of the last one's end: when this process fetched
        self.last_end_ms = None
        self.statuses = {}
        self.failures = 0
        self.first_byte_ms = []
        self.request_ms = []
        self.open = weakref.WeakSet()  # responses of matched requests still being read (one dropped unread ends)
        self.local_requests = 0
        self.local_ended_bytes = 0
        self.open_local = weakref.WeakSet()  # responses answered from the local copy still being read
        self.dirty = False
        self.thread = None
        self.block, _ = _serve.block_and_mode()  # the block of one launch the counts since the last line belong to
        self.writing = threading.Lock()  # lines reach the file in the order they were taken

    def bytes_now(self):
        return self.ended_bytes + sum(_read_so_far(r) for r in list(self.open))

    def local_bytes_now(self):
        return self.local_ended_bytes + sum(_read_so_far(r) for r in list(self.open_local))

    def line(self, next_block=None):
        """The counters' line, of the block counted in; `next_block`: the counts from here on are that block's."""
        with self.lock:
            record = {
                "pid": self.pid,
                "block": self.block,
                "t": time.time() * 1000.0,
                "requests": self.requests,
                "bytes": self.bytes_now(),
                "busyMs": self.busy_s * 1000.0,
                "inFlight": self.in_flight,
                "maxInFlight": self.max_in_flight,
                "firstMs": self.first_ms,
                "lastEndMs": self.last_end_ms,
                "statuses": dict(self.statuses),
                "failures": self.failures,
                "firstByteMs": self.first_byte_ms,
                "requestMs": self.request_ms,
                "localRequests": self.local_requests,
                "localBytes": self.local_bytes_now(),
            }
            self.first_byte_ms, self.request_ms = [], []
            self.dirty = False
            if next_block is not None:
                self.block = next_block
        return json.dumps(record, separators=(",", ":")) + "\n"

    def flush(self, next_block=None):
        if os.getpid() != self.pid:
            return
        with self.writing:
            append_line(self.path, self.line(next_block))

    def follow_block(self):
        """At a request: where the block changed, the old block's line is written before this request counts; the
        block's mode, which decides whether the copy answers the request."""
        block, mode = _serve.block_and_mode()
        if block != self.block:
            try:
                self.flush(next_block=block)
            except OSError:
                self.block = block
        return mode

    def run(self):
        while True:
            time.sleep(FLUSH_EVERY_S)
            if self.dirty or self.open or self.open_local:
                try:
                    self.flush()
                except OSError:
                    return


_state = {"dir": None, "origins": frozenset(), "counters": None, "creating": threading.Lock(), "serving": False}


def _counters():
    """This process's counters: a forked loader worker starts its own (and its own writer thread)."""
    counters = _state["counters"]
    if counters is not None:
        return counters
    with _state["creating"]:  # two threads' first requests (a boto3 thread pool) make one set of counters
        if _state["counters"] is not None:
            return _state["counters"]
        counters = _Counters(_state["dir"])
        counters.thread = threading.Thread(target=counters.run, name="ds-analyzer-net", daemon=True)
        counters.thread.start()
        atexit.register(counters.flush)
        try:  # a forked worker leaves through multiprocessing, which runs its finalizers, not atexit
            from multiprocessing import util

            util.Finalize(None, counters.flush, exitpriority=100)
        except Exception:
            pass
        _state["counters"] = counters
    return counters


def _read_so_far(response):
    content = response.__dict__.get("_dsa_content")
    if content is not None:  # an aiohttp response (_aiohttp.py): the body bytes its stream took in
        return content.total_bytes
    total = getattr(response, "_dsa_length", None)
    left = response.length if response.length is not None else 0
    return max(0, total - left) if total is not None else 0


def _is_data(connection):
    """Whether the connection goes to one of the data's origins (worked out once per connection)."""
    matched = connection.__dict__.get("_dsa_is_data")
    if matched is None:
        host = getattr(connection, "_tunnel_host", None) or connection.host
        port = getattr(connection, "_tunnel_port", None) or connection.port or connection.default_port
        matched = connection._dsa_is_data = f"{host}:{port}" in _state["origins"]
    return matched


def _end(holder, response, failed):
    """A matched request is over: its bytes and times go to the totals. `holder` keeps its start time: the
    connection until the response came, the response after (the response does not point back at the
    connection, which points at it: no reference cycle left for the garbage collector per request)."""
    started = holder.__dict__.pop("_dsa_started", None)
    if started is None:
        return
    counters = _counters()
    now = _perf()
    with counters.lock:
        counters.in_flight = max(0, counters.in_flight - 1)
        counters.busy_s += now - started
        counters.last_end_ms = _WALL_MS_AT_PERF_ZERO + now * 1000.0
        if failed:
            counters.failures += 1
        if response is not None:
            counters.open.discard(response)
            counters.ended_bytes += _read_so_far(response)
            if len(counters.request_ms) < MAX_SAMPLES:
                counters.request_ms.append((now - started) * 1000.0)
        counters.dirty = True


def _end_local(response):
    """A response answered from the local copy was read or closed: its bytes go to the local totals."""
    if not response.__dict__.pop("_dsa_local", False):
        return
    counters = _counters()
    with counters.lock:
        counters.open_local.discard(response)
        counters.local_ended_bytes += _read_so_far(response)
        counters.dirty = True


def _begin_local(response):
    """A response answered from the local copy: counted apart while it is read."""
    counters = _counters()
    with counters.lock:
        counters.open_local.add(response)
    response._dsa_length = response.length
    response._dsa_local = True
    if response.length == 0 or response.fp is None:
        _end_local(response)
    return response


def _answer_locally(connection, method, url, mode):
    """Puts a local socket under a request the copy answers (closing an idle one to the origin); True if so."""
    local = _serve.answer(connection, method, url, mode)
    if local is None:
        if isinstance(connection.sock, _serve._LocalSocket):
            connection.sock = None  # the next request to the origin connects again
        return False
    if connection.sock is not None:
        try:
            connection.sock.close()
        except OSError:
            pass
    connection.sock = local
    count_local()
    connection._dsa_local = True
    return True


def count_local():
    """One request answered from the local copy."""
    counters = _counters()
    with counters.lock:
        counters.local_requests += 1
        counters.dirty = True


def begin(holder):
    """A request to the data's origins goes to the network: counted, its start kept on `holder`."""
    if "_dsa_started" in holder.__dict__:  # sent again before its answer came (a failed send): that one ended
        _end(holder, None, failed=True)
    counters = _counters()
    started = _perf()
    with counters.lock:
        if counters.first_ms is None:
            counters.first_ms = _WALL_MS_AT_PERF_ZERO + started * 1000.0
        counters.requests += 1
        counters.in_flight += 1
        counters.max_in_flight = max(counters.max_in_flight, counters.in_flight)
        counters.dirty = True
    holder._dsa_started = started


def responded(holder, response, status):
    """Its answer came: the time to its first byte and its status; `response` is read from now on."""
    started = holder.__dict__.pop("_dsa_started", None)
    if started is None:
        return None
    counters = _counters()
    with counters.lock:
        if len(counters.first_byte_ms) < MAX_SAMPLES:
            counters.first_byte_ms.append((_perf() - started) * 1000.0)
        counters.statuses[str(status)] = counters.statuses.get(str(status), 0) + 1
        counters.open.add(response)
    response._dsa_started = started
    return started


def end(response, failed=False):
    """A request is over (its body read, or the response closed or released)."""
    _end(response, response, failed)


def serving():
    """Whether a local copy may answer the data's requests (a cached block of one launch)."""
    return _state["serving"]


def installed():
    return _state["dir"] is not None


def install(env):
    """Patches http.client when DSA_NET_DIR names the folder for the counters."""
    directory = env.get("DSA_NET_DIR", "")
    if not directory:
        return
    import http.client as client

    os.makedirs(directory, exist_ok=True)
    # A forked loader worker counts its own requests in its own file, from zero.
    os.register_at_fork(after_in_child=lambda: _state.update(counters=None, creating=threading.Lock()))
    _state["dir"] = directory
    _state["origins"] = frozenset(o.strip() for o in env.get("DSA_NET_ORIGINS", "").split(",") if o.strip())
    _state["serving"] = _serve.configure(env)
    connection_cls, response_cls = client.HTTPConnection, client.HTTPResponse
    putrequest, endheaders, getresponse = (
        connection_cls.putrequest,
        connection_cls.endheaders,
        connection_cls.getresponse,
    )
    close_conn = response_cls._close_conn

    def counted_putrequest(self, method, url, *args, **kwargs):
        self.__dict__.pop("_dsa_local", None)
        data = _is_data(self)
        mode = _counters().follow_block() if data else None
        if data and not (_state["serving"] and _answer_locally(self, method, url, mode)):
            begin(self)
        return putrequest(self, method, url, *args, **kwargs)

    def counted_endheaders(self, *args, **kwargs):
        try:
            return endheaders(self, *args, **kwargs)  # connects and sends: a refused or reset connection fails here
        except BaseException:
            _end(self, None, failed=True)
            raise

    def counted_getresponse(self, *args, **kwargs):
        try:
            response = getresponse(self, *args, **kwargs)
        except TypeError:
            raise  # a call it does not take (urllib3 1.26 tries buffering=True first): not the request's failure
        except BaseException:
            _end(self, None, failed=True)
            raise
        if self.__dict__.pop("_dsa_local", False):
            return _begin_local(response)
        if responded(self, response, response.status) is not None:
            response._dsa_length = response.length
            if response.length == 0 or response.fp is None:
                _end(response, response, failed=False)
        return response

    def counted_close_conn(self):
        _end_local(self)
        _end(self, self, failed=False)
        return close_conn(self)

    _state["originals"] = (putrequest, endheaders, getresponse, close_conn)
    connection_cls.putrequest = counted_putrequest
    connection_cls.endheaders = counted_endheaders
    connection_cls.getresponse = counted_getresponse
    response_cls._close_conn = counted_close_conn


def uninstall():
    """Puts http.client back (the benchmark measures the same requests with and without the hook in one process)."""
    import http.client as client

    originals = _state.pop("originals", None)
    if originals is not None:
        client.HTTPConnection.putrequest, client.HTTPConnection.endheaders, client.HTTPConnection.getresponse = (
            originals[:3]
        )
        client.HTTPResponse._close_conn = originals[3]
