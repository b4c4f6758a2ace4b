"""Prep's stages (_stages.py): real torchvision transforms on real JPEG files, timed by stage."""

import os
import unittest

from helpers import HAVE_TORCH, NEEDS_TORCH, read_events, run_script, temp_dir

try:
    import torchvision  # noqa: F401
    from PIL import Image

    HAVE_TORCHVISION = HAVE_TORCH
except ImportError:
    HAVE_TORCHVISION = False


def make_image_folder(root, images=24, size=256):
    """An ImageFolder of real JPEGs, noisy enough that decoding them costs measurable time."""
    import random

    rng = random.Random(7)
    for label in ("a", "b"):
        os.makedirs(os.path.join(root, label), exist_ok=True)
    for i in range(images):
        pixels = bytes(rng.getrandbits(8) for _ in range(size * size * 3))
        Image.frombytes("RGB", (size, size), pixels).save(os.path.join(root, "ab"[i % 2], "%03d.jpg" % i), quality=90)
    return root


@unittest.skipUnless(HAVE_TORCHVISION, NEEDS_TORCH + " and torchvision")
class StageTimingTest(unittest.TestCase):
    """In this process: the wrappers on torchvision's Compose, pil_loader and PIL, and on torch's fetchers."""

    def setUp(self):
        import PIL.ImageFile
        import torch.utils.data._utils.fetch as fetch
        import torchvision

        from ds_analyzer import _stages

        self.stages, self.fetch = _stages, fetch
        self.dir = temp_dir("dsa-stages-")
        _stages.enable(self.dir)
        _stages.patch_fetchers(fetch)
        _stages.patch_torchvision(torchvision)
        _stages.patch_pil(PIL.ImageFile)

    def tearDown(self):
        self.stages.unpatch_fetchers(self.fetch)
        self.stages.unpatch_for_tests()

    def loader(self, root, mark=True):
        import torch.utils.data
        from torchvision import datasets, transforms

        tf = transforms.Compose(
            [
                transforms.RandomResizedCrop(128),
                transforms.RandomHorizontalFlip(),
                transforms.ToTensor(),
                transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
            ]
        )
        loader = torch.utils.data.DataLoader(datasets.ImageFolder(root, tf), batch_size=8, num_workers=0)
        if mark:
            self.stages.mark_loader(loader)
        return loader

    def test_each_stage_is_named_and_timed_and_they_add_up_to_the_fetch(self):
        root = make_image_folder(os.path.join(self.dir, "data"))
        batches = [x.shape[0] for x, _ in self.loader(root)]
        self.assertEqual(batches, [8, 8, 8])
        totals = self.stages._state["totals"]
        names = {name: (kind, ns, calls) for (kind, name), (ns, calls) in totals.stages.items()}
        self.assertEqual(
            sorted(names),
            sorted(["read", "decode", "RandomResizedCrop", "RandomHorizontalFlip", "ToTensor", "Normalize", "collate"]),
        )
        for name in ("read", "decode", "RandomResizedCrop", "RandomHorizontalFlip", "ToTensor", "Normalize"):
            self.assertEqual(names[name][2], 24, name)  # once per sample
            self.assertGreater(names[name][1], 0, name)
        self.assertEqual(names["collate"][2], 3)  # once per batch
        self.assertEqual(
            [names[n][0] for n in ("read", "decode", "ToTensor", "collate")], ["read", "decode", "transform", "collate"]
        )
        self.assertEqual((totals.samples, totals.batches), (24, 3))
        stages_ns = sum(ns for _, ns, _ in names.values())
        # Exclusive times inside the fetch: never more than it, and what is left (ImageFolder's own code, the
        # header read in Image.open) is small beside decoding 24 noisy 256x256 JPEGs.
        self.assertLessEqual(stages_ns, totals.fetch_ns)
        self.assertGreater(stages_ns, 0.8 * totals.fetch_ns, (stages_ns, totals.fetch_ns))
        # Decoding a noisy JPEG costs more than flipping its tensor.
        self.assertGreater(names["decode"][1], names["RandomHorizontalFlip"][1])
        self.assertGreater(totals.fetch_cpu_ns, 0)

        totals.flush()
        lines = read_events(self.dir, prefix="stages-")["stages-%d.jsonl" % os.getpid()]
        last = lines[-1]
        self.assertEqual((last["v"], last["type"], last["samples"], last["batches"]), (1, "stages", 24, 3))
        self.assertAlmostEqual(sum(s["ms"] for s in last["stages"]), stages_ns / 1e6, delta=0.01)
        self.assertEqual({s["name"]: s["calls"] for s in last["stages"]}["collate"], 3)

    def test_an_unmarked_loader_is_not_timed(self):
        root = make_image_folder(os.path.join(self.dir, "data"), images=8, size=64)
        for _ in self.loader(root, mark=False):
            pass
        totals = self.stages._state["totals"]
        self.assertTrue(totals is None or (totals.samples == 0 and not totals.stages))

    def test_an_image_opened_from_its_path_is_read_while_decoded(self):
        import torch.utils.data

        root = make_image_folder(os.path.join(self.dir, "data"), images=4, size=64)
        paths = sorted(os.path.join(root, d, f) for d in ("a", "b") for f in os.listdir(os.path.join(root, d)))

        class Paths(torch.utils.data.Dataset):
            def __len__(self):
                return len(paths)

            def __getitem__(self, i):
                return torch.tensor(list(Image.open(paths[i]).convert("L").getdata())[:16])

        loader = torch.utils.data.DataLoader(Paths(), batch_size=2)
        self.stages.mark_loader(loader)
        for _ in loader:
            pass
        names = {name: calls for (kind, name), (_, calls) in self.stages._state["totals"].stages.items()}
        self.assertEqual(names, {"read+decode": 4, "collate": 2})


