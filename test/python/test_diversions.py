"""The checkpoint diversion logic in this process, without torch: the table of scratch paths, the file operations
that follow a diversion, and where each save API's target goes (ds_analyzer/_checkpoint's diversions, follow and
targets). test_checkpoint.py runs real jobs with torch for what only a job shows (the hook installing it all,
torch.save and torch.load, the events, the exit and a fork).

The wrappers are made from follow.py's own table around the real functions and called directly: nothing in
this process is patched, so the tests run side by side with anything.
"""

import builtins
import os
import pathlib
import shutil
import types
import unittest
from unittest import mock

from helpers import temp_dir

from ds_analyzer._checkpoint import diversions, follow, targets, timing


def wrapper(owner, name):
    """follow.py's wrapper of owner.name, around the real function (the table entry the hook installs)."""
    original = getattr(owner, name)
    assert not getattr(original, "_dsa", False), "%s.%s is patched in the test process" % (owner, name)
    for entry_owner, entry_name, wrap in follow._FOLLOWED:
        if entry_owner is owner and entry_name == name:
            return wrap(original)
    raise KeyError(name)


def write(path, content):
    with open(path, "wb") as f:
        f.write(content)


def read(path):
    with open(path, "rb") as f:
        return f.read()


class DiversionTest(unittest.TestCase):
    """Each test in a fresh folder (the current directory) with an empty table, left empty."""

    def setUp(self):
        self.dir = temp_dir("dsa-diversions-")
        self.cwd = os.getcwd()
        os.chdir(self.dir)
        # divert_to_scratch installs the wrappers once diverting() holds: never in this process.
        self.env = mock.patch.dict(os.environ, {"DSA_KEEP_OUTPUTS": "1"})
        self.env.start()
        self.addCleanup(self.env.stop)

    def tearDown(self):
        diversions.remove_scratches()
        diversions.folders[0] = False
        os.chdir(self.cwd)

    def divert(self, target, **kwargs):
        scratch, made = diversions.divert(target, **kwargs)
        self.assertTrue(made)
        return scratch

    def scratch_files(self):
        return sorted(n for _, _, names in os.walk(self.dir) for n in names if ".dsa-scratch-" in n)


class TableTest(DiversionTest):
    def test_a_scratch_sits_beside_its_target_and_stands_in_for_it_until_undiverted(self):
        scratch = self.divert("ckpt.pt")
        self.assertEqual(scratch, os.path.join(self.dir, ".ckpt.pt.dsa-scratch-%d" % os.getpid()))
        self.assertEqual(
            diversions.divert(pathlib.Path("ckpt.pt")), (scratch, False), "the same target, the same scratch"
        )
        write(scratch, b"saved")
        self.assertEqual(diversions.lookup(os.path.join(self.dir, "ckpt.pt")), (scratch, os.path.abspath("ckpt.pt")))
        self.assertIsNone(diversions.lookup("other.pt"))
        self.assertIsNone(diversions.lookup(3), "an fd is not a path")
        diversions.undivert("ckpt.pt")
        self.assertIsNone(diversions.lookup("ckpt.pt"))
        self.assertFalse(os.path.exists(scratch), "the scratch goes with its diversion")

    def test_a_scratch_never_reuses_a_name_left_there(self):
        taken = ".ckpt.pt.dsa-scratch-%d" % os.getpid()
        write(taken, b"a leftover")
        self.assertEqual(os.path.basename(self.divert("ckpt.pt")), taken + "-2")
        self.assertEqual(read(taken), b"a leftover")

    def test_an_async_save_still_writing_a_scratch_gets_the_next_save_a_fresh_one(self):
        first = self.divert("ckpt.pt")
        writing = types.SimpleNamespace(scratch=first)
        timing.unfinished.append(writing)
        self.addCleanup(timing.unfinished.remove, writing)
        write(first, b"being written")
        second = self.divert("ckpt.pt")
        self.assertNotEqual(second, first)
        self.assertEqual(diversions.lookup("ckpt.pt")[0], second)

    def test_a_diverted_folder_answers_for_what_its_scratch_holds(self):
        scratch = self.divert("out", folder=True, overlay=True)
        os.makedirs(os.path.join(scratch, "checkpoint-5"))
        write(os.path.join(scratch, "checkpoint-5", "model.bin"), b"weights")
        inside = os.path.join(scratch, "checkpoint-5", "model.bin")
        self.assertEqual(diversions.lookup("out/checkpoint-5/model.bin"), (inside, None))
        self.assertIsNone(diversions.lookup("out/checkpoint-1/model.bin"), "not in the scratch: the real path")

    def test_the_exit_removes_every_scratch_of_this_process_and_a_forked_child_removes_none(self):
        a, b = self.divert("a.pt"), self.divert("b", folder=True)
        write(a, b"a")
        os.makedirs(os.path.join(b, "part"))
        with mock.patch.object(diversions, "owner_pid", [os.getpid() + 1]):
            diversions.remove_scratches()  # a child: the parent's scratches are not its own
        self.assertTrue(os.path.exists(a) and os.path.isdir(b))
        diversions.remove_scratches()
        self.assertEqual((os.path.exists(a), os.path.exists(b)), (False, False))
        self.assertEqual((diversions.targets, diversions.made), ({}, []))

    def test_a_child_starts_with_no_diversion(self):
        self.divert("ckpt.pt")
        parents = diversions.targets
        with mock.patch.object(diversions, "owner_pid", [os.getpid() + 1]):
            scratch = self.divert("other.pt")  # the first diversion in the child
        self.assertIsNot(diversions.targets, parents)
        self.assertEqual(list(diversions.targets.values()), [scratch])
        diversions.made.extend(parents.values())  # the parent's, for this test's cleanup


