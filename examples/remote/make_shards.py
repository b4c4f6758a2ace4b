"""Writes WebDataset-format tar shards: each sample is KEY.bin (random bytes) and KEY.cls (its label).

python make_shards.py OUT_DIR --shards 8 --per-shard 32 --sample-bytes 262144
"""

import argparse
import io
import os
import tarfile


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--per-shard", type=int, default=32)
    parser.add_argument("--sample-bytes", type=int, default=262144)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for shard in range(args.shards):
        with tarfile.open(os.path.join(args.out, f"shard-{shard:04d}.tar"), "w") as tar:
            for k in range(args.per_shard):
                key = f"{shard:04d}{k:05d}"
                for name, payload in (
                    (f"{key}.bin", os.urandom(args.sample_bytes)),
                    (f"{key}.cls", str(k % 10).encode()),
                ):
                    info = tarfile.TarInfo(name)
                    info.size = len(payload)
                    tar.addfile(info, io.BytesIO(payload))


if __name__ == "__main__":
    main()
