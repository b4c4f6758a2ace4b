#!/usr/bin/env bash
# Issue 30's GPU check, for a lent GPU machine (python3 with CUDA torch, root, no node, no network):
# a CUDA job (examples/pytorch/train.py, resnet18 on a JPEG ImageFolder, 8 workers) run alone, cached
# and cold (its own meter: the truth), then profiled with the defaults in one launch and with
# --separate-launches, side by side in one sitting. Everything it prints and writes lands in $OUT.
#
# Here:   bash ../shared/device/pack.sh           (node, the built CLI and its dependencies in .device/)
# There:  device run, carry [".device"], command: bash bench/gpu/one-launch-cuda.sh
# Sizes:  PER images a class, 16 classes (default 500: 8,000 JPEGs, about 0.9 GB, 62 iterations an epoch);
#         BATCH (128), WORKERS (8), IMAGE (224) for a smoke run on a CPU.
set -u
OUT=${OUT:-/tmp/one-launch-cuda}
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
TIMEFORMAT="wall %R s"   # bash's time: /usr/bin/time is not on every server
say() { echo "[$(date +%T)] $*"; }

mkdir -p /opt/dsa && tar xJf .device/bundle.tar.xz -C /opt/dsa || { say "no bundle: run ../shared/device/pack.sh first"; exit 2; }
export PATH=/opt/dsa/node/bin:$PATH PYTHONUNBUFFERED=1
dsa() { node /opt/dsa/app/bin/ds-analyzer.js "$@"; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || say 'no nvidia-smi'
say "cpus $(nproc), node $(node --version), $(python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())')"

root=/var/tmp/dsa-gpu
per=${PER:-500}
rm -rf "$root" && mkdir -p "$root/ds/train" "$root/ds/val"
say "making 16 x $per JPEGs"
makers=()
for i in $(seq 0 15); do
  python3 examples/pytorch/make_dataset.py "$root/p$i" --classes 1 --train-per-class "$per" --val-per-class 2 --seed "$i" >/dev/null &
  makers+=($!)
done
wait "${makers[@]}"   # not a bare wait: that would wait for the tee above too
for i in $(seq 0 15); do
  c=$(printf 'class%03d' "$i")
  mv "$root/p$i/train/class000" "$root/ds/train/$c" && mv "$root/p$i/val/class000" "$root/ds/val/$c"
done
say "dataset: $(find "$root/ds" -name '*.jpg' | wc -l) files, $(du -sh "$root/ds" | cut -f1)"

batch=${BATCH:-128}
job=(python3 examples/pytorch/train.py -a resnet18 -b "$batch" -j "${WORKERS:-8}" --image-size "${IMAGE:-224}" --no-val --epochs 1000 --print-freq 1000 "$root/ds")
steps=$((16 * per / batch - 5))   # inside the first epoch, so the cold run stays cold

say "truth, cached: the job alone, its dataset read once before"
find "$root/ds" -name '*.jpg' -exec cat {} + >/dev/null
time timeout 90 "${job[@]}" --max-steps "$steps" --warmup-iters 15 | grep -E '^=>|wall'
say "truth, cold: the job alone after drop_caches"
sync && echo 3 >/proc/sys/vm/drop_caches
time timeout 90 "${job[@]}" --max-steps "$steps" --warmup-iters 15 | grep -E '^=>|wall'

say "profile, one launch (the defaults)"
time timeout "${ONE_LAUNCH_S:-180}" node /opt/dsa/app/bin/ds-analyzer.js profile --data "$root/ds" \
  --out "$OUT/one-launch.json" -- "${job[@]}"
say "profile, --separate-launches"
time timeout "${SEPARATE_S:-240}" node /opt/dsa/app/bin/ds-analyzer.js profile --separate-launches \
  --data "$root/ds" --out "$OUT/separate-launches.json" -- "${job[@]}"

say "side by side"
dsa compare "$OUT/separate-launches.json" "$OUT/one-launch.json"
for f in one-launch separate-launches; do
  [ -f "$OUT/$f.json" ] && node -e '
    const p = require(process.argv[1]); const c = p.cost || {};
    const fb = m => p.modes[m] && p.modes[m].firstBatch ? p.modes[m].firstBatch.startupSec.toFixed(1) + " s" : "-";
    console.log(process.argv[2], "schedule", c.schedule, "launches", c.launches, "wall", (c.wallSec || 0).toFixed(1), "s",
      "measured", c.measuredIterations, "it", (c.measuredSec || 0).toFixed(1), "s", "share", (c.measuredShare || 0).toFixed(2),
      "start-up: synthetic", fb("synthetic"), "cached", fb("cached"), "cold", fb("cold"));
    for (const [m, v] of Object.entries(p.modes)) if (v.profilerCpuSec !== undefined)
      console.log("  ", m, "profiler", (100 * v.profilerCpuSec / v.wallSec).toFixed(2) + "% of a CPU over", v.wallSec.toFixed(1), "s");' "$OUT/$f.json" "$f"
done
say "the page cache's hit ratio under memory limits (issue 31)"
timeout 60 python3 bench/python/kernel_hit_ratio.py "$root/ds/train" --fractions 0.25,0.5,0.75 --epochs 3 | tee "$OUT/hit-ratio.jsonl"
say done
