"""The prep-bound loader of bench/profiler-cpu.bench.ts: an unmodified torchvision
ImageFolder script (no ds_analyzer import) whose two loader workers each spend
PREP_MS of their own CPU on every sample (the JPEG decode and a crop, then a
busy loop on the worker's thread clock), and whose step sleeps 5 ms: the
loader sets the pace, as on the prep-bound job of the profiler's CPU issue.

    prep_loader.py IMAGE_FOLDER [PREP_MS]
"""

import sys
import time

import torch  # noqa: F401  (the hook wraps torch's DataLoader)
import torchvision.transforms as transforms
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder

PREP_MS = float(sys.argv[2]) if len(sys.argv) > 2 else 20.0
TRANSFORM = transforms.Compose([transforms.RandomResizedCrop(64), transforms.ToTensor()])


def prepare(image):
    started = time.thread_time()
    tensor = TRANSFORM(image)
    while (time.thread_time() - started) * 1000 < PREP_MS:
        pass
    return tensor


def main():
    loader = DataLoader(ImageFolder(sys.argv[1], transform=prepare), batch_size=8, shuffle=True, num_workers=2)
    for _epoch in range(1000):
        for _batch in loader:
            time.sleep(0.005)


if __name__ == "__main__":
    main()
