"""aiohttp's requests under the hook (ds_analyzer._aiohttp): fsspec's HTTPFileSystem (as s3fs and gcsfs, it sends
through aiohttp) and aiohttp itself run in a fresh interpreter with the hook on PYTHONPATH against a real HTTP server
on loopback, as `ds-analyzer profile --remote` runs a job. A cold block's bytes count in the job's counters; a cached
block's reads are answered from the local copy while the server sees no request for them."""

import glob
import json
import os
import shutil
import ssl
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from helpers import run_script, temp_dir
from test_serve import _self_signed

try:
    import aiohttp  # noqa: F401
    import fsspec  # noqa: F401

    HAVE_AIOHTTP = True
except ImportError:
    HAVE_AIOHTTP = False

NEEDS_AIOHTTP = "needs aiohttp and fsspec (Debian: apt-get install python3-aiohttp python3-fsspec)"
BODY = bytes(range(251)) * 400  # 100400 bytes
COPY = bytes(range(256)) * 400  # 102400 bytes, unlike the origin's


class _Handler(BaseHTTPRequestHandler):
    """An object store's GET and HEAD of one body, with single byte ranges."""

    protocol_version = "HTTP/1.1"
    seen = []
    sent = [0]  # body bytes written

    def _answer(self, head_only):
        _Handler.seen.append((self.command, self.path))
        if self.path.startswith("/missing"):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        start, end = 0, len(BODY) - 1
        wanted = self.headers.get("Range")
        if wanted:
            first, _, last = wanted[len("bytes=") :].partition("-")
            start, end = int(first), min(int(last), end) if last else end
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end, len(BODY)))
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(end - start + 1))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        if not head_only:
            self.wfile.write(BODY[start : end + 1])
            _Handler.sent[0] += end - start + 1

    def do_GET(self):
        self._answer(False)

    def do_HEAD(self):
        self._answer(True)

    def log_message(self, *args):
        pass


def _totals(net_dir):
    total = {"requests": 0, "bytes": 0, "localRequests": 0, "localBytes": 0, "statuses": {}, "inFlight": 0}
    for path in glob.glob(os.path.join(net_dir, "net-*.jsonl")):
        with open(path) as f:
            last = [json.loads(line) for line in f if line.strip()][-1]
        for name in total:
            if name == "statuses":
                for status, n in last["statuses"].items():
                    total["statuses"][status] = total["statuses"].get(status, 0) + n
            else:
                total[name] += last.get(name, 0)
    return total


