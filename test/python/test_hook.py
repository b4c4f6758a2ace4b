"""The sitecustomize activation hook: chaining, and doing nothing without DSA_MODE."""

import os
import shutil
import tempfile
import unittest

from helpers import PACKAGE_DIR, run_script


class HookTest(unittest.TestCase):
    def test_no_mode_means_nothing_is_imported_or_written(self):
        proc, events = run_script(
            "import sys\n"
            "print('ds_analyzer' in sys.modules, any(type(f).__name__ == '_TorchImportHook' for f in sys.meta_path))\n",
            mode=None,
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.strip(), "False False")
        self.assertEqual(events, {})

    def test_mode_set_arms_the_torch_import_hook_without_importing_torch(self):
        proc, _ = run_script(
            "import sys\n"
            "print('torch' in sys.modules, any(type(f).__name__ == '_TorchImportHook' for f in sys.meta_path))\n",
            mode="cached",
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.strip(), "False True")

    def test_an_existing_sitecustomize_still_runs_with_and_without_a_mode(self):
        other = tempfile.mkdtemp(prefix="dsa-other-site-")
        try:
            with open(os.path.join(other, "sitecustomize.py"), "w") as f:
                f.write("import builtins\nbuiltins.DSA_TEST_CHAINED = 'yes'\n")
            for mode in (None, "cached"):
                proc, _ = run_script(
                    "import builtins, sitecustomize\n"
                    "print(getattr(builtins, 'DSA_TEST_CHAINED', 'no'), sitecustomize.__file__)\n",
                    mode=mode,
                    pythonpath=os.pathsep.join([PACKAGE_DIR, other]),
                )
                self.assertEqual(proc.returncode, 0, proc.stderr)
                chained, path = proc.stdout.split()
                self.assertEqual(chained, "yes", f"mode={mode}")
                # The chained module holds the name, as if imported directly.
                self.assertEqual(os.path.dirname(path), other)
        finally:
            shutil.rmtree(other)

    def test_a_failing_chained_sitecustomize_does_not_stop_activation(self):
        other = tempfile.mkdtemp(prefix="dsa-bad-site-")
        try:
            with open(os.path.join(other, "sitecustomize.py"), "w") as f:
                f.write("raise RuntimeError('broken site hook')\n")
            proc, _ = run_script(
                "import sys\nprint(any(type(f).__name__ == '_TorchImportHook' for f in sys.meta_path))\n",
                mode="cached",
                pythonpath=os.pathsep.join([PACKAGE_DIR, other]),
            )
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(proc.stdout.strip(), "True")
            self.assertIn("sitecustomize", proc.stderr)  # Python's own report of the broken hook
        finally:
            shutil.rmtree(other)


if __name__ == "__main__":
    unittest.main()
