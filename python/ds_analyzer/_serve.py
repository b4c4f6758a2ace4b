"""Remote data's cached mode answered inside the job (`ds-analyzer profile --remote`, one launch).

In a cached block the hook answers the job's GET and HEAD requests for the data's objects from the local
copy the CLI stored, without touching the network. It works on http.client's connection (which boto3/botocore,
requests, urllib3 and urllib send through, HTTPS included: it sits above TLS): the request goes to a socket of
its own (_LocalSocket) that keeps what the client sends and hands back a whole HTTP response built from the
stored file, so every client parses it as it would the origin's (status 200, or 206 for a Range, the headers
as stored, Content-Length). aiohttp's requests (fsspec's HTTP, s3fs) get the same socket's answer (_aiohttp.py).

The mode in force is DSA_MODE until the control file (DSA_CONTROL_FILE) names another block: each matched
request stats that file (about a microsecond) and reads it again when it changed, so the loader's workers
follow a block switch by themselves, and the counters (_http.py) tag what they count with the block. The
copy's index (DSA_NET_COPY, JSON: {"objects": {key: {"file", "headers"}}}) is read again with it. A key is
the request's host (with its port where it is not the scheme's) and decoded path, as the CLI's response cache
keys it (src/system/network/response-cache.ts).

The copy may hold only part of the data (a copy bounded by the disk and by what the block reads): a request
for an object outside it is answered with a stored object picked by the key's hash (the same one every
time), as the cached mode on local data reads a seeded subset of the files (docs/method.md, "Datasets larger than
memory"): prep's cost per sample does not depend on which sample it is.
"""

import io
import json
import os
import socket
import zlib
from urllib.parse import unquote, urlsplit

MODES = ("synthetic", "cached", "cold")

_state = {
    "mode": None,
    "block": 0,
    "control": None,
    "control_sig": None,
    "index_path": None,
    "index_sig": None,
    "objects": {},
    "by_size": [],
    "idle": None,
}


def configure(env):
    """Reads the launch's variables; True when there is a copy to answer from."""
    _state.update(
        mode=env.get("DSA_MODE") or None,
        block=0,
        control=env.get("DSA_CONTROL_FILE") or None,
        control_sig=None,
        index_path=env.get("DSA_NET_COPY") or None,
        index_sig=None,
        objects={},
        by_size=[],
    )
    return _state["index_path"] is not None


def _signature(path):
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_ino, st.st_size)


def _read_control(path):
    """(block, mode) of the control file's line `<block> <mode>`; mode None past the blocks (`<block> train`)."""
    try:
        with open(path) as f:
            parts = f.read(64).split()
        block = int(parts[0]) if len(parts) == 2 else -1
    except (OSError, ValueError):
        return None
    return (block, parts[1] if parts[1] in MODES else None) if block >= 0 else None


def _load_index(path):
    try:
        with open(path, encoding="utf-8") as f:
            objects = json.load(f).get("objects", {})
    except (OSError, ValueError, AttributeError):
        objects = {}
    sized = []
    for key, entry in objects.items():
        try:
            entry["bytes"] = os.path.getsize(entry["file"])
        except (OSError, KeyError, TypeError):
            continue
        sized.append((entry["bytes"], key))
    sized.sort()
    _state["objects"] = {key: objects[key] for _, key in sized}
    _state["by_size"] = sized


def mode_now():
    """The block's mode: the control file's where it names one, else DSA_MODE; the index follows its file."""
    control = _state["control"]
    if control is not None:
        sig = _signature(control)
        if sig != _state["control_sig"]:
            _state["control_sig"] = sig
            asked = _read_control(control) if sig is not None else None
            if asked is not None:
                _state["block"] = asked[0]
                if asked[1] is not None:
                    _state["mode"] = asked[1]
    index = _state["index_path"]
    if index is not None and _state["mode"] == "cached":
        sig = _signature(index)
        if sig != _state["index_sig"]:
            _state["index_sig"] = sig
            _load_index(index)
    return _state["mode"]


def block_and_mode():
    """The block of one launch the process is in (0 before the control file names one) and its mode, from one
    reading: a request counts in the block whose mode decided where it went (read twice, a switch between the readings
    counted a request the copy answered in the cold block before it)."""
    mode = mode_now()
    return _state["block"], mode


def request_key(connection, url):
    """The copy's key of a request: host[:port] and the decoded path, without the query."""
    parts = urlsplit(url)
    path = parts.path if parts.scheme else url.split("?", 1)[0].split("#", 1)[0]
    host = getattr(connection, "_tunnel_host", None) or connection.host
    port = getattr(connection, "_tunnel_port", None) or connection.port or connection.default_port
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return host + ("" if port == connection.default_port else f":{port}") + unquote(path or "/")


