#!/usr/bin/env python3
"""Writes a small ImageFolder dataset of real JPEG files: ROOT/{train,val}/<class>/<n>.jpg

Images (500x375 by default, about the mean ImageNet photo) are smooth colour fields with shapes and grain,
so they compress and decode like photographs of their size (a few KB to tens of KB), not like
noise (incompressible) or flat colour (free to decode). Deterministic per --seed.

    python3 examples/pytorch/make_dataset.py ./tiny-imagenet --classes 10 --train-per-class 150
"""

import argparse
import os
import random

import numpy as np
from PIL import Image, ImageDraw


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="Generate a small ImageFolder dataset of JPEG files")
    p.add_argument("root", help="output folder (train/ and val/ are created inside)")
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--train-per-class", type=int, default=150)
    p.add_argument("--val-per-class", type=int, default=20)
    p.add_argument(
        "--size", default="500x375", help="WIDTHxHEIGHT of every image (default 500x375, a typical ImageNet photo)"
    )
    p.add_argument("--quality", type=int, default=90, help="JPEG quality (default 90)")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


class Grain:
    """Film grain cut at random offsets from one bank: drawing fresh noise for
    every image would make generation several times slower."""

    def __init__(self, np_rng, width, height):
        self.bank = np_rng.normal(0, 12, (2 * height, 2 * width, 3)).astype(np.int16)
        self.width, self.height = width, height

    def cut(self, rng):
        y, x = rng.randrange(self.height), rng.randrange(self.width)
        return self.bank[y : y + self.height, x : x + self.width]


def make_image(rng, grain, width, height, label, classes):
    # A class-dependent hue, so a model can actually learn something.
    hue = label / max(1, classes)
    base = np.array([255 * hue, 255 * (1 - hue), 128 + 127 * np.sin(6.28 * hue)], dtype=np.float32)
    angle = rng.uniform(0, 6.28)
    ramp = (np.cos(angle) * np.arange(width, dtype=np.float32) / width)[None, :, None] + (
        np.sin(angle) * np.arange(height, dtype=np.float32) / height
    )[:, None, None]
    pixels = (base * (0.6 + 0.4 * ramp)).astype(np.int16) + grain.cut(rng)
    image = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8), "RGB")
    draw = ImageDraw.Draw(image)
    for _ in range(rng.randint(2, 5)):
        x0, y0 = rng.randrange(width), rng.randrange(height)
        x1, y1 = x0 + rng.randint(10, width // 2), y0 + rng.randint(10, height // 2)
        colour = tuple(rng.randrange(256) for _ in range(3))
        (draw.ellipse if rng.random() < 0.5 else draw.rectangle)([x0, y0, x1, y1], fill=colour)
    return image


def main(argv=None):
    args = parse_args(argv)
    width, height = (int(v) for v in args.size.lower().split("x"))
    rng = random.Random(args.seed)
    grain = Grain(np.random.default_rng(args.seed), width, height)
    total = 0
    for split, per_class in (("train", args.train_per_class), ("val", args.val_per_class)):
        for label in range(args.classes):
            folder = os.path.join(args.root, split, "class%03d" % label)
            os.makedirs(folder, exist_ok=True)
            for n in range(per_class):
                image = make_image(rng, grain, width, height, label, args.classes)
                image.save(os.path.join(folder, "%05d.jpg" % n), "JPEG", quality=args.quality)
                total += 1
    print("wrote %d JPEG files under %s" % (total, args.root))


if __name__ == "__main__":
    main()
