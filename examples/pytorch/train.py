#!/usr/bin/env python3
"""Train a torchvision model on an ImageFolder dataset (DIR/train, DIR/val).

The argument style of PyTorch's ImageNet example (pytorch/examples imagenet/
main.py): -a ARCH, -b BATCH, -j WORKERS, --epochs, DIR. It has no ds-analyzer
import: `ds-analyzer profile --data DIR/train -- python3 train.py ... DIR`
profiles it as it is. Added options: --image-size (ImageNet's 224 is slow on a
CPU), --max-steps, --seed, --warmup-iters.

Like the ImageNet example it measures, per iteration, the time spent waiting
for data ("Data") and the whole iteration ("Time"). On the way out, however the
run ends (last epoch, Ctrl-C, a profiler's iteration budget), it prints the
mean data wait per iteration after the first --warmup-iters iterations.
"""

import argparse
import random
import sys
import time

import torch
import torch.nn as nn
import torch.utils.data
import torchvision.datasets as datasets
import torchvision.models as models
import torchvision.transforms as transforms

model_names = sorted(
    name for name in models.__dict__ if name.islower() and not name.startswith("__") and callable(models.__dict__[name])
)

parser = argparse.ArgumentParser(description="PyTorch ImageFolder Training")
parser.add_argument("data", metavar="DIR", help="path to dataset (with train/ and val/)")
parser.add_argument(
    "-a",
    "--arch",
    metavar="ARCH",
    default="resnet18",
    choices=model_names,
    help="model architecture: " + " | ".join(model_names) + " (default: resnet18)",
)
parser.add_argument(
    "-j", "--workers", default=4, type=int, metavar="N", help="number of data loading workers (default: 4)"
)
parser.add_argument("--epochs", default=90, type=int, metavar="N", help="number of total epochs to run")
parser.add_argument("-b", "--batch-size", default=256, type=int, metavar="N", help="mini-batch size (default: 256)")
parser.add_argument(
    "--lr", "--learning-rate", default=0.1, type=float, metavar="LR", help="initial learning rate", dest="lr"
)
parser.add_argument("--momentum", default=0.9, type=float, metavar="M", help="momentum")
parser.add_argument(
    "--wd", "--weight-decay", default=1e-4, type=float, metavar="W", help="weight decay", dest="weight_decay"
)
parser.add_argument("-p", "--print-freq", default=10, type=int, metavar="N", help="print frequency (default: 10)")
parser.add_argument("--image-size", default=224, type=int, metavar="PX", help="training crop size (default: 224)")
parser.add_argument(
    "--max-steps", default=0, type=int, metavar="N", help="stop after N training iterations (0: no limit)"
)
parser.add_argument("--no-val", action="store_true", help="skip the validation pass after each epoch")
parser.add_argument("--seed", default=None, type=int, help="seed for initializing training")
parser.add_argument(
    "--warmup-iters",
    default=10,
    type=int,
    metavar="N",
    help="iterations left out of the final mean data time (default: 10)",
)


class AverageMeter:
    """Computes and stores the average and current value"""

    def __init__(self, name, fmt=":f"):
        self.name, self.fmt = name, fmt
        self.reset()

    def reset(self):
        self.val = self.avg = self.sum = 0.0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count

    def __str__(self):
        return ("{name} {val" + self.fmt + "} ({avg" + self.fmt + "})").format(**self.__dict__)


class RunTotals:
    """Data wait over the whole run, after the warm-up iterations."""

    def __init__(self, warmup):
        self.warmup = warmup
        self.seen = 0
        self.data = AverageMeter("Data")
        self.batch = AverageMeter("Time")

    def update(self, data_s, batch_s):
        self.seen += 1
        if self.seen > self.warmup:
            self.data.update(data_s)
            self.batch.update(batch_s)

    def report(self):
        print(
            "=> mean data time per iteration: %.3f ms; mean iteration time: %.3f ms "
            "(%d iterations after the first %d)"
            % (self.data.avg * 1000, self.batch.avg * 1000, self.data.count, min(self.seen, self.warmup)),
            flush=True,
        )


def main():
    args = parser.parse_args()
    if args.seed is not None:
        random.seed(args.seed)
        torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train_dataset = datasets.ImageFolder(
        args.data.rstrip("/") + "/train",
        transforms.Compose(
            [
                transforms.RandomResizedCrop(args.image_size),
                transforms.RandomHorizontalFlip(),
                transforms.ToTensor(),
                normalize,
            ]
        ),
    )
    val_dataset = datasets.ImageFolder(
        args.data.rstrip("/") + "/val",
        transforms.Compose(
            [
                transforms.Resize(int(args.image_size * 256 / 224)),
                transforms.CenterCrop(args.image_size),
                transforms.ToTensor(),
                normalize,
            ]
        ),
    )
    train_loader = torch.utils.data.DataLoader(
        train_dataset,
        batch_size=args.batch_size,
        shuffle=True,
        num_workers=args.workers,
        pin_memory=device.type == "cuda",
    )
    val_loader = torch.utils.data.DataLoader(
        val_dataset,
        batch_size=args.batch_size,
        shuffle=False,
        num_workers=args.workers,
        pin_memory=device.type == "cuda",
    )

    print(f"=> creating model '{args.arch}'", flush=True)
    model = models.__dict__[args.arch](num_classes=len(train_dataset.classes)).to(device)
    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=args.momentum, weight_decay=args.weight_decay)

    totals = RunTotals(args.warmup_iters)
    try:
        for epoch in range(args.epochs):
            if not train(train_loader, model, criterion, optimizer, epoch, device, args, totals):
                break
            if not args.no_val:
                validate(val_loader, model, criterion, device, args)
    finally:
        # Printed however the run ends: normally, on Ctrl-C, or when a profiler
        # ends it after its iteration budget (SystemExit).
        totals.report()


def train(train_loader, model, criterion, optimizer, epoch, device, args, totals):
    batch_time = AverageMeter("Time", ":6.3f")
    data_time = AverageMeter("Data", ":6.3f")
    losses = AverageMeter("Loss", ":.4e")
    model.train()

    end = time.time()
    for i, (images, target) in enumerate(train_loader):
        data_s = time.time() - end
        data_time.update(data_s)
        images = images.to(device, non_blocking=True)
        target = target.to(device, non_blocking=True)

        output = model(images)
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.update(loss.item(), images.size(0))

        batch_s = time.time() - end
        batch_time.update(batch_s)
        totals.update(data_s, batch_s)
        if i % args.print_freq == 0:
            print(
                f"Epoch: [{epoch}][{i}/{len(train_loader)}]\t{batch_time}\t{data_time}\t{losses}",
                flush=True,
            )
        if args.max_steps and totals.seen >= args.max_steps:
            return False
        end = time.time()
    return True


def validate(val_loader, model, criterion, device, args):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for images, target in val_loader:
            images, target = images.to(device), target.to(device)
            output = model(images)
            correct += (output.argmax(1) == target).sum().item()
            total += target.size(0)
    print(f" * Acc@1 {100.0 * correct / max(1, total):.3f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
