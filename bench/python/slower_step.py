"""Runs a training script with every iteration made longer by a known share: an injected slowdown for the CI-gate
benches. Each optimizer step first busy-waits PERCENT of the median of the last 20 iterations (each timed from the end
of one wait to the start of the next, so without the waits): the iteration lasts (1 + PERCENT/100) times as long at
whatever pace the machine runs. Usage: python3 slower_step.py PERCENT SCRIPT [ARGS...]."""

import collections
import runpy
import statistics
import sys
import time

import torch


def main() -> None:
    share = float(sys.argv[1]) / 100
    step = torch.optim.SGD.step
    recent = collections.deque(maxlen=20)
    last = [None]

    def slower_step(self, *args, **kwargs):
        now = time.perf_counter()
        if last[0] is not None:
            recent.append(now - last[0])
        # The median: an iteration that spans a stop of the process (gate --against's slices) does not count.
        until = now + share * statistics.median(recent) if recent else now
        # Busy, not asleep: the training process holds the CPU as a longer step would.
        while time.perf_counter() < until:
            pass
        last[0] = time.perf_counter()
        return step(self, *args, **kwargs)

    torch.optim.SGD.step = slower_step
    sys.argv = sys.argv[2:]
    runpy.run_path(sys.argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
