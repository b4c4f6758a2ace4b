"""The client of bench/client-meter.bench.ts: in one process, GETs COUNT bodies of SIZE bytes from the origin
on one keep-alive connection with http.client (what boto3, requests and urllib send through), in ROUNDS pairs:
once plain and once with ds-analyzer's hook installed (alternating, so a drift of the machine's pace hits
both alike). Prints one JSON line: the CPU seconds of each round of each kind."""

import http.client
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from ds_analyzer import _http  # noqa: E402

port, size, count, rounds = (int(a) for a in sys.argv[1:5])
connection = http.client.HTTPConnection("127.0.0.1", port)

if size == 0:
    # The hook's own code alone: http.client's methods stubbed, so no socket, parser or origin adds its noise.
    class _Answer(http.client.HTTPResponse):
        def __init__(self):
            self.status, self.length, self.fp = 200, 1024, object()

        def read(self, amt=None):
            self.length = 0
            self._close_conn()
            return b""

    http.client.HTTPConnection.putrequest = lambda self, *a, **k: None
    http.client.HTTPConnection.endheaders = lambda self, *a, **k: None
    http.client.HTTPConnection.getresponse = lambda self, *a, **k: _Answer()
    http.client.HTTPResponse._close_conn = lambda self: None
    http.client.HTTPConnection.request = lambda self, method, url: (self.putrequest(method, url), self.endheaders())


def transfer():
    started = time.process_time()
    for _ in range(count):
        connection.request("GET", "/bytes/%d" % size)
        response = connection.getresponse()
        while response.read(1 << 20):
            pass
    return time.process_time() - started


transfer()  # warm-up: the connection, the origin's buffers
with tempfile.TemporaryDirectory() as folder:
    plain, hooked = [], []
    for _ in range(rounds):
        plain.append(transfer())
        _http.install({"DSA_NET_DIR": folder, "DSA_NET_ORIGINS": "127.0.0.1:%d" % port})
        hooked.append(transfer())
        _http.uninstall()
print(json.dumps({"plain": plain, "hooked": hooked}))
