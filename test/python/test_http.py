"""The cold mode's meter inside the job (ds_analyzer._http): each test runs a real client in a fresh
interpreter with the hook on PYTHONPATH against a real HTTP server on loopback, as `ds-analyzer profile
--remote` runs a job, and reads the counters the job's processes wrote."""

import glob
import json
import os
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from helpers import run_script, temp_dir

BODY = 100000


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path.startswith("/missing"):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Length", str(BODY))
        self.end_headers()
        self.wfile.write(b"x" * BODY)

    def log_message(self, *args):
        pass


def _last_lines(net_dir):
    out = {}
    for path in glob.glob(os.path.join(net_dir, "net-*.jsonl")):
        with open(path) as f:
            lines = [json.loads(line) for line in f if line.strip()]
        out[lines[-1]["pid"]] = lines
    return out


class HttpMeterTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        cls.port = cls.server.server_address[1]
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()

    def run_client(self, source, origins=None):
        net_dir = os.path.join(temp_dir("dsa-net-"), "net")
        env = {"DSA_NET_DIR": net_dir, "DSA_NET_ORIGINS": origins or "127.0.0.1:%d" % self.port}
        proc, _ = run_script("PORT, BODY = %d, %d\n" % (self.port, BODY) + source, mode="cold", extra_env=env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return _last_lines(net_dir)

    def test_counts_requests_bytes_and_timings_of_urllib_and_a_partial_read(self):
        processes = self.run_client(r"""
import urllib.request, http.client
for k in range(5):
    urllib.request.urlopen("http://127.0.0.1:%d/f%d" % (PORT, k)).read()
c = http.client.HTTPConnection("127.0.0.1", PORT)
c.request("GET", "/partial"); r = c.getresponse(); r.read(1000); r.close()
""")
        self.assertEqual(len(processes), 1)
        last = list(processes.values())[0][-1]
        self.assertEqual(last["requests"], 6)
        self.assertEqual(last["bytes"], 5 * BODY + 1000, "a response closed after 1000 bytes counts 1000")
        self.assertEqual(last["statuses"], {"200": 6})
        self.assertEqual(last["inFlight"], 0)
        self.assertEqual(last["maxInFlight"], 1)
        timings = [t for line in list(processes.values())[0] for t in line["firstByteMs"]]
        self.assertEqual(len(timings), 6)
        self.assertTrue(last["busyMs"] > 0 and last["firstMs"] <= last["lastEndMs"])

    def test_only_the_origins_count_and_an_error_status_is_a_status(self):
        processes = self.run_client(r"""
import urllib.request, urllib.error
urllib.request.urlopen("http://127.0.0.1:%d/data" % PORT).read()
urllib.request.urlopen("http://localhost:%d/model" % PORT).read()   # another host: a model download, not the data
try:
    urllib.request.urlopen("http://127.0.0.1:%d/missing" % PORT)
except urllib.error.HTTPError:
    pass
""")
        last = list(processes.values())[0][-1]
        self.assertEqual(last["requests"], 2)
        self.assertEqual(last["bytes"], BODY)
        self.assertEqual(last["statuses"], {"200": 1, "404": 1})

    def test_a_refused_connection_is_a_failure_not_a_request_left_open(self):
        processes = self.run_client(
            r"""
import urllib.request, urllib.error
try:
    urllib.request.urlopen("http://127.0.0.1:9/nothing-listens", timeout=2)
except (urllib.error.URLError, OSError):
    pass
urllib.request.urlopen("http://127.0.0.1:%d/data" % PORT).read()
""",
            origins="127.0.0.1:9,127.0.0.1:%d" % self.port,
        )
        last = list(processes.values())[0][-1]
        self.assertEqual(last["inFlight"], 0, "the refused request was closed")
        self.assertEqual(last["bytes"], BODY)

    def test_forked_workers_write_their_own_counters(self):
        processes = self.run_client(r"""
import multiprocessing, urllib.request
def fetch(k):
    return len(urllib.request.urlopen("http://127.0.0.1:%d/w%d" % (PORT, k)).read())
if __name__ == "__main__":
    pool = multiprocessing.get_context("fork").Pool(2)
    assert sum(pool.map(fetch, range(8))) == 8 * BODY
    pool.close()   # the workers leave in order, as a DataLoader's do: each writes its last counts as it goes
    pool.join()
""")
        self.assertGreaterEqual(len(processes), 1)
        self.assertEqual(sum(lines[-1]["bytes"] for lines in processes.values()), 8 * BODY)
        self.assertEqual(sum(lines[-1]["requests"] for lines in processes.values()), 8)

    def test_threads_that_start_at_once_share_one_set_of_counters(self):
        processes = self.run_client(r"""
import threading, urllib.request
start = threading.Barrier(8)
def fetch(k):
    start.wait()
    for j in range(5):
        urllib.request.urlopen("http://127.0.0.1:%d/t%d-%d" % (PORT, k, j)).read()
threads = [threading.Thread(target=fetch, args=(k,)) for k in range(8)]
for t in threads: t.start()
for t in threads: t.join()
""")
        last = list(processes.values())[0][-1]
        self.assertEqual((last["requests"], last["bytes"]), (40, 40 * BODY))
        self.assertLessEqual(last["maxInFlight"], 8)

    def test_without_the_folder_nothing_is_patched(self):
        proc, _ = run_script(
            r"""
import http.client
print(http.client.HTTPConnection.putrequest.__module__)
""",
            mode="cold",
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.strip(), "http.client")


if __name__ == "__main__":
    unittest.main()
