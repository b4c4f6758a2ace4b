"""torchrun and mp.spawn: each rank writes its own events, and every rank stops at the same iteration."""

import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import unittest

from helpers import HAVE_TORCH, NEEDS_TORCH, PACKAGE_DIR, iters, read_events

# The data, loader, model and optimiser both multi-process jobs train with.
LOADER_SETUP = """\
data = TensorDataset(torch.randn(256, 8), torch.randint(0, 2, (256,)))
sampler = DistributedSampler(data)
loader = DataLoader(data, batch_size=4, sampler=sampler)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.01)"""


def with_setup(job, indent=""):
    """The job's text with LOADER_SETUP in place, at the indent it stands at."""
    return job.replace(indent + "LOADER_SETUP", textwrap.indent(LOADER_SETUP, indent))


DDP_JOB = r"""
import os, sys, time
import torch, torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

dist.init_process_group("gloo")
rank = dist.get_rank()
if rank == 1 and os.environ.get("RANK1_STOP_FILE"):
    # Rank 1 looks at another path: it alone would never see the stop file, so
    # stopping at the same iteration proves the ranks agree through a collective.
    os.environ["DSA_STOP_FILE"] = os.environ["RANK1_STOP_FILE"]
LOADER_SETUP
for epoch in range(50):
    sampler.set_epoch(epoch)
    for i, (x, y) in enumerate(loader):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        if rank == 0 and i == 13 and os.environ.get("DSA_STOP_FILE"):
            open(os.environ["DSA_STOP_FILE"], "w").close()
        time.sleep(0.002 * (rank + 1))      # rank 1 is the slower one
"""
DDP_JOB = with_setup(DDP_JOB)


# torch.multiprocessing.spawn, as the ImageNet example's --multiprocessing-distributed:
# the ranks get no RANK/WORLD_SIZE variables, only init_process_group(rank=...).
SPAWN_JOB = r"""
import os, sys
import torch, torch.distributed as dist, torch.multiprocessing as mp
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

def worker(rank, port):
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, world_size=2, rank=rank)
    LOADER_SETUP
    for epoch in range(50):
        sampler.set_epoch(epoch)
        for x, y in loader:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()

if __name__ == "__main__":
    mp.spawn(worker, nprocs=2, args=(int(sys.argv[1]),))
"""
SPAWN_JOB = with_setup(SPAWN_JOB, "    ")


def one_node_rendezvous():
    """--standalone's rendezvous on a free port: torch 1.13's --standalone is always localhost:29400, so a second
    torchrun on the machine (another test file) joins this one's store and fails when this one ends ("Broken pipe")."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return ["--nnodes", "1", "--rdzv_backend", "c10d", "--rdzv_endpoint", "localhost:%d" % port, "--rdzv_id", "1"]


# The agent looks at its workers every --monitor_interval seconds (5 by default): the job's end waited up to 5 s
# for it each run. 0.1 s finds the end at once; the agent's polls are cheap. Two ranks.
QUICK_AGENT = ["--monitor_interval", "0.1", "--nproc_per_node", "2"]


def torchrun(env_extra, iterations):
    work = tempfile.mkdtemp(prefix="dsa-torchrun-")
    script = os.path.join(work, "ddp.py")
    with open(script, "w") as f:
        f.write(DDP_JOB)
    env = dict(
        os.environ,
        PYTHONPATH=PACKAGE_DIR,
        DSA_MODE="cached",
        DSA_EVENTS_DIR=os.path.join(work, "events"),
        DSA_ITERATIONS=str(iterations),
        DSA_SYNC="1",
        OMP_NUM_THREADS="1",
    )
    env.update(env_extra(work))
    proc = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", *one_node_rendezvous(), *QUICK_AGENT, script],
        env=env,
        cwd=work,
        capture_output=True,
        text=True,
        timeout=240,
    )
    return proc, read_events(os.path.join(work, "events"))


@unittest.skipUnless(HAVE_TORCH, NEEDS_TORCH)
class TorchrunTest(unittest.TestCase):
    # One torchrun (three interpreters importing torch) shows both: the ranks' own event files and their agreed stop.
    # The budget on every rank is SpawnedRanksTest's (the budget is counted per rank, whatever launched it).
    def test_each_rank_writes_its_own_events_and_the_stop_file_stops_every_rank_at_the_same_iteration(self):
        proc, events = torchrun(
            lambda work: {"DSA_STOP_FILE": os.path.join(work, "STOP"), "RANK1_STOP_FILE": os.path.join(work, "never")},
            iterations=10000,
        )
        self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
        self.assertEqual(len(events), 2, list(events))  # one file per rank, none from the agent
        by_rank = {ev[0]["rank"]: ev for ev in events.values()}
        self.assertEqual(sorted(by_rank), [0, 1])
        for ev in by_rank.values():
            self.assertEqual(ev[0]["worldSize"], 2)
            # One node (--standalone's rendezvous): its agent's GROUP_RANK is 0.
            self.assertEqual((ev[0]["nodeRank"], ev[0]["hostname"]), (0, socket.gethostname()))
            self.assertEqual(len(iters(ev)), ev[-1]["iterations"])
        ends = sorted((rank, ev[-1]["reason"], ev[-1]["iterations"]) for rank, ev in by_rank.items())
        self.assertEqual([e[1] for e in ends], ["stop-file", "stop-file"])
        self.assertEqual(ends[0][2], ends[1][2])
        self.assertEqual(ends[0][2] % 10, 0)  # checked only every 10 iterations


@unittest.skipUnless(HAVE_TORCH, NEEDS_TORCH)
class SpawnedRanksTest(unittest.TestCase):
    def test_ranks_started_by_mp_spawn_take_their_rank_from_torch_distributed(self):
        import socket

        work = tempfile.mkdtemp(prefix="dsa-spawn-")
        script = os.path.join(work, "spawn.py")
        with open(script, "w") as f:
            f.write(SPAWN_JOB)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = dict(
            os.environ,
            PYTHONPATH=PACKAGE_DIR,
            DSA_MODE="cached",
            DSA_EVENTS_DIR=os.path.join(work, "events"),
            DSA_ITERATIONS="30",
            DSA_SYNC="1",
            OMP_NUM_THREADS="1",
        )
        for name in ("RANK", "WORLD_SIZE", "SLURM_PROCID", "SLURM_NTASKS"):
            env.pop(name, None)
        proc = subprocess.run(
            [sys.executable, script, str(port)], env=env, cwd=work, capture_output=True, text=True, timeout=240
        )
        self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
        events = read_events(os.path.join(work, "events"))
        self.assertEqual(sorted(ev[0]["rank"] for ev in events.values()), [0, 1], list(events))
        for name, ev in events.items():
            rank = ev[0]["rank"]
            self.assertTrue(name.startswith("events-%d-" % rank), name)
            self.assertEqual(ev[0]["worldSize"], 2)
            self.assertEqual({e["rank"] for e in ev}, {rank})
            self.assertEqual(len(iters(ev)), 30)
            self.assertEqual((ev[-1]["reason"], ev[-1]["iterations"]), ("budget", 30))


if __name__ == "__main__":
    unittest.main()