@unittest.skipUnless(HAVE_AIOHTTP, NEEDS_AIOHTTP)
class AiohttpTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        cls.port = cls.server.server_address[1]
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()

    def setUp(self):
        _Handler.seen.clear()
        _Handler.sent[0] = 0
        self.dir = temp_dir("dsa-aiohttp-")
        self.control = os.path.join(self.dir, "CONTROL")

    def copy_of(self, names, port=None):
        """The copy's index as the CLI writes it, each object's body COPY."""
        objects = {}
        for name in names:
            path = os.path.join(self.dir, name.replace("/", "_"))
            with open(path, "wb") as f:
                f.write(COPY)
            objects["127.0.0.1:%d/%s" % (port or self.port, name)] = {"file": path, "headers": {"ETag": '"e"'}}
        index = os.path.join(self.dir, "index.json")
        with open(index, "w") as f:
            json.dump({"objects": objects}, f)
        return index

    def run_job(self, source, mode, index=None, port=None, scheme="http", extra=None):
        port = port or self.port
        net_dir = os.path.join(self.dir, "net")
        env = {
            "DSA_NET_DIR": net_dir,
            "DSA_NET_ORIGINS": "127.0.0.1:%d" % port,
            "DSA_NET_COPY": index,
            "DSA_CONTROL_FILE": self.control,
            **(extra or {}),
        }
        prelude = "PORT, CONTROL = %d, %r\nURL = '%s://127.0.0.1:%%d/b/' %% PORT\n" % (port, self.control, scheme)
        proc, _ = run_script(prelude + source, mode=mode, extra_env=env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stderr, "", "no warning: every response and stream closed")
        return _totals(net_dir), proc.stdout

    def test_fsspec_reads_in_a_cold_block_count_the_bytes_read(self):
        counts, out = self.run_job(
            r"""
import fsspec
fs = fsspec.filesystem("http")
whole = fs.cat_file(URL + "k1")
part = fs.cat_file(URL + "k2", start=10, end=1010)
with fs.open(URL + "k3", block_size=4096) as f:
    f.seek(50000); some = f.read(3000)
print(len(whole) + len(part) + len(some))
""",
            "cold",
        )
        read = int(out.strip())
        self.assertEqual(read, len(BODY) + 1000 + 3000)
        self.assertEqual(counts["requests"], len(_Handler.seen))
        # What came over the network: what was read, and the file's read-ahead of one block (4096 bytes).
        self.assertEqual(counts["bytes"], _Handler.sent[0])
        self.assertEqual(counts["bytes"], read + 4096)
        self.assertEqual(counts["inFlight"], 0)
        self.assertEqual((counts["localRequests"], counts["localBytes"]), (0, 0))

    def test_aiohttp_counts_only_the_origins_and_every_status(self):
        counts, out = self.run_job(
            r"""
import asyncio, aiohttp
async def main():
    async with aiohttp.ClientSession() as s:
        async with s.get(URL + "k") as r:
            got = len(await r.read())
        async with s.get("http://localhost:%d/b/model" % PORT) as r:   # another host: not the data
            await r.read()
        async with s.get("http://127.0.0.1:%d/missing" % PORT) as r:
            await r.read()
        async with s.head(URL + "k") as r:
            pass
    print(got)
asyncio.run(main())
""",
            "cold",
        )
        self.assertEqual(out.strip(), str(len(BODY)))
        self.assertEqual((counts["requests"], counts["bytes"]), (3, len(BODY)))
        self.assertEqual(counts["statuses"], {"200": 2, "404": 1})
        self.assertEqual(counts["inFlight"], 0, "every response ended: read, released or empty")

    def test_a_cached_block_is_answered_from_the_copy_with_no_request_to_the_origin(self):
        index = self.copy_of(["b/k1", "b/k 2"])
        counts, out = self.run_job(
            r"""
import asyncio, aiohttp, fsspec
fs = fsspec.filesystem("http")
whole = fs.cat_file(URL + "k1")
print(len(whole), whole[:3] == bytes([0, 1, 2]), fs.size(URL + "k%202"))
print(list(fs.cat_file(URL + "k%202", start=10, end=20)))
async def main():
    async with aiohttp.ClientSession() as s:
        async with s.get(URL + "k1", headers={"Range": "bytes=-5"}) as r:
            print(r.status, r.headers["Content-Range"], len(await r.read()))
        async with s.get(URL + "k1", headers={"Range": "bytes=999999-"}) as r:
            print(r.status, r.headers["Content-Range"], len(await r.read()))
        async with s.get(URL + "k1") as r:
            print(r.status, len(await r.content.read(1000)))   # released after 1000 bytes
    async with aiohttp.ClientSession(raise_for_status=True) as s:
        try:
            await s.get(URL + "k1", headers={"Range": "bytes=999999-"})
        except aiohttp.ClientResponseError as error:
            print("raised", error.status)
asyncio.run(main())
""",
            "cached",
            index=index,
        )
        lines = out.splitlines()
        self.assertEqual(lines[0], "102400 True 102400")
        self.assertEqual(lines[1], str(list(range(10, 20))))
        self.assertEqual(
            lines[2:], ["206 bytes 102395-102399/102400 5", "416 bytes */102400 0", "200 1000", "raised 416"]
        )
        self.assertEqual(_Handler.seen, [], "the origin saw no request")
        self.assertEqual((counts["requests"], counts["bytes"]), (0, 0))
        self.assertEqual(counts["localRequests"], 7)
        # The response released after 1000 bytes had one chunk of the copy (64 KiB) handed to its stream.
        self.assertEqual(counts["localBytes"], 102400 + 10 + 5 + 65536)

    def test_the_control_file_switches_a_session_between_copy_and_network(self):
        index = self.copy_of(["b/k"])
        counts, out = self.run_job(
            r"""
import asyncio, aiohttp
async def main():
    async with aiohttp.ClientSession() as s:
        async def get():
            async with s.get(URL + "k") as r:
                return len(await r.read())
        first = await get()
        with open(CONTROL, "w") as f:
            f.write("1 cold\n")
        print(first, await get())
asyncio.run(main())
""",
            "cached",
            index=index,
        )
        self.assertEqual(out.strip(), "102400 %d" % len(BODY))
        self.assertEqual(_Handler.seen, [("GET", "/b/k")], "only the cold request reached the origin")
        self.assertEqual(
            (counts["requests"], counts["bytes"], counts["localRequests"], counts["localBytes"]),
            (1, len(BODY), 1, 102400),
        )

    def test_forked_workers_count_their_own_fsspec_reads(self):
        counts, _ = self.run_job(
            r"""
import multiprocessing, fsspec
def fetch(k):
    return len(fsspec.filesystem("http", skip_instance_cache=True).cat_file(URL + "w" + str(k)))
if __name__ == "__main__":
    pool = multiprocessing.get_context("fork").Pool(2)
    assert sum(pool.map(fetch, range(6))) == 6 * %d
    pool.close()   # the workers leave in order, as a DataLoader's do: each writes its last counts as it goes
    pool.join()
"""
            % len(BODY),
            "cold",
        )
        self.assertEqual((counts["requests"], counts["bytes"]), (6, 6 * len(BODY)))

    def test_without_the_folder_aiohttp_is_not_patched(self):
        proc, _ = run_script("import aiohttp\nprint(aiohttp.ClientSession._request.__module__)\n", mode="cold")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.strip(), "aiohttp.client")

    def test_with_the_folder_aiohttp_is_patched_on_import(self):
        proc, _ = run_script(
            "import aiohttp\nprint(aiohttp.ClientSession._request.__module__)\n",
            mode="cold",
            extra_env={"DSA_NET_DIR": os.path.join(self.dir, "net")},
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.strip(), "ds_analyzer._aiohttp")

    @unittest.skipUnless(shutil.which("openssl"), "needs openssl for a self-signed certificate")
    def test_https_with_its_own_ca_is_counted_and_answered_above_tls(self):
        tls = _self_signed()
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(os.path.join(tls, "cert.pem"), os.path.join(tls, "key.pem"))
        server.socket = context.wrap_socket(server.socket, server_side=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = server.server_address[1]
        try:
            index = self.copy_of(["b/k"], port=port)
            counts, out = self.run_job(
                r"""
import fsspec
fs = fsspec.filesystem("https")
print([len(fs.cat_file(URL + "k")) for _ in range(3)])
with open(CONTROL, "w") as f:
    f.write("1 cold\n")
print(len(fs.cat_file(URL + "k")))
""",
                "cached",
                index=index,
                port=port,
                scheme="https",
                extra={"SSL_CERT_FILE": os.path.join(tls, "cert.pem")},
            )
        finally:
            server.shutdown()
            server.server_close()
        self.assertEqual(out.splitlines(), ["[102400, 102400, 102400]", str(len(BODY))])
        self.assertEqual(_Handler.seen, [("GET", "/b/k")], "only the cold request reached the origin")
        self.assertEqual(
            (counts["requests"], counts["bytes"], counts["localRequests"], counts["localBytes"]),
            (1, len(BODY), 3, 3 * 102400),
        )


if __name__ == "__main__":
    unittest.main()
