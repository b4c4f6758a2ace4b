#!/bin/bash
# Issue 31's GPU-server check: the page cache's hit ratio under a cgroup v2 memory limit on that machine's
# kernel, for the what-if's simulated kernel to be compared with (on a machine with node:
# scripts there read the sizes and the points from $OUT). Python only: no node on the device.
#   bash bench/gpu/kernel-cache-point.sh        (as root; writes to $OUT)
set -eu
OUT=${OUT:-/tmp/kernel-cache-point}
DATA=/var/tmp/dsa-kernel-cache
mkdir -p "$OUT"
uname -r > "$OUT/kernel.txt"
cat /sys/kernel/mm/lru_gen/enabled >> "$OUT/kernel.txt" 2>/dev/null || echo "lru_gen absent" >> "$OUT/kernel.txt"
rm -rf "$DATA"
python3 - "$DATA" "$OUT/sizes.txt" <<'PY'
import math, os, random, sys
root, sizes_out = sys.argv[1], sys.argv[2]
rng = random.Random(41)
blob = os.urandom(1 << 20)
total, i, sizes = 0, 0, []
while total < 400 * 2**20:
    size = int(math.exp(rng.gauss(math.log(100_000), 0.5)))
    d = os.path.join(root, "c%02d" % (i % 20)); os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%06d.jpg" % i), "wb") as f:
        left = size
        while left > 0:
            n = min(left, len(blob)); f.write(blob[:n]); left -= n
    sizes.append(size); total += size; i += 1
open(sizes_out, "w").write("\n".join(map(str, sizes)) + "\n")
PY
sync
python3 bench/python/kernel_hit_ratio.py "$DATA" --fractions 0.25,0.5,0.75 --epochs 10 --seed 5 > "$OUT/points.jsonl"
rm -rf "$DATA"
