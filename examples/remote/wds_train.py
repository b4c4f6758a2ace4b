"""Trains a small CNN on WebDataset-format tar shards read over HTTP.

An IterableDataset that streams each shard with urllib and groups the tar's
members by key (KEY.bin, KEY.cls), as WebDataset does; the loader workers
split the shards between them.

    python wds_train.py 'http://127.0.0.1:8000/shard-{0000..0007}.tar' --workers 2 --epochs 5
"""
import argparse
import re
import tarfile
import time
import urllib.request

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, IterableDataset, get_worker_info


def expand(pattern):
    match = re.search(r"\{(\d+)\.\.(\d+)\}", pattern)
    if not match:
        return [pattern]
    first, last = match.group(1), match.group(2)
    return [pattern[: match.start()] + str(k).zfill(len(first)) + pattern[match.end():] for k in range(int(first), int(last) + 1)]


class TarShards(IterableDataset):
    def __init__(self, urls, size):
        self.urls, self.size = urls, size

    def samples(self, url):
        with urllib.request.urlopen(url) as response, tarfile.open(fileobj=response, mode="r|") as tar:
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
        n = 3 * self.size * self.size
        for url in urls:
            for parts in self.samples(url):
                pixels = torch.frombuffer(bytearray(parts["bin"][:n]), dtype=torch.uint8)
                image = pixels.reshape(3, self.size, self.size).float().div(255)
                yield (image - image.mean()) / (image.std() + 1e-6), int(parts["cls"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("shards")
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--width", type=int, default=32)
    args = parser.parse_args()
    torch.set_num_threads(1)
    loader = DataLoader(TarShards(expand(args.shards), args.size), batch_size=args.batch_size, num_workers=args.workers)
    w = args.width
    model = nn.Sequential(
        nn.Conv2d(3, w, 3, padding=1), nn.ReLU(), nn.Conv2d(w, w, 3, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(w, 10),
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(args.epochs):
        started, batches, data_time, mark = time.perf_counter(), 0, 0.0, time.perf_counter()
        for images, labels in loader:
            data_time += time.perf_counter() - mark
            loss = nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            batches += 1
            mark = time.perf_counter()
        elapsed = time.perf_counter() - started
        print(f"epoch {epoch}: {batches} batches, {1000 * elapsed / max(1, batches):.1f} ms/iter, "
              f"mean data time per iteration: {1000 * data_time / max(1, batches):.1f} ms", flush=True)


if __name__ == "__main__":
    main()