SCRIPT = r"""
import torch, torch.utils.data
from torchvision import datasets, transforms
tf = transforms.Compose([transforms.CenterCrop(48), transforms.ToTensor()])
train = torch.utils.data.DataLoader(datasets.ImageFolder(ROOT, tf), batch_size=4, num_workers=2, shuffle=True)
val = torch.utils.data.DataLoader(datasets.ImageFolder(ROOT, tf), batch_size=3, num_workers=1)
model = torch.nn.Linear(3 * 48 * 48, 2)
for epoch in range(2):
    for x, y in train:
        torch.nn.functional.cross_entropy(model(x.flatten(1)), y).backward()
    with torch.no_grad():
        for x, y in val:
            model(x.flatten(1))
print("done")
"""


@unittest.skipUnless(HAVE_TORCHVISION, NEEDS_TORCH + " and torchvision")
class StagesInAJobTest(unittest.TestCase):
    """A real job through the hook: each training worker writes its totals; validation and synthetic write none."""

    def run_job(self, mode):
        root = make_image_folder(temp_dir("dsa-stages-data-"), images=16, size=64)
        proc, _ = run_script(f"ROOT = {root!r}\n" + SCRIPT, mode=mode)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("done", proc.stdout)
        events_dir = os.path.join(proc.job_dir, "events")
        return read_events(events_dir, prefix="stages-"), read_events(events_dir)

    def test_the_training_workers_report_their_stages_and_validation_is_left_out(self):
        stages, events = self.run_job("cached")
        main_pid = next(iter(events.values()))[0]["pid"]
        self.assertEqual(len(stages), 2 * 2, list(stages))  # 2 workers, 2 epochs (not persistent: new workers)
        self.assertNotIn("stages-%d.jsonl" % main_pid, stages)
        lasts = [lines[-1] for lines in stages.values()]
        self.assertEqual(sum(last["samples"] for last in lasts), 2 * 16)  # the training loader's only (batch 4)
        self.assertEqual(sum(last["batches"] for last in lasts), 2 * 4)
        for last in lasts:
            names = {s["name"] for s in last["stages"]}
            self.assertEqual(names, {"read", "decode", "CenterCrop", "ToTensor", "collate"}, last)
            self.assertTrue(all(s["ms"] > 0 for s in last["stages"]), last)
            self.assertLessEqual(sum(s["ms"] for s in last["stages"]), last["fetchMs"] + 1e-3)

    def test_the_synthetic_mode_times_no_stage(self):
        stages, _ = self.run_job("synthetic")
        self.assertEqual(stages, {})


if __name__ == "__main__":
    unittest.main()
