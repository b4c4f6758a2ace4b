"""Trains a small CNN on samples stored as objects in an S3-compatible store.

A map-style dataset that GETs one object per sample with boto3, as many
training scripts over object storage do. Each object holds raw uint8 pixels
(3 x SIZE x SIZE) followed by padding; the label is the object's index mod 10.

    python s3_map_train.py --endpoint http://127.0.0.1:9000 --bucket data --prefix train/ \
        --batch-size 8 --workers 2 --epochs 5 [--threads 4]
"""

import argparse
from concurrent.futures import ThreadPoolExecutor

import boto3
import botocore.config
import torch
from small_cnn import to_image, train
from torch.utils.data import BatchSampler, DataLoader, Dataset, RandomSampler


class S3Objects(Dataset):
    def __init__(self, endpoint, bucket, prefix, size, threads=1):
        self.endpoint, self.bucket, self.size, self.threads = endpoint, bucket, size, threads
        self._pool = None
        client = boto3.client("s3", endpoint_url=endpoint)
        self.keys = []
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            self.keys += [item["Key"] for item in page.get("Contents", [])]
        self._client = None  # one client per loader worker, made on first use

    def __len__(self):
        return len(self.keys)

    def __getitem__(self, index):
        if isinstance(index, list):  # a whole batch, fetched by a pool of threads (--threads)
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.threads)
            samples = list(self._pool.map(self.__getitem__, index))
            return torch.stack([image for image, _ in samples]), torch.tensor([label for _, label in samples])
        if self._client is None:
            self._client = boto3.client(
                "s3",
                endpoint_url=self.endpoint,
                config=botocore.config.Config(max_pool_connections=max(10, self.threads)),
            )
        body = self._client.get_object(Bucket=self.bucket, Key=self.keys[index])["Body"].read()
        return to_image(body, self.size), index % 10


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--bucket", required=True)
    parser.add_argument("--prefix", default="")
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--width", type=int, default=32, help="channels of the model: its step's cost")
    parser.add_argument("--threads", type=int, default=1, help="requests each loader worker keeps in flight")
    args = parser.parse_args()
    data = S3Objects(args.endpoint, args.bucket, args.prefix, args.size, args.threads)
    if args.threads > 1:
        batches = BatchSampler(RandomSampler(data), args.batch_size, drop_last=True)
        loader = DataLoader(data, batch_size=None, sampler=batches, num_workers=args.workers)
    else:
        loader = DataLoader(data, batch_size=args.batch_size, shuffle=True, num_workers=args.workers, drop_last=True)
    train(loader, args.epochs, args.width)


if __name__ == "__main__":
    main()