def entry_for(key, url="/"):
    """The stored object answering `key`: its own, else one of the copy picked by the key's hash, where the request
    asks for an object (a listing, `GET /bucket?list-type=2`, or a folder's URL goes to the origin)."""
    objects = _state["objects"]
    entry = objects.get(key)
    if entry is not None or not objects or not _asks_for_object(url):
        return entry
    sizes = _state["by_size"]
    return objects[sizes[zlib.crc32(key.encode("utf-8", "surrogateescape")) % len(sizes)][1]]


def _asks_for_object(url):
    """Whether a request's URL can be an object's GET: no query but S3's own `x-id=GetObject`, not a folder."""
    parts = urlsplit(url)
    return parts.query in ("", "x-id=GetObject") and not parts.path.endswith("/")


def answer(connection, method, url, mode):
    """A local socket answering this request from the copy, or None when it goes to the network; `mode`: the mode of
    the block the request counts in (block_and_mode)."""
    if method not in ("GET", "HEAD") or mode != "cached" or not _state["objects"]:
        return None
    entry = entry_for(request_key(connection, url), url)
    if entry is None:
        return None
    try:
        body = open(entry["file"], "rb")  # opened now: the CLI may remove the copy once the block ends
    except OSError:
        return None
    return _LocalSocket(body, entry.get("headers") or {}, method == "HEAD")


def _idle_fd():
    """A socket nobody writes to: its descriptor polls as an idle, open connection (urllib3's pool checks)."""
    if _state["idle"] is None or _state["idle"][0].fileno() < 0:
        _state["idle"] = socket.socketpair()
    return _state["idle"][0].fileno()


def _byte_range(header, size):
    """(start, end inclusive) of a single `bytes=` range, None for the whole object, or 'bad' when unsatisfiable."""
    if not header or not header.strip().lower().startswith("bytes=") or "," in header:
        return None
    spec = header.strip()[6:].strip()
    first, _, last = spec.partition("-")
    try:
        if first == "":
            count = int(last)
            return (max(0, size - count), size - 1) if count > 0 and size > 0 else "bad"
        start = int(first)
        end = min(int(last), size - 1) if last else size - 1
    except ValueError:
        return None
    return (start, end) if start <= end and start < size else "bad"


def _range_header(sent):
    for line in sent.split(b"\r\n")[1:]:
        if not line:
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"range":
            return value.decode("latin-1").strip()
    return None


def response_head(sent, headers, size):
    """(status line and headers, body offset, body length) for the request bytes `sent`."""
    wanted = _byte_range(_range_header(sent), size)
    lines = [f"{k}: {v}" for k, v in headers.items() if k.lower() not in ("content-length", "content-range")]
    lines.append("Accept-Ranges: bytes")
    if wanted == "bad":
        status, start, count = "416 Range Not Satisfiable", 0, 0
        lines.append("Content-Range: bytes */%d" % size)
    elif wanted is None:
        status, start, count = "200 OK", 0, size
    else:
        status, start, count = "206 Partial Content", wanted[0], wanted[1] - wanted[0] + 1
        lines.append("Content-Range: bytes %d-%d/%d" % (wanted[0], wanted[1], size))
    lines.append("Content-Length: %d" % count)
    head = ("HTTP/1.1 {}\r\n{}\r\n\r\n".format(status, "\r\n".join(lines))).encode("latin-1")
    return head, start, count


class _LocalBody(io.RawIOBase):
    """The response's bytes: the head, then `count` bytes of the stored file from `start`."""

    def __init__(self, head, body, start, count):
        super().__init__()
        self._head = memoryview(head)
        self._body = body
        self._left = count
        body.seek(start)

    def readable(self):
        return True

    def readinto(self, b):
        if len(self._head):
            k = min(len(b), len(self._head))
            b[:k] = self._head[:k]
            self._head = self._head[k:]
            return k
        if self._left <= 0:
            return 0
        k = self._body.readinto(memoryview(b)[: min(len(b), self._left)]) or 0
        self._left = self._left - k if k else 0
        return k

    def close(self):
        if self._body is not None:
            self._body.close()
        super().close()


class _LocalSocket:
    """The connection's socket for one request answered locally: what is sent is kept, the answer read back."""

    def __init__(self, body, headers, head_only):
        self._body = body
        self._headers = headers
        self._head_only = head_only
        self._sent = bytearray()

    def sendall(self, data):
        if len(self._sent) < 65536:  # the request line and headers are all it needs
            self._sent += data

    send = sendall

    def makefile(self, mode="rb", *args, **kwargs):
        size = os.fstat(self._body.fileno()).st_size
        head, start, count = response_head(bytes(self._sent), self._headers, size)
        body, self._body = self._body, None  # the response owns it now, as a socket's file outlives the socket
        return io.BufferedReader(_LocalBody(head, body, start, 0 if self._head_only else count))

    def settimeout(self, timeout):
        pass

    def gettimeout(self):
        return None

    def setsockopt(self, *args):
        pass

    def fileno(self):
        return _idle_fd()

    def shutdown(self, how):
        pass

    def close(self):
        if self._body is not None:
            self._body.close()
