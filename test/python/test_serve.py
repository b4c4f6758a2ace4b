"""Remote data's cached mode answered inside the job (ds_analyzer._serve through _http): each test runs a real
client in a fresh interpreter with the hook on PYTHONPATH against a real server on loopback (HTTPS with its
own CA where openssl is there), with a local copy and its index as the CLI writes them, and checks that the
server saw no request for the data while the job got the copy's bytes, counted as answered locally."""

import glob
import json
import os
import shutil
import ssl
import subprocess
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from helpers import run_script, temp_dir

BODY = 100000
COPY = bytes(range(256)) * 400  # 102400 bytes, unlike the origin's


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen = []

    def do_GET(self):
        _Handler.seen.append(self.path)
        self.send_response(200)
        self.send_header("Content-Length", str(BODY))
        self.end_headers()
        self.wfile.write(b"x" * BODY)

    def log_message(self, *args):
        pass


def _last(net_dir):
    total = {"requests": 0, "bytes": 0, "localRequests": 0, "localBytes": 0}
    for path in glob.glob(os.path.join(net_dir, "net-*.jsonl")):
        with open(path) as f:
            last = [json.loads(line) for line in f if line.strip()][-1]
        for name in total:
            total[name] += last.get(name, 0)
    return total


def _by_block(net_dir):
    """Each block's counts over every process: the rise of each process's lines tagged with it (the CLI's sum)."""
    blocks = {}
    for path in glob.glob(os.path.join(net_dir, "net-*.jsonl")):
        before = {"requests": 0, "bytes": 0, "localRequests": 0, "localBytes": 0}
        with open(path) as f:
            lines = [json.loads(line) for line in f if line.strip()]
        for block in sorted({line["block"] for line in lines}):
            end = [line for line in lines if line["block"] == block][-1]
            total = blocks.setdefault(block, dict.fromkeys(before, 0))
            for name in total:
                total[name] += end[name] - before[name]
            before = {name: end[name] for name in before}
    return blocks


def _serve(tls_dir=None):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    if tls_dir is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(os.path.join(tls_dir, "cert.pem"), os.path.join(tls_dir, "key.pem"))
        server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _self_signed():
    folder = temp_dir("dsa-tls-")
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            os.path.join(folder, "key.pem"),
            "-out",
            os.path.join(folder, "cert.pem"),
        ],
        check=True,
        capture_output=True,
    )
    return folder


class ServeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = _serve()
        cls.port = cls.server.server_address[1]

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()

    def setUp(self):
        _Handler.seen.clear()
        self.dir = temp_dir("dsa-serve-")
        self.control = os.path.join(self.dir, "CONTROL")

    def copy_of(self, port, names):
        """The copy's index as the CLI writes it, each object's body COPY."""
        objects = {}
        for name in names:
            path = os.path.join(self.dir, name.replace("/", "_"))
            with open(path, "wb") as f:
                f.write(COPY)
            objects["127.0.0.1:%d/%s" % (port, name)] = {"file": path, "headers": {"ETag": '"e"'}}
        index = os.path.join(self.dir, "index.json")
        with open(index, "w") as f:
            json.dump({"objects": objects}, f)
        return index

    def run_job(self, source, mode, port=None, index=None, extra=None):
        port = port or self.port
        net_dir = os.path.join(self.dir, "net")
        env = {
            "DSA_NET_DIR": net_dir,
            "DSA_NET_ORIGINS": "127.0.0.1:%d" % port,
            "DSA_NET_COPY": index,
            "DSA_CONTROL_FILE": self.control,
        }
        env.update(extra or {})
        proc, _ = run_script(
            "PORT, BODY, CONTROL = %d, %d, %r\n" % (port, BODY, self.control) + source, mode=mode, extra_env=env
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return _last(net_dir), proc.stdout

    def test_a_cached_block_answers_gets_and_ranges_from_the_copy_without_the_origin(self):
        index = self.copy_of(self.port, ["b/k1", "b/k 2"])
        counts, out = self.run_job(
            r"""
import http.client, urllib.request
got = urllib.request.urlopen("http://127.0.0.1:%d/b/k1?x-id=GetObject" % PORT).read()
c = http.client.HTTPConnection("127.0.0.1", PORT)
c.request("GET", "/b/k%202", headers={"Range": "bytes=10-19"}); r = c.getresponse()
print(len(got), got[:3] == bytes([0, 1, 2]), r.status, r.getheader("Content-Range"), list(r.read()))
c.request("GET", "/b/k1", headers={"Range": "bytes=-5"}); r = c.getresponse(); print(r.status, len(r.read()))
c.request("HEAD", "/b/k1"); r = c.getresponse(); print(r.status, r.getheader("Content-Length"), r.read())
""",
            "cached",
            index=index,
        )
        lines = out.splitlines()
        self.assertEqual(lines[0], f"102400 True 206 bytes 10-19/102400 {list(range(10, 20))}")
        self.assertEqual(lines[1:], ["206 5", "200 102400 b''"])
        self.assertEqual(_Handler.seen, [], "the origin saw no request")
        self.assertEqual(counts, {"requests": 0, "bytes": 0, "localRequests": 4, "localBytes": 102400 + 10 + 5})

    def test_an_object_outside_the_copy_is_answered_with_one_in_it(self):
        index = self.copy_of(self.port, ["b/only"])
        counts, out = self.run_job(
            r"""
import urllib.request
print(len(urllib.request.urlopen("http://127.0.0.1:%d/b/other" % PORT).read()))
urllib.request.urlopen("http://localhost:%d/b/only" % PORT).read()   # another host: not the data, not answered
urllib.request.urlopen("http://127.0.0.1:%d/b?list-type=2" % PORT).read()   # a listing: the origin answers it
""",
            "cached",
            index=index,
        )
        self.assertEqual(out.strip(), "102400")
        self.assertEqual(_Handler.seen, ["/b/only", "/b?list-type=2"])
        self.assertEqual((counts["localBytes"], counts["bytes"]), (102400, BODY), "the listing came over the network")

    def test_the_control_file_switches_every_process_between_network_and_copy(self):
        index = self.copy_of(self.port, ["b/k"])
        counts, _ = self.run_job(
            r"""
import multiprocessing, os, urllib.request
def fetch(_):
    return len(urllib.request.urlopen("http://127.0.0.1:%d/b/k" % PORT).read())
def switch(line):
    with open(CONTROL + ".partial", "w") as f:
        f.write(line)
    os.rename(CONTROL + ".partial", CONTROL)
if __name__ == "__main__":
    pool = multiprocessing.get_context("fork").Pool(2)
    assert pool.map(fetch, range(4)) == [BODY] * 4
    switch("1 cached\n")
    assert pool.map(fetch, range(4)) == [102400] * 4
    switch("2 cold\n")
    assert fetch(0) == BODY
    pool.close(); pool.join()
""",
            "cold",
            index=index,
        )
        self.assertEqual(len(_Handler.seen), 5)
        self.assertEqual(counts, {"requests": 5, "bytes": 5 * BODY, "localRequests": 4, "localBytes": 4 * 102400})

    def test_each_block_counts_what_was_fetched_under_it_whenever_the_lines_are_read(self):
        index = self.copy_of(self.port, ["b/k"])
        self.run_job(
            r"""
import multiprocessing, os, urllib.request
def fetch(_):
    return len(urllib.request.urlopen("http://127.0.0.1:%d/b/k" % PORT).read())
def switch(line):
    with open(CONTROL + ".partial", "w") as f:
        f.write(line)
    os.rename(CONTROL + ".partial", CONTROL)
if __name__ == "__main__":
    pool = multiprocessing.get_context("fork").Pool(2)
    pool.map(fetch, range(4), chunksize=1)   # switched at once: no worker has written a line of block 0 yet
    switch("1 cached\n")
    pool.map(fetch, range(6), chunksize=1)
    switch("2 cold\n")
    fetch(0); fetch(1)
    switch("3 train\n")
    fetch(2)
    pool.close(); pool.join()
""",
            "cold",
            index=index,
        )
        blocks = _by_block(os.path.join(self.dir, "net"))
        self.assertEqual(blocks[0], {"requests": 4, "bytes": 4 * BODY, "localRequests": 0, "localBytes": 0})
        self.assertEqual(blocks[1], {"requests": 0, "bytes": 0, "localRequests": 6, "localBytes": 6 * 102400})
        self.assertEqual(blocks[2], {"requests": 2, "bytes": 2 * BODY, "localRequests": 0, "localBytes": 0})
        self.assertEqual(blocks[3]["requests"], 1, "past the blocks (train) counts apart from the last block")

    def test_a_body_read_across_a_switch_counts_in_the_block_its_request_began_in(self):
        self.run_job(
            r"""
import os, time, urllib.request
r = urllib.request.urlopen("http://127.0.0.1:%d/b/shard" % PORT)
r.read(40000)
with open(CONTROL + ".partial", "w") as f:
    f.write("1 cold\n")
os.rename(CONTROL + ".partial", CONTROL)
time.sleep(0.6)   # the writer thread writes its lines meanwhile: still the first block's
r.read()
urllib.request.urlopen("http://127.0.0.1:%d/b/next" % PORT).read()
""",
            "cold",
        )
        blocks = _by_block(os.path.join(self.dir, "net"))
        self.assertEqual((blocks[0]["requests"], blocks[0]["bytes"]), (1, BODY))
        self.assertEqual((blocks[1]["requests"], blocks[1]["bytes"]), (1, BODY))

    def test_a_switch_while_a_request_starts_cannot_put_the_copys_answer_in_the_cold_block(self):
        # The CLI switches from the cold block to the cached one just as a request reads the control file: the mode
        # that sends the request to the copy or the network is the one of the block it counts in.
        index = self.copy_of(self.port, ["b/k"])
        self.run_job(
            r"""
import os, urllib.request
from ds_analyzer import _serve
def switch(line):
    with open(CONTROL + ".partial", "w") as f:
        f.write(line)
    os.rename(CONTROL + ".partial", CONTROL)
switch("1 cold\n")
print(len(urllib.request.urlopen("http://127.0.0.1:%d/b/k" % PORT).read()))
reading = _serve.mode_now
def switched_after_reading():
    mode = reading()
    switch("2 cached\n")
    return mode
_serve.mode_now = switched_after_reading
print(len(urllib.request.urlopen("http://127.0.0.1:%d/b/k" % PORT).read()))
_serve.mode_now = reading
print(len(urllib.request.urlopen("http://127.0.0.1:%d/b/k" % PORT).read()))
""",
            "cold",
            index=index,
        )
        blocks = _by_block(os.path.join(self.dir, "net"))
        self.assertEqual(blocks[1], {"requests": 2, "bytes": 2 * BODY, "localRequests": 0, "localBytes": 0})
        self.assertEqual(blocks[2], {"requests": 0, "bytes": 0, "localRequests": 1, "localBytes": 102400})

    def test_without_a_copy_the_cached_mode_goes_to_the_network(self):
        counts, _ = self.run_job(
            r"""
import urllib.request
urllib.request.urlopen("http://127.0.0.1:%d/b/k" % PORT).read()
""",
            "cached",
            index=None,
        )
        self.assertEqual((counts["requests"], counts["localRequests"]), (1, 0))

    @unittest.skipUnless(shutil.which("openssl"), "needs openssl for a self-signed certificate")
    def test_https_through_urllib3_with_its_own_ca_is_answered_above_tls(self):
        try:
            import urllib3  # noqa: F401
        except ImportError:
            self.skipTest("needs urllib3 (boto3's client)")
        tls = _self_signed()
        server = _serve(tls)
        port = server.server_address[1]
        try:
            index = self.copy_of(port, ["b/k"])
            counts, out = self.run_job(
                r"""
import os, urllib3
pool = urllib3.PoolManager(ca_certs=os.environ["CA"])
print([len(pool.request("GET", "https://127.0.0.1:%d/b/k" % PORT).data) for _ in range(3)])
with open(CONTROL, "w") as f:
    f.write("1 cold\n")
print(len(pool.request("GET", "https://127.0.0.1:%d/b/k" % PORT).data))
""",
                "cached",
                port=port,
                index=index,
                extra={"CA": os.path.join(tls, "cert.pem")},
            )
        finally:
            server.shutdown()
        self.assertEqual(out.splitlines(), ["[102400, 102400, 102400]", str(BODY)])
        self.assertEqual(_Handler.seen, ["/b/k"], "only the cold request reached the origin")
        self.assertEqual(counts, {"requests": 1, "bytes": BODY, "localRequests": 3, "localBytes": 3 * 102400})


if __name__ == "__main__":
    unittest.main()
