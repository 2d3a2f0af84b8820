"""The Python module's commands that read files (validate, calibrate, import_model, init) against
the CLI they mirror, and its errors in Python's words. Run by CTest as test_gpusim.py is
(python/CMakeLists.txt)."""

import os
import tempfile
import unittest

import gpusim
from test_gpusim import SOURCE, TRAINING, cli, read


class Files(unittest.TestCase):
    """The commands that read files: validate, calibrate, model import and init."""

    ROWS = os.path.join(SOURCE, "measurements", "clpeak-issues.toml")
    CONFIG = os.path.join(SOURCE, "tests", "data", "hf", "Meta-Llama-3-8B.json")

    def test_validate_is_the_cli_validate_json_and_refuses_what_the_cli_refuses(self):
        self.assertEqual(gpusim.validate(self.ROWS), cli("validate", self.ROWS, "--format", "json"))
        self.assertEqual(gpusim.validate([self.ROWS], role="fit"),
                         cli("validate", self.ROWS, "--role", "fit", "--format", "json"))
        with self.assertRaisesRegex(ValueError, "^role must be check, fit or all"):
            gpusim.validate(self.ROWS, role="checks")
        self.assertEqual(cli("validate", self.ROWS, "--role", "checks", ok=False).returncode, 2)
        with self.assertRaisesRegex(gpusim.InputError, "no check rows"):
            gpusim.validate(self.ROWS, role="check")
        with self.assertRaises(ValueError):
            gpusim.validate([])

    def test_calibrate_gives_the_overlay_files_the_cli_writes(self):
        with tempfile.TemporaryDirectory() as out:
            done = cli("calibrate", self.ROWS, "-o", out, ok=False)
            self.assertEqual(done.returncode, 0, done.stderr)
            written = {os.path.relpath(os.path.join(d, f), out): read(os.path.join(d, f))
                       for d, _, files in os.walk(out) for f in files}
        answer = gpusim.calibrate(self.ROWS)
        self.assertEqual(answer["files"], written)
        self.assertEqual(answer["before"]["all"], gpusim.validate(self.ROWS)["all"])
        self.assertIn("median before", answer["report"])
        self.assertNotIn("overlay written", answer["report"])

    def test_import_model_is_the_text_the_cli_writes(self):
        self.assertEqual(gpusim.import_model(self.CONFIG), cli("model", "import", self.CONFIG, ok=False).stdout)
        with self.assertRaises(gpusim.InputError):
            gpusim.import_model(os.path.join(SOURCE, "tests", "data", "hf", "deepseek-v3-all-dense-layers.json"))

    def test_init_is_the_template_the_cli_prints_and_refuses_another_kind(self):
        for kind in ("training", "serving"):
            self.assertEqual(gpusim.init(kind), cli("init", kind, ok=False).stdout)
        with self.assertRaisesRegex(ValueError, "^kind must be training or serving"):
            gpusim.init("inference")
        self.assertEqual(cli("init", "inference", ok=False).returncode, 2)



class Words(unittest.TestCase):
    def test_an_override_in_an_error_is_named_as_python_passes_it(self):
        with self.assertRaises(gpusim.InputError) as caught:
            gpusim.estimate(TRAINING, overrides={"system.gpus": 0})
        self.assertEqual(caught.exception.file, 'overrides["system.gpus"] = 0')
        self.assertTrue(str(caught.exception).startswith('overrides["system.gpus"] = 0: system.gpus: must be between'))
        self.assertNotIn("--set", str(caught.exception))
        with self.assertRaises(gpusim.InputError) as caught:
            gpusim.estimate(TRAINING, gpu="rtx4900")
        self.assertIn('did you mean "rtx4090"', str(caught.exception))


if __name__ == "__main__":
    unittest.main()
