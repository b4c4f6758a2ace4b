"""Runs a training script with every optimizer step made longer by a fixed busy wait: an injected slowdown of a known
size, for the CI-gate benches. Usage: python3 slower_step.py MS SCRIPT [ARGS...]."""

import runpy
import sys
import time

import torch


def main() -> None:
    extra_sec = float(sys.argv[1]) / 1000
    step = torch.optim.SGD.step

    def slower_step(self, *args, **kwargs):
        # Busy, not asleep: the training process holds the CPU as a longer step would.
        until = time.perf_counter() + extra_sec
        while time.perf_counter() < until:
            pass
        return step(self, *args, **kwargs)

    torch.optim.SGD.step = slower_step
    sys.argv = sys.argv[2:]
    runpy.run_path(sys.argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
