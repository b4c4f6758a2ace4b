"""Training unharmed (_snapshot.py): a state taken, trained away from, and put back is the state taken, bit for bit."""

import gc
import random
import unittest

from helpers import HAVE_TORCH, NEEDS_TORCH

if HAVE_TORCH:
    import numpy
    import torch

    from ds_analyzer import _snapshot


def digest(model, opt, sched):
    """Everything training changes, as exact values: weights, buffers, grads, optimizer and scheduler state."""
    out = {k: v.clone() for k, v in model.state_dict().items()}
    for k, p in model.named_parameters():
        out["grad." + k] = None if p.grad is None else p.grad.clone()
    out["opt"] = repr(opt.state_dict())
    out["sched"] = repr(sched.state_dict())
    return out


def same(test, a, b):
    test.assertEqual(a.keys(), b.keys())
    for k in a:
        if torch.is_tensor(a[k]):
            test.assertTrue(torch.equal(a[k], b[k]), k)
        else:
            test.assertEqual(a[k], b[k], k)


@unittest.skipUnless(HAVE_TORCH, NEEDS_TORCH)
class SnapshotTest(unittest.TestCase):
    def setUp(self):
        gc.collect()  # models of earlier tests (found by gc) go first
        torch.manual_seed(0)
        self.model = torch.nn.Sequential(
            torch.nn.Linear(4, 8),
            torch.nn.BatchNorm1d(8),
            torch.nn.ReLU(),
            torch.nn.Dropout(0.5),
            torch.nn.Linear(8, 1),
        )
        self.opt = torch.optim.Adam(self.model.parameters(), lr=0.01)
        self.sched = torch.optim.lr_scheduler.StepLR(self.opt, step_size=2, gamma=0.5)
        self.scaler = torch.cuda.amp.GradScaler(enabled=False)

    def tearDown(self):
        del self.model, self.opt, self.sched, self.scaler
        gc.collect()

    def train(self, steps):
        losses = []
        for _ in range(steps):
            x = torch.randn(16, 4)
            self.opt.zero_grad()
            loss = self.model(x).pow(2).mean() + random.random() * 0 + float(numpy.random.rand()) * 0
            self.scaler.scale(loss).backward()
            self.scaler.step(self.opt)
            self.scaler.update()
            self.sched.step()
            losses.append(loss.item())
        return losses

    def test_training_after_a_restore_is_training_as_if_the_block_never_ran(self):
        self.train(3)
        before = digest(self.model, self.opt, self.sched)
        snap = _snapshot.Snapshot()
        self.assertGreater(snap.bytes, 0)
        self.train(5)  # the block: weights, Adam moments, BatchNorm statistics, lr and RNGs all move
        self.assertNotEqual(repr(self.opt.state_dict()), before["opt"])
        snap.restore()
        same(self, digest(self.model, self.opt, self.sched), before)
        after_restore = self.train(4)
        # The same 4 steps from the same state, without the block: a second snapshot taken where the first was.
        snap2 = _snapshot.Snapshot()
        expected = digest(self.model, self.opt, self.sched)
        snap.restore()
        again = self.train(4)
        self.assertEqual(again, after_restore)
        same(self, digest(self.model, self.opt, self.sched), expected)
        del snap2

    def test_state_first_made_inside_the_block_is_removed(self):
        snap = _snapshot.Snapshot()  # before any step: Adam has no moments yet, no grads
        self.train(2)
        snap.restore()
        self.assertEqual(len(self.opt.state), 0)
        self.assertTrue(all(p.grad is None for p in self.model.parameters()))
        self.assertEqual(self.sched.last_epoch, 0)

    def test_random_generators_come_back(self):
        snap = _snapshot.Snapshot()
        drawn = (random.random(), float(numpy.random.rand()), torch.rand(3))
        snap.restore()
        self.assertEqual(random.random(), drawn[0])
        self.assertEqual(float(numpy.random.rand()), drawn[1])
        self.assertTrue(torch.equal(torch.rand(3), drawn[2]))

    def test_a_replaced_buffer_gets_its_own_tensor_back(self):
        bn = self.model[1]
        kept = bn.running_mean
        snap = _snapshot.Snapshot()
        bn.running_mean = torch.full_like(kept, 7.0)
        snap.restore()
        self.assertIs(bn.running_mean, kept)

    def test_a_state_over_its_allowance_is_refused(self):
        with self.assertRaises(_snapshot.CannotHold) as caught:
            _snapshot.Snapshot(allowance=10)
        self.assertIn("DSA_SNAPSHOT_SHARE", str(caught.exception))

    def test_no_optimizer_is_refused(self):
        del self.sched, self.opt
        self.opt = self.sched = None
        gc.collect()
        with self.assertRaises(_snapshot.CannotHold):
            _snapshot.Snapshot()

    def test_an_enabled_scaler_comes_back(self):
        # A CPU torch without CUDA warns and disables the scaler; its state is still its __dict__.
        scaler = self.scaler
        scaler.__dict__["_init_scale"] = 1024.0
        snap = _snapshot.Snapshot()
        scaler.__dict__["_init_scale"] = 2.0
        scaler.__dict__["_growth_tracker"] = torch.tensor([5])
        snap.restore()
        self.assertEqual(scaler._init_scale, 1024.0)
        self.assertNotIn("_growth_tracker", vars(scaler))  # a disabled scaler had none at the snapshot

    def test_allowance_is_split_among_the_ranks_of_the_machine(self):
        one = _snapshot.allowance_bytes({"DSA_SNAPSHOT_SHARE": "0.5"})
        four = _snapshot.allowance_bytes({"DSA_SNAPSHOT_SHARE": "0.5", "LOCAL_WORLD_SIZE": "4"})
        self.assertAlmostEqual(four, one / 4, delta=one * 0.05)


if __name__ == "__main__":
    unittest.main()