class DivertingTest(unittest.TestCase):
    def diverting(self, mode, **env):
        with mock.patch.dict(os.environ, env):
            for name in ("DSA_KEEP_OUTPUTS", "DSA_CONTINUE"):
                if name not in env:
                    os.environ.pop(name, None)
            return diversions.diverting(mode)

    def test_every_mode_diverts_unless_keep_outputs_and_synthetic_always(self):
        for mode in ("cached", "cold", "synthetic", None):
            self.assertTrue(self.diverting(mode), mode)
        self.assertEqual([self.diverting(m, DSA_KEEP_OUTPUTS="1") for m in ("cached", "cold")], [False, False])
        self.assertTrue(self.diverting("synthetic", DSA_KEEP_OUTPUTS="1"), "its model trains on one batch")

    def test_continue_where_the_state_cannot_be_held_saves_synthetic_blocks_for_real(self):
        unheld = types.SimpleNamespace(unheld=True)
        with mock.patch.object(diversions._recorder, "recorder", lambda: unheld):
            self.assertFalse(self.diverting("synthetic", DSA_CONTINUE="1", DSA_KEEP_OUTPUTS="1"))
            self.assertTrue(self.diverting("synthetic", DSA_KEEP_OUTPUTS="1"), "not --continue")
        held = types.SimpleNamespace(unheld=False)
        with mock.patch.object(diversions._recorder, "recorder", lambda: held):
            self.assertTrue(self.diverting("synthetic", DSA_CONTINUE="1", DSA_KEEP_OUTPUTS="1"))


