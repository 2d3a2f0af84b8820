"""compare_systems against the command line's compare --systems, overrides of None against
--unset, and their refusals in Python's words. Run by CTest as test_gpusim.py is
(python/CMakeLists.txt)."""

import os
import unittest

import gpusim
from test_gpusim import SOURCE, cli

LORA = os.path.join(SOURCE, "scenarios", "llama2-13b-lora-which-box.toml")
SERVING = os.path.join(SOURCE, "scenarios", "llama3-8b-serve-2rps.toml")


class Systems(unittest.TestCase):
    """Whole systems for one job, each at its best layout."""

    def test_compare_systems_is_the_cli_json(self):
        systems = ["1xrtx4090", "2xrtx3090", "1xa100-sxm4-80gb"]
        answer = gpusim.compare_systems(LORA, systems)
        self.assertEqual(answer, cli("compare", LORA, "--systems", ",".join(systems), "--format", "json"))
        self.assertEqual(sorted(s["system"] for s in answer["systems"]), sorted(systems))
        self.assertEqual(gpusim.compare_systems(LORA, ",".join(systems)), answer)
        served = gpusim.compare_systems(SERVING, "1xrtx4090,1xl40s", objective="cost")
        self.assertEqual(served, cli("compare", SERVING, "--systems", "1xrtx4090,1xl40s", "--objective", "cost",
                                     "--format", "json"))
        self.assertEqual(served["objective"], "cost")

    def test_compare_systems_refuses_what_the_cli_refuses_in_python_words(self):
        with self.assertRaisesRegex(ValueError, "systems has \"2x\""):
            gpusim.compare_systems(LORA, ["2x"])
        self.assertEqual(cli("compare", LORA, "--systems", "2x", ok=False).returncode, 2)
        with self.assertRaisesRegex(ValueError, "objective must be one of"):
            gpusim.compare_systems(LORA, ["1xrtx4090"], objective="speed")
        with self.assertRaises(TypeError):
            gpusim.compare_systems(LORA, ["1xrtx4090"], objective=1)
        with self.assertRaisesRegex(gpusim.InputError, "cannot run on 1xrtx3060-12gb"):
            gpusim.compare_systems(LORA, ["1xrtx3060-12gb"])


class Unset(unittest.TestCase):
    """An override of None takes the key out of the scenario, as --unset does."""

    def test_none_is_the_cli_unset(self):
        removed = gpusim.estimate(SERVING, overrides={"slo": None})
        self.assertEqual(removed, cli("estimate", SERVING, "--unset", "slo", "--format", "json"))
        self.assertIsNone(removed["slo"]["met"])
        self.assertEqual(gpusim.estimate(SERVING, slo=None), removed)
        self.assertEqual(gpusim.compare_systems(SERVING, ["1xrtx4090"], slo=None),
                         cli("compare", SERVING, "--systems", "1xrtx4090", "--unset", "slo", "--format", "json"))

    def test_an_unset_of_a_key_the_file_lacks_is_an_input_error_in_python_words(self):
        with self.assertRaisesRegex(gpusim.InputError, r'overrides\["slo.ttfx"\] = None'):
            gpusim.estimate(SERVING, overrides={"slo.ttfx": None})
        self.assertEqual(cli("estimate", SERVING, "--unset", "slo.ttfx", ok=False).returncode, 2)


if __name__ == "__main__":
    unittest.main()
