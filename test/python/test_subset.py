"""Cached mode on a resident subset: the hook restricts a dataset to DSA_SUBSET_FILE."""

import os
import unittest

from helpers import HAVE_TORCH, NEEDS_TORCH, iters, run_script, temp_dir

from ds_analyzer import _subset


def make_folder(classes=3, per_class=10):
    """A DatasetFolder layout of small .bin files; returns (root, sorted absolute paths)."""
    root = temp_dir("dsa-subset-")
    paths = []
    for c in range(classes):
        os.makedirs(os.path.join(root, "c%d" % c))
        for i in range(per_class):
            path = os.path.join(root, "c%d" % c, "s%03d.bin" % i)
            with open(path, "wb") as f:
                f.write(bytes([c, i]) * 16)
            paths.append(path)
    return root, sorted(paths)


def write_list(paths):
    name = os.path.join(temp_dir("dsa-subset-list-"), "subset.txt")
    with open(name, "w") as f:
        f.write("".join(p + "\n" for p in paths))
    return name


class PathListDataset:
    """A dataset that keeps its file paths in a list, labels in another (no torch)."""

    def __init__(self, paths):
        self.files = list(paths)
        self.labels = [i % 2 for i in range(len(paths))]
        self.name = "mine"

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        return self.files[i], self.labels[i]


class NoPaths:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n


class RestrictTest(unittest.TestCase):
    def setUp(self):
        _subset.reset_for_tests()

    def test_a_dataset_listing_its_paths_keeps_the_subset_and_its_labels_in_step(self):
        _, paths = make_folder()
        subset = frozenset(paths[::3])
        ds = PathListDataset(paths)
        labels = dict(zip(ds.files, ds.labels))
        kept, note = _subset.restrict(ds, subset)
        self.assertEqual(kept, len(subset))
        self.assertEqual(len(ds), len(subset))
        self.assertEqual(set(ds.files), set(subset))
        self.assertEqual([labels[f] for f in ds.files], ds.labels, "labels filtered with the same mask")
        self.assertIn("PathListDataset.files", note)
        # Handled once: a second epoch's iterator does not filter again.
        self.assertEqual(_subset.restrict(ds, frozenset(paths[:1])), (kept, note))

    def test_relative_paths_are_compared_as_absolute_ones(self):
        root, paths = make_folder(classes=1, per_class=4)
        cwd = os.getcwd()
        os.chdir(root)
        try:
            ds = PathListDataset([os.path.relpath(p, root) for p in paths])
            kept, _ = _subset.restrict(ds, frozenset(paths[:2]))
        finally:
            os.chdir(cwd)
        self.assertEqual(kept, 2)

    def test_a_dataset_without_paths_or_outside_the_subset_is_left_whole_with_the_reason(self):
        kept, note = _subset.restrict(NoPaths(5), frozenset(["/x"]))
        self.assertIsNone(kept)
        self.assertIn("exposes no list", note)
        _, paths = make_folder(classes=1, per_class=4)
        ds = PathListDataset(paths)
        kept, note = _subset.restrict(ds, frozenset(["/elsewhere/a.bin"]))
        self.assertIsNone(kept)
        self.assertEqual(len(ds), 4)
        self.assertIn("none of the 4 files", note)

    def test_a_dataset_whose_len_does_not_follow_its_list_is_rolled_back(self):
        _, paths = make_folder(classes=1, per_class=6)

        class Fixed(PathListDataset):
            def __len__(self):
                return 6

        ds = Fixed(paths)
        kept, note = _subset.restrict(ds, frozenset(paths[:2]))
        self.assertIsNone(kept)
        self.assertEqual(ds.files, paths, "restored")
        self.assertIn("left whole", note)

    def test_subset_paths_reads_the_list_only_in_the_cached_mode(self):
        name = write_list(["/a/b", "/c d/e"])
        self.assertEqual(
            _subset.subset_paths({"DSA_MODE": "cached", "DSA_SUBSET_FILE": name}), frozenset(["/a/b", "/c d/e"])
        )
        self.assertIsNone(_subset.subset_paths({"DSA_MODE": "cold", "DSA_SUBSET_FILE": name}))
        self.assertIsNone(_subset.subset_paths({"DSA_MODE": "cached"}))


