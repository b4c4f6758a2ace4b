#!/usr/bin/env python3
"""The page cache's hit ratio under memory limits, as this machine's kernel gives it (issue 31's data).

Reads every file of a dataset once an epoch, in a fresh shuffled order each epoch (a DataLoader's
shuffle), from inside a cgroup v2 memory limit of FRACTIONS of the dataset's bytes, and prints one JSON
line per epoch: the limit, the page cache the cgroup actually held (memory.stat file), the bytes read from
the disk (/proc/self/io read_bytes) against the bytes asked for, and the kernel's refault counters. The hit ratio is
1 - disk bytes / asked bytes. Needs root and cgroup v2 with the memory controller.

    sudo python3 bench/python/kernel_hit_ratio.py DIR --fractions 0.25,0.5,0.75 --epochs 4
"""

import argparse
import json
import os
import random
import sys

CGROUP_ROOT = "/sys/fs/cgroup"


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
    p.add_argument("--slack-mb", type=int, default=48, help="memory beyond the cache fraction for the reader itself")
    args = p.parse_args()

    files = files_of(args.root)
    dataset = sum(size for _, size in files)
    lru_gen = "absent"
    if os.path.exists("/sys/kernel/mm/lru_gen/enabled"):
        with open("/sys/kernel/mm/lru_gen/enabled") as f:
            lru_gen = f.read().strip()
    print(json.dumps({"files": len(files), "datasetBytes": dataset, "kernel": os.uname().release, "lruGen": lru_gen}), flush=True)

    if not os.path.exists(os.path.join(CGROUP_ROOT, "cgroup.controllers")):
        print("kernel_hit_ratio: needs cgroup v2 mounted at %s (this machine has v1 or none)" % CGROUP_ROOT, file=sys.stderr)
        return 2
    with open(os.path.join(CGROUP_ROOT, "cgroup.subtree_control"), "w") as f:
        f.write("+memory")
    buffer = bytearray(1 << 20)
    rng = random.Random(args.seed)
    for fraction in (float(x) for x in args.fractions.split(",")):
        group = os.path.join(CGROUP_ROOT, "dsa-hit-ratio-%d" % os.getpid())
        os.mkdir(group)
        try:
            limit = int(fraction * dataset) + args.slack_mb * 2**20
            with open(os.path.join(group, "memory.max"), "w") as f:
                f.write(str(limit))
            os.sync()
            with open("/proc/sys/vm/drop_caches", "w") as f:
                f.write("3")
            with open(os.path.join(group, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
            for epoch in range(args.epochs):
                order = files[:]
                rng.shuffle(order)
                before_disk = disk_read_bytes()
                before = read_kv(os.path.join(group, "memory.stat"))
                for path, _ in order:
                    read_whole(path, buffer)
                after = read_kv(os.path.join(group, "memory.stat"))
                disk = disk_read_bytes() - before_disk
                print(json.dumps({
                    "fraction": fraction, "limitBytes": limit, "epoch": epoch,
                    "cacheHeldBytes": after.get("file", 0), "anonBytes": after.get("anon", 0),
                    "askedBytes": dataset, "diskBytes": disk, "hitRatio": round(1 - disk / dataset, 4),
                    "refaultFile": after.get("workingset_refault_file", 0) - before.get("workingset_refault_file", 0),
                    "activateFile": after.get("workingset_activate_file", 0) - before.get("workingset_activate_file", 0),
                    "activeFile": after.get("active_file", 0), "inactiveFile": after.get("inactive_file", 0),
                }), flush=True)
        finally:
            with open(os.path.join(CGROUP_ROOT, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
            os.rmdir(group)
    return 0


if __name__ == "__main__":
    sys.exit(main())
