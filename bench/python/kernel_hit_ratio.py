#!/usr/bin/env python3
"""The page cache's hit ratio under memory limits, as this machine's kernel gives it (issue 31's data).

Reads every file of a dataset once an epoch, in a fresh shuffled order each epoch (a DataLoader's
shuffle), from inside a cgroup v2 memory limit of FRACTIONS of the dataset's bytes, and prints one JSON
line per epoch: the limit, the page cache the cgroup actually held (memory.stat file), the bytes read from
the disk (/proc/self/io read_bytes) against the bytes asked for, and the kernel's refault counters. The hit ratio is
1 - disk bytes / asked bytes, for the epoch and for each eighth of it. Needs root and a memory cgroup (v2, or
v1's memory controller).

    sudo python3 bench/python/kernel_hit_ratio.py DIR --fractions 0.25,0.5,0.75 --epochs 4
"""

import argparse
import json
import os
import random
import sys
import time

CGROUP_ROOT = "/sys/fs/cgroup"
PARTS = 8


class Cgroup:
    """A memory cgroup, v2 or v1: only the file names differ."""

    def __init__(self, name):
        if os.path.exists(os.path.join(CGROUP_ROOT, "cgroup.controllers")):
            self.root = CGROUP_ROOT
            with open(os.path.join(self.root, "cgroup.subtree_control"), "w") as f:
                f.write("+memory")
            self.limit_file, self.file_key = "memory.max", "file"
        elif os.path.exists(os.path.join(CGROUP_ROOT, "memory", "memory.limit_in_bytes")):
            self.root = os.path.join(CGROUP_ROOT, "memory")
            self.limit_file, self.file_key = "memory.limit_in_bytes", "cache"
        else:
            raise SystemExit(
                f"kernel_hit_ratio: needs a memory cgroup (v2 at {CGROUP_ROOT}, or v1 at {CGROUP_ROOT}/memory)"
            )
        self.path = os.path.join(self.root, name)
        os.mkdir(self.path)

    def limit(self, value):
        with open(os.path.join(self.path, self.limit_file), "w") as f:
            f.write(str(value))

    def enter(self):
        with open(os.path.join(self.path, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))

    def leave(self):
        with open(os.path.join(self.root, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
        os.rmdir(self.path)

    def stat(self):
        values = read_kv(os.path.join(self.path, "memory.stat"))
        values["file"] = values.get(self.file_key, 0)
        values["anon"] = values.get("anon", values.get("rss", 0))
        return values


def files_of(root):
    out = []
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            out.append((path, os.path.getsize(path)))
    out.sort()
    return out


def read_kv(path):
    values = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2:
                values[parts[0]] = int(parts[1])
    return values


def disk_read_bytes():
    """Bytes this process caused to be fetched from storage (/proc/self/io read_bytes), readahead included."""
    return read_kv_colon("/proc/self/io")["read_bytes"]


def read_kv_colon(path):
    with open(path) as f:
        return {key.strip(): int(value) for key, _, value in (line.partition(":") for line in f) if value.strip()}


def read_whole(path, buffer):
    with open(path, "rb", buffering=0) as f:
        while f.readinto(buffer):
            pass


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("root")
    p.add_argument("--fractions", default="0.25,0.5,0.75")
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--slack-mb",
        type=int,
        default=2,
        help="memory beyond the cache fraction (cgroup v2 charges the reader's own memory too)",
    )
    p.add_argument(
        "--rate-mb",
        type=float,
        default=0,
        help="read at most this many MB/s, as a training job does (0: as fast as the disk)",
    )
    args = p.parse_args()

    files = files_of(args.root)
    dataset = sum(size for _, size in files)
    # The disk reads whole pages: a hit ratio of bytes asked for would count each file's last partial page as a miss.
    page = os.sysconf("SC_PAGE_SIZE")
    paged = sum(-(-size // page) * page for _, size in files)
    lru_gen = "absent"
    if os.path.exists("/sys/kernel/mm/lru_gen/enabled"):
        with open("/sys/kernel/mm/lru_gen/enabled") as f:
            lru_gen = f.read().strip()
    print(
        json.dumps({"files": len(files), "datasetBytes": dataset, "kernel": os.uname().release, "lruGen": lru_gen}),
        flush=True,
    )

    buffer = bytearray(1 << 20)
    rng = random.Random(args.seed)
    for fraction in (float(x) for x in args.fractions.split(",")):
        group = Cgroup("dsa-hit-ratio-%d" % os.getpid())
        try:
            limit = int(fraction * dataset) + args.slack_mb * 2**20
            group.limit(limit)
            os.sync()
            with open("/proc/sys/vm/drop_caches", "w") as f:
                f.write("3")
            group.enter()
            for epoch in range(args.epochs):
                order = files[:]
                rng.shuffle(order)
                before = group.stat()
                asked, disk = [0] * PARTS, [0] * PARTS
                started = time.monotonic()
                read_so_far = 0
                for part in range(PARTS):
                    disk_before = disk_read_bytes()
                    for path, size in order[part * len(order) // PARTS : (part + 1) * len(order) // PARTS]:
                        read_whole(path, buffer)
                        asked[part] += -(-size // page) * page
                        read_so_far += size
                        if args.rate_mb > 0:
                            # A job's pace: the kernel's reclaim reads its statistics with a lag of up to 2 s (memcg
                            # stats), so a reader far faster than a job sees another policy.
                            ahead = read_so_far / (args.rate_mb * 1e6) - (time.monotonic() - started)
                            if ahead > 0:
                                time.sleep(ahead)
                    disk[part] = disk_read_bytes() - disk_before
                after = group.stat()
                print(
                    json.dumps(
                        {
                            "fraction": fraction,
                            "limitBytes": limit,
                            "epoch": epoch,
                            "cacheHeldBytes": after["file"],
                            "anonBytes": after["anon"],
                            "askedBytes": paged,
                            "diskBytes": sum(disk),
                            "hitRatio": round(1 - sum(disk) / paged, 4),
                            "hitByPart": [round(1 - d / a, 4) if a else None for d, a in zip(disk, asked)],
                            "refaultFile": after.get("workingset_refault_file", 0)
                            - before.get("workingset_refault_file", 0),
                            "activateFile": after.get("workingset_activate_file", 0)
                            - before.get("workingset_activate_file", 0),
                            "activeFile": after.get("active_file", 0),
                            "inactiveFile": after.get("inactive_file", 0),
                        }
                    ),
                    flush=True,
                )
        finally:
            group.leave()
    return 0


if __name__ == "__main__":
    sys.exit(main())