@unittest.skipUnless(HAVE_TORCH, NEEDS_TORCH)
class TorchRestrictTest(unittest.TestCase):
    def setUp(self):
        _subset.reset_for_tests()

    def test_datasetfolder_samples_imgs_and_targets_follow_the_subset(self):
        from torchvision.datasets import ImageFolder

        root, paths = make_folder()
        subset = frozenset(paths[1::2])
        ds = ImageFolder(root, loader=lambda p: p, is_valid_file=lambda p: p.endswith(".bin"))
        kept, _ = _subset.restrict(ds, subset)
        self.assertEqual(kept, len(subset))
        self.assertEqual({p for p, _ in ds.samples}, set(subset))
        self.assertIs(ds.imgs, ds.samples)
        self.assertEqual(ds.targets, [c for _, c in ds.samples])
        self.assertEqual(len(ds), len(subset))
        self.assertEqual(ds[0][0], ds.samples[0][0])

    def test_a_torch_subset_of_a_datasetfolder_filters_its_indices(self):
        import torch.utils.data
        from torchvision.datasets import DatasetFolder

        root, paths = make_folder()
        ds = DatasetFolder(root, loader=lambda p: p, extensions=(".bin",))
        split = torch.utils.data.Subset(ds, list(range(0, 30, 2)))
        subset = frozenset(paths[:15])
        kept, note = _subset.restrict(split, subset)
        self.assertEqual(kept, len([i for i in range(0, 30, 2) if ds.samples[i][0] in subset]))
        self.assertTrue(all(split[i][0] in subset for i in range(len(split))))
        self.assertIn("Subset(DatasetFolder)", note)


SCRIPT = r"""
import os, sys
import torch
from torch.utils.data import DataLoader
from torchvision.datasets import DatasetFolder

ROOT, LOG = sys.argv[1], sys.argv[2]

def load(path):
    with open(LOG + ".%d" % os.getpid(), "a") as f:       # every file a worker reads
        f.write(path + "\n")
    with open(path, "rb") as f:
        return torch.tensor(list(f.read()[:4]), dtype=torch.float32)

ds = DatasetFolder(ROOT, loader=load, extensions=(".bin",))
loader = DataLoader(ds, batch_size=4, shuffle=True, num_workers=2)
model = torch.nn.Linear(4, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(3):
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
print("len", len(ds))
"""


@unittest.skipUnless(HAVE_TORCH, NEEDS_TORCH)
class HookTest(unittest.TestCase):
    def test_an_unmodified_datasetfolder_script_reads_only_the_subset_and_says_so(self):
        root, paths = make_folder(classes=3, per_class=20)
        subset = paths[::4]
        log = os.path.join(temp_dir("dsa-subset-log-"), "read")
        source = SCRIPT.replace("sys.argv[1], sys.argv[2]", f"{root!r}, {log!r}")
        proc, events = run_script(source, mode="cached", extra_env={"DSA_SUBSET_FILE": write_list(subset)})
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("len %d" % len(subset), proc.stdout)
        self.assertIn("DatasetFolder.samples: kept %d of %d files" % (len(subset), len(paths)), proc.stderr)
        read = set()
        logs = [n for n in os.listdir(os.path.dirname(log)) if n.startswith("read.")]
        self.assertGreaterEqual(len(logs), 2, "the workers read the files")
        for name in logs:
            with open(os.path.join(os.path.dirname(log), name)) as f:
                read.update(line.strip() for line in f)
        self.assertEqual(read, set(subset), "the workers read the subset and nothing else")
        (file_events,) = events.values()
        start = file_events[0]
        self.assertEqual(start["type"], "start")
        self.assertEqual(start["subsetFiles"], len(subset))
        self.assertGreater(len(iters(file_events)), 0)

    def test_a_dataset_the_hook_cannot_restrict_is_reported_without_subset_files(self):
        source = r"""
import torch
from torch.utils.data import DataLoader, Dataset
class Gen(Dataset):
    def __len__(self): return 16
    def __getitem__(self, i): return torch.zeros(4), i % 2
model = torch.nn.Linear(4, 2)
for x, y in DataLoader(Gen(), batch_size=4):
    torch.nn.functional.cross_entropy(model(x), y).backward()
"""
        proc, events = run_script(source, mode="cached", extra_env={"DSA_SUBSET_FILE": write_list(["/nowhere/a.bin"])})
        self.assertEqual(proc.returncode, 0, proc.stderr)
        (file_events,) = events.values()
        start = file_events[0]
        self.assertNotIn("subsetFiles", start)
        self.assertIn("Gen exposes no list of its 16 file paths", start["subsetNote"])


if __name__ == "__main__":
    unittest.main()