class FollowTest(DiversionTest):
    """The script's own file operations on a diverted target act on its scratch (pytorch/examples' patterns)."""

    def saved(self, target, content):
        """A save of `content` to `target`, diverted: the scratch holds it."""
        scratch = self.divert(target)
        write(scratch, content)
        return scratch

    def test_reads_and_checks_of_a_diverted_target_see_the_save_not_an_earlier_file(self):
        write("ckpt.pt", b"an earlier run's")
        self.saved("ckpt.pt", b"this run's")
        opened = wrapper(builtins, "open")
        with opened("ckpt.pt", "rb") as f:
            self.assertEqual(f.read(), b"this run's")
        self.assertEqual(wrapper(os.path, "getsize")("ckpt.pt"), len(b"this run's"))
        fd = wrapper(os, "open")("ckpt.pt", os.O_RDONLY)  # an fsync after the save: the scratch's fd
        try:
            self.assertEqual(os.read(fd, 100), b"this run's")
        finally:
            os.close(fd)
        self.assertEqual(read("ckpt.pt"), b"an earlier run's", "the user's file untouched")

    def test_a_new_target_exists_while_diverted_and_pathlib_follows_too(self):
        self.saved("new.pt", b"x")
        self.assertFalse(os.path.exists("new.pt"))
        self.assertTrue(wrapper(os.path, "exists")("new.pt"))
        self.assertTrue(wrapper(os.path, "isfile")(pathlib.Path("new.pt")))
        self.assertTrue(wrapper(pathlib.Path, "is_file")(pathlib.Path("new.pt")))
        self.assertFalse(wrapper(os.path, "exists")("other.pt"))

    def test_writing_the_target_itself_ends_its_diversion(self):
        scratch = self.saved("log.txt", b"saved")
        with wrapper(builtins, "open")("log.txt", "w") as f:
            f.write("the script's own")
        self.assertEqual(read("log.txt"), b"the script's own")
        self.assertIsNone(diversions.lookup("log.txt"))
        self.assertFalse(os.path.exists(scratch))

    def test_copyfile_to_model_best_goes_to_a_scratch_beside_it_and_never_over_an_earlier_file(self):
        # imagenet/main.py: torch.save(state, filename), then shutil.copyfile(filename, 'model_best.pth.tar').
        write("model_best.pth.tar", b"an earlier run's best")
        self.saved("checkpoint.pth.tar", b"epoch 1")
        copyfile = wrapper(shutil, "copyfile")
        self.assertEqual(copyfile("checkpoint.pth.tar", "model_best.pth.tar"), "model_best.pth.tar")
        self.assertEqual(read("model_best.pth.tar"), b"an earlier run's best")
        self.assertEqual(read(diversions.lookup("model_best.pth.tar")[0]), b"epoch 1")
        write("notes.txt", b"mine")
        copyfile("notes.txt", "notes-copy.txt")  # nothing diverted: copied for real
        self.assertEqual(read("notes-copy.txt"), b"mine")
        diversions.remove_scratches()
        self.assertEqual(self.scratch_files(), [])
        self.assertEqual(sorted(os.listdir(".")), ["model_best.pth.tar", "notes-copy.txt", "notes.txt"])

    def test_an_atomic_save_then_replace_moves_the_diversion_to_the_final_name(self):
        tmp_scratch = self.saved("ckpt.pt.tmp", b"epoch 0")
        wrapper(os, "replace")("ckpt.pt.tmp", "ckpt.pt")
        exists = wrapper(os.path, "exists")
        self.assertEqual((exists("ckpt.pt.tmp"), exists("ckpt.pt")), (False, True))
        self.assertFalse(os.path.exists(tmp_scratch))
        self.assertIsNone(diversions.lookup("ckpt.pt.tmp"), "the old name is gone, as it would be")
        self.assertEqual(read(diversions.lookup("ckpt.pt")[0]), b"epoch 0")
        self.assertEqual(diversions.made, [diversions.lookup("ckpt.pt")[0]], "one scratch left to remove")
        write("other.tmp", b"real")
        wrapper(os, "rename")("other.tmp", "other.pt")  # nothing diverted: renamed for real
        self.assertEqual(read("other.pt"), b"real")

    def test_resume_copy_into_a_folder_move_and_remove(self):
        self.saved("resume.pt", b"epoch 3")
        os.makedirs("keep")
        self.assertEqual(wrapper(shutil, "copy2")("resume.pt", "keep"), os.path.join("keep", "resume.pt"))
        self.assertEqual(os.listdir("keep"), [".resume.pt.dsa-scratch-%d" % os.getpid()])
        self.assertEqual(wrapper(shutil, "move")("resume.pt", "moved.pt"), "moved.pt")
        exists = wrapper(os.path, "exists")
        self.assertEqual((exists("resume.pt"), exists("moved.pt"), exists("keep/resume.pt")), (False, True, True))
        remove = wrapper(os, "remove")
        remove("moved.pt")
        self.assertFalse(exists("moved.pt"))
        with self.assertRaises(FileNotFoundError):
            remove("moved.pt")
        diversions.remove_scratches()
        self.assertEqual((self.scratch_files(), os.listdir("keep")), ([], []))

    def test_every_wrapper_passes_through_while_nothing_is_diverted(self):
        write("plain.bin", b"data")
        for owner, name, _ in follow._FOLLOWED:
            if owner is os.path:
                self.assertEqual(wrapper(owner, name)("plain.bin"), getattr(owner, name)("plain.bin"), name)
        self.assertEqual(wrapper(shutil, "copy")("plain.bin", "copy.bin"), "copy.bin")
        self.assertEqual(read("copy.bin"), b"data")
        self.assertEqual(self.scratch_files(), [])


