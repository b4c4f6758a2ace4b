"""Trains a small CNN on WebDataset-format tar shards read over HTTP.

An IterableDataset that streams each shard with urllib and groups the tar's
members by key (KEY.bin, KEY.cls), as WebDataset does; the loader workers
split the shards between them. With --cache-dir (or WDS_CACHE, as WebDataset
reads it) a shard is downloaded whole into the folder once, to a temporary
name renamed when complete, and read from there in later epochs: WebDataset's
cache_dir. With --client fsspec the shards are streamed through fsspec's HTTP
filesystem (aiohttp), as a job reading through fsspec, s3fs or gcsfs does.

    python wds_train.py 'http://127.0.0.1:8000/shard-{0000..0007}.tar' --workers 2 --epochs 5
"""

import argparse
import os
import re
import shutil
import tarfile
import urllib.request

from small_cnn import to_image, train
from torch.utils.data import DataLoader, IterableDataset, get_worker_info


def expand(pattern):
    match = re.search(r"\{(\d+)\.\.(\d+)\}", pattern)
    if not match:
        return [pattern]
    first, last = match.group(1), match.group(2)
    return [
        pattern[: match.start()] + str(k).zfill(len(first)) + pattern[match.end() :]
        for k in range(int(first), int(last) + 1)
    ]


def cached_open(url, cache_dir):
    """The shard from the cache folder, downloaded there first when missing."""
    path = os.path.join(cache_dir, re.sub(r"[^A-Za-z0-9._-]", "_", url.split("://", 1)[-1]))
    if not os.path.exists(path):
        partial = "%s.%d.tmp" % (path, os.getpid())
        with urllib.request.urlopen(url) as response, open(partial, "wb") as out:
            shutil.copyfileobj(response, out)
        os.replace(partial, path)
    return open(path, "rb")


class TarShards(IterableDataset):
    def __init__(self, urls, size, cache_dir=None, client="urllib"):
        self.urls, self.size, self.cache_dir, self.client = urls, size, cache_dir, client

    def open(self, url):
        if self.cache_dir:
            return cached_open(url, self.cache_dir)
        if self.client == "fsspec":
            import fsspec

            return fsspec.open(url, "rb", block_size=0).open()  # streamed: one GET a shard
        return urllib.request.urlopen(url)

    def samples(self, url):
        with self.open(url) as response, tarfile.open(fileobj=response, mode="r|") as tar:
            current, parts = None, {}
            for member in tar:
                key, _, ext = member.name.partition(".")
                if current is not None and key != current:
                    yield parts
                    parts = {}
                current = key
                parts[ext] = tar.extractfile(member).read()
            if parts:
                yield parts

    def __iter__(self):
        info = get_worker_info()
        urls = self.urls if info is None else self.urls[info.id :: info.num_workers]
        for url in urls:
            for parts in self.samples(url):
                yield to_image(parts["bin"], self.size), int(parts["cls"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("shards")
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--width", type=int, default=32)
    parser.add_argument(
        "--cache-dir", default=os.environ.get("WDS_CACHE"), help="keep downloaded shards here (default: WDS_CACHE)"
    )
    parser.add_argument("--client", choices=("urllib", "fsspec"), default="urllib", help="the HTTP client")
    args = parser.parse_args()
    if args.cache_dir:
        os.makedirs(args.cache_dir, exist_ok=True)
    loader = DataLoader(
        TarShards(expand(args.shards), args.size, args.cache_dir, args.client),
        batch_size=args.batch_size,
        num_workers=args.workers,
    )
    train(loader, args.epochs, args.width)


if __name__ == "__main__":
    main()
