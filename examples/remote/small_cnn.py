"""What the remote examples share: raw pixels to a normalised image, and a small CNN trained on a loader.

Each epoch prints its mean time per iteration and the mean time the loop waited
for data, the script's own meter to hold ds-analyzer's split against.
"""

import time

import torch
import torch.nn as nn


def to_image(data, size):
    """The first 3 x SIZE x SIZE bytes of a sample as a normalised float image."""
    pixels = torch.frombuffer(bytearray(data[: 3 * size * size]), dtype=torch.uint8)
    image = pixels.reshape(3, size, size).float().div(255)
    return (image - image.mean()) / (image.std() + 1e-6)


def train(loader, epochs, width):
    """Trains a two-layer CNN of `width` channels (its step's cost) on the loader's (images, labels)."""
    torch.set_num_threads(1)
    model = nn.Sequential(
        nn.Conv2d(3, width, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(width, width, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(width, 10),
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(epochs):
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
        print(
            f"epoch {epoch}: {batches} batches, {1000 * elapsed / max(1, batches):.1f} ms/iter, "
            f"mean data time per iteration: {1000 * data_time / max(1, batches):.1f} ms",
            flush=True,
        )