class TargetsTest(DiversionTest):
    """Where each save API's target goes: a scratch path in its place when diverting, put back after the save."""

    def save(self, api="torch.save"):
        return timing._Save(api, types.SimpleNamespace(iterations=4))

    def test_a_path_is_replaced_by_its_scratch_when_diverting_and_kept_otherwise(self):
        save = self.save()
        args, kwargs = targets.prepare_torch_save(save, ({"w": 1}, "ckpt.pt"), {}, True)
        self.assertEqual(args[1], diversions.lookup("ckpt.pt")[0])
        self.assertEqual((save.persisted, save.note, save.scratch), (False, "scratch", args[1]))
        write(args[1], b"12345")
        self.assertEqual(save.measure(), 5, "the scratch is measured")
        kept = self.save()
        self.assertEqual(
            targets.prepare_lightning(kept, (None,), {"filepath": "last.ckpt"}, False),
            ((None,), {"filepath": "last.ckpt"}),
        )
        self.assertEqual((kept.persisted, kept.note), (True, None))

    def test_an_open_file_or_a_remote_path_is_written_for_real_with_a_note(self):
        with open("model.pt", "wb") as f, mock.patch.object(targets, "warn_once") as warn:
            save = self.save()
            self.assertIs(targets.prepare_torch_save(save, ({}, f), {}, True)[0][1], f)
            f.write(b"abc")
            self.assertEqual((save.note, save.persisted, save.measure()), ("open-file", True, 3))
            remote = self.save("dcp.save")
            self.assertEqual(
                targets.prepare_dcp(remote, ({},), {"checkpoint_id": "s3://bucket/step"}, True)[1],
                {"checkpoint_id": "s3://bucket/step"},
            )
            self.assertEqual(remote.note, "custom-writer")
        self.assertEqual([c.args[0] for c in warn.call_args_list], ["open-file", "custom-writer"])

    def test_a_dcp_writer_saves_into_a_scratch_folder_and_gets_its_path_back(self):
        writer = types.SimpleNamespace(path=pathlib.Path("dcp/step"))
        save = self.save("dcp.save")
        targets.prepare_dcp(save, ({}, writer), {}, True)
        self.assertEqual(writer.path, pathlib.Path(diversions.lookup("dcp/step")[0]))
        save.cleanup()
        self.assertEqual(writer.path, pathlib.Path("dcp/step"))

    def test_a_hugging_face_output_dir_is_a_scratch_folder_during_the_save(self):
        trainer = types.SimpleNamespace(
            args=types.SimpleNamespace(output_dir="out"), state=types.SimpleNamespace(best_model_checkpoint="out/c-1")
        )
        save = self.save("hf-trainer")
        targets.prepare_hf(save, (trainer, None, None), {}, True)
        scratch = trainer.args.output_dir
        self.assertEqual(scratch, os.path.join(self.dir, ".out.dsa-scratch-%d" % os.getpid()))
        os.makedirs(os.path.join(scratch, "checkpoint-5"))
        trainer.state.best_model_checkpoint = os.path.join(scratch, "checkpoint-5")  # goes at the exit
        save.cleanup()
        self.assertEqual((trainer.args.output_dir, trainer.state.best_model_checkpoint), ("out", "out/c-1"))
        self.assertTrue(wrapper(os.path, "isdir")("out/checkpoint-5"))

    def test_a_save_that_fails_forgets_the_scratch_it_made(self):
        save = self.save()
        args, _ = targets.prepare_torch_save(save, ({}, "ckpt.pt"), {}, True)
        write(args[1], b"half")
        save.abandon()
        self.assertIsNone(diversions.lookup("ckpt.pt"))
        self.assertEqual(self.scratch_files(), [])


if __name__ == "__main__":
    unittest.main()
