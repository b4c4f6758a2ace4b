"""profile --continue in the hook: the deterministic training run (test/fixtures/continue-train.py) trained with
synthetic, cached and cold blocks switched by the control file, then `train`, ends bit-identical to the same run
unprofiled. This test plays the CLI: it reads the job's events and rewrites the control file at set iterations."""

import json
import os
import time
import unittest

from helpers import HAVE_TORCH, NEEDS_TORCH, PACKAGE_DIR, fork_job, read_events, run_script, temp_dir

FIXTURE = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "fixtures", "continue-train.py"))
# (iteration at or after which the next block is asked, block, mode): S C K S, then the blocks are over.
SCHEDULE = ((8, 1, "cached"), (16, 2, "cold"), (24, 3, "synthetic"), (40, 4, "train"))


def make_data(root, files=160):
    os.makedirs(root, exist_ok=True)
    for i in range(files):
        with open(os.path.join(root, "f%04d.bin" % i), "wb") as f:
            f.write(bytes((i * 7 + j) % 256 for j in range(256)))


def _play(job, pending, events_dir, control, deadline_s=300):
    """Asks each pending block once the job's iterations reach it, until the job ends: its result."""
    started = time.monotonic()
    while (proc := job.poll(0.05)) is None:
        if time.monotonic() - started > deadline_s:
            raise AssertionError("the job ran past %d s" % deadline_s)
        if not pending:
            continue
        files = read_events(events_dir) if os.path.isdir(events_dir) else {}
        done = max([sum(1 for e in evs if e["type"] == "iter") for evs in files.values()] or [0])
        if done >= pending[0][0]:
            _, block, mode = pending.pop(0)
            with open(control + ".partial", "w") as f:
                f.write("%d %s\n" % (block, mode))
            os.rename(control + ".partial", control)
    return proc


def run(work, name, continued, epochs=3, workers=2):
    out = os.path.join(work, name + ".json")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DSA_")}
    env["PYTHONPATH"] = PACKAGE_DIR
    args = [
        "--data",
        os.path.join(work, "data"),
        "--out",
        out,
        "--epochs",
        str(epochs),
        "--workers",
        str(workers),
        "--step-ms",
        "10",
        "--save-dir",
        os.path.join(work, name + "-ckpt"),
    ]
    events_dir = os.path.join(work, name + "-events")
    control = os.path.join(work, name + "-CONTROL")
    if continued:
        env.update(
            {
                "DSA_MODE": "synthetic",
                "DSA_EVENTS_DIR": events_dir,
                "DSA_CONTROL_FILE": control,
                "DSA_CONTINUE": "1",
                "DSA_KEEP_OUTPUTS": "1",
                "DSA_SYNC": "1",
                "DSA_PROTOCOL": "1",
                "DSA_STOP_FILE": os.path.join(work, name + "-STOP"),
            }
        )
    # Forked from the zygote (torch imported once for both runs), polled every 0.05 s while it runs.
    job = fork_job(FIXTURE, env, work, args)
    pending = list(SCHEDULE) if continued else []
    try:
        proc = _play(job, pending, events_dir, control)
    except BaseException:
        job.kill()  # a failed test leaves no job running, and the zygote in step for the next
        raise
    if not os.path.exists(out):  # the job failed before its result: say why, not which file is missing
        raise AssertionError("%s exited %d: %s" % (name, proc.returncode, proc.stderr[-3000:]))
    with open(out) as f:
        result = json.load(f)
    result["returncode"] = proc.returncode
    result["stderr"] = proc.stderr
    result["events"] = read_events(events_dir) if continued else {}
    return result


@unittest.skipUnless(HAVE_TORCH, NEEDS_TORCH)
class ContinueTest(unittest.TestCase):
    def test_synthetic_blocks_are_undone_and_the_run_ends_bit_identical(self):
        work = temp_dir("dsa-continue-")
        make_data(os.path.join(work, "data"))
        plain = run(work, "plain", continued=False)
        cont = run(work, "continued", continued=True)
        self.assertEqual(cont["returncode"], 0, cont["stderr"])
        (events,) = cont["events"].values()
        snaps = [e for e in events if e["type"] == "snapshot"]
        self.assertEqual(
            [(e["block"], e["action"]) for e in snaps],
            [(0, "take"), (0, "restore"), (3, "take"), (3, "restore")],
            cont["stderr"],
        )
        # The synthetic blocks' iterations, [take, restore): the script trained on replays there, then it was undone.
        synthetic = set()
        for take, restore in zip(snaps[0::2], snaps[1::2]):
            synthetic.update(range(take["i"], restore["i"]))
        self.assertGreater(len(synthetic), 10)
        real = [loss for k, loss in enumerate(cont["losses"]) if k not in synthetic]
        self.assertEqual(real, plain["losses"])
        self.assertEqual(cont["hash"], plain["hash"])
        # Checkpoints of the real blocks and after them are the run's own, where the script put them.
        self.assertEqual(
            sorted(os.listdir(os.path.join(work, "continued-ckpt"))),
            sorted(os.listdir(os.path.join(work, "plain-ckpt"))),
        )
        # Passive after `train`: no iteration event after the switch's iteration.
        last = max(e["i"] for e in events if e["type"] == "iter")
        self.assertLess(last, snaps[-1]["i"] + 12)


class IterateTest(unittest.TestCase):
    def test_iterate_never_replays_under_continue_and_says_why(self):
        control = os.path.join(temp_dir("dsa-continue-iterate-"), "CONTROL")
        proc, events = run_script(
            r"""
import os, time
import ds_analyzer
CONTROL = os.environ["DSA_CONTROL_FILE"]
seen = []
for k, batch in enumerate(ds_analyzer.iterate([[k] * 4 for k in range(300)])):
    if k == 20:
        with open(CONTROL + ".partial", "w") as f:
            f.write("1 train\n")
        os.rename(CONTROL + ".partial", CONTROL)
    seen.append(batch[0])
    time.sleep(0.002)
print(seen == list(range(300)))
""",
            mode="synthetic",
            extra_env={"DSA_CONTINUE": "1", "DSA_CONTROL_FILE": control},
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.strip(), "True")  # every batch real: nothing replayed, nothing to undo
        (evs,) = events.values()
        refused = [e for e in evs if e["type"] == "snapshot"]
        self.assertEqual([(e["block"], e["action"]) for e in refused], [(0, "refused")])
        self.assertIn("iterate()", refused[0]["reason"])
        # Passive after `train`: the iterations stop being written soon after the switch (the control file is looked
        # at every 0.1 s, about 50 of these iterations: well short of the 300 the loop runs).
        self.assertLess(max(e["i"] for e in evs if e["type"] == "iter"), 150)


if __name__ == "__main__":
    unittest.main()
