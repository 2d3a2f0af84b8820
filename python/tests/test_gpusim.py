"""The Python module gpusim (docs/python.md) against the CLI it mirrors.

Run by CTest (python/CMakeLists.txt), one entry per test method, with PYTHONPATH at the built
package, GPUSIM_SOURCE_DIR at the repository and GPUSIM_BINARY at the gpusim executable.
Expected values are derived: from the CLI's JSON for the same question, from the scenario files,
or from another call of the module; none is a stored number.
"""

import csv
import io
import json
import math
import os
import pickle
import re
import subprocess
import sys
import tempfile
import unittest

import gpusim

SOURCE = os.environ.get("GPUSIM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
BINARY = os.environ.get("GPUSIM_BINARY", os.path.join(SOURCE, "build", "gpusim"))
TRAINING = os.path.join(SOURCE, "scenarios", "gpt2-124m-rtx4090.toml")
SERVING = os.path.join(SOURCE, "scenarios", "llama3-70b-fp8-4xh100-serve.toml")


def cli(*args, ok=True):
    """Runs the gpusim executable; returns its completed process (stdout parsed when ok)."""
    env = dict(os.environ, GPUSIM_SPECS="")
    done = subprocess.run([BINARY, *args], capture_output=True, text=True, env=env, check=False)
    if ok:
        if done.returncode != 0:
            raise AssertionError(f"gpusim {' '.join(args)} failed ({done.returncode}): {done.stderr}")
        return json.loads(done.stdout)
    return done


def write_temp(test, text, suffix=".toml"):
    """A temporary file holding `text`, removed when `test` ends."""
    fd, path = tempfile.mkstemp(suffix=suffix)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    test.addCleanup(os.remove, path)
    return path


def read(path):
    with open(path) as f:
        return f.read()


class Estimate(unittest.TestCase):
    def test_estimate_of_a_training_file_is_the_cli_json_report(self):
        report = gpusim.estimate(TRAINING)
        expected = cli("estimate", TRAINING, "--format", "json")
        self.assertEqual(report["step"]["time_s"], expected["step"]["time_s"])
        self.assertEqual(report, expected)

    def test_estimate_of_a_serving_file_is_the_cli_json_report(self):
        report = gpusim.estimate(SERVING)
        expected = cli("estimate", SERVING, "--format", "json")
        self.assertEqual(report, expected)
        self.assertIsNotNone(report["inference"]["time_to_first_token_s"])

    def test_overrides_are_the_cli_set_options_with_python_values(self):
        report = gpusim.estimate(TRAINING, overrides={"training.micro_batch": 8, "training.precision": "fp16"})
        expected = cli("estimate", TRAINING, "--set", "training.micro_batch=8", "--set", "training.precision=fp16",
                       "--format", "json")
        self.assertEqual(report, expected)
        self.assertEqual(report["utilization"]["dtype"], "fp16")

    def test_an_override_of_system_gpus_sets_system_gpus_in_the_report(self):
        self.assertEqual(gpusim.estimate(TRAINING)["system"]["gpus"], 1)
        self.assertEqual(gpusim.estimate(TRAINING, overrides={"system.gpus": 2})["system"]["gpus"], 2)

    def test_keyword_overrides_with_double_underscores_are_dotted_keys(self):
        self.assertEqual(gpusim.estimate(TRAINING, system__gpus=2, training__micro_batch=8),
                         gpusim.estimate(TRAINING, overrides={"system.gpus": 2, "training.micro_batch": 8}))

    def test_a_quantity_override_is_a_string_with_its_unit(self):
        report = gpusim.estimate(SERVING, slo__ttft="150 ms")
        self.assertAlmostEqual(report["slo"]["ttft_limit_s"], 0.150)

    def test_the_gpu_argument_is_the_cli_gpu_option(self):
        report = gpusim.estimate(TRAINING, gpu="rtx3090")
        self.assertEqual(report, cli("estimate", TRAINING, "--gpu", "rtx3090", "--format", "json"))
        self.assertEqual(report["system"]["gpu"], "rtx3090")

    @unittest.skipIf(sys.version_info < (3, 11), "tomllib is Python 3.11+")
    def test_a_dict_scenario_equal_to_a_file_gives_the_files_report(self):
        import tomllib

        for path in (TRAINING, SERVING):
            with open(path, "rb") as f:
                tables = tomllib.load(f)
            with self.subTest(path=path):
                self.assertEqual(gpusim.estimate(tables), gpusim.estimate(path))

    @unittest.skipIf(sys.version_info < (3, 11), "tomllib is Python 3.11+")
    def test_a_dict_scenario_keeps_strings_with_quotes_backslashes_and_newlines(self):
        import tomllib

        with open(TRAINING, "rb") as f:
            tables = tomllib.load(f)
        tables["name"] = 'GPT-2 "small"\\ on\na 4090 \u00e9\t\x01'
        self.assertEqual(gpusim.estimate(tables)["scenario"], tables["name"])

    @unittest.skipIf(sys.version_info < (3, 11), "tomllib is Python 3.11+")
    def test_the_toml_written_from_a_dict_reads_back_as_the_same_dict(self):
        import tomllib

        tables = {
            "name": "x",
            "ratio": 1e-05,
            "big": 1e300,
            "limit": float("inf"),
            "system": {"gpu": "rtx4090", "only": {"sub": {"flag": False}}, "empty": {}},
            "list": [1, 2.5, True, "s", [1, 2]],
            "runs": [{"a": 1}, {"a": 2, "deeper": {"b": "c"}, "more": [{"d": 1}]}],
            "odd key": {"dotted.key": 1},
        }
        self.assertEqual(tomllib.loads(gpusim._toml.toml_document(tables)), tables)

    def test_a_dict_scenario_with_a_problem_names_the_dict_and_the_key(self):
        with self.assertRaises(gpusim.InputError) as caught:
            gpusim.estimate({"name": "x", "system": {"gpu": "rtx4090", "gpus": 1}})
        self.assertEqual(caught.exception.file, "<dict>")
        self.assertIn("model", [d["key"] for d in caught.exception.diagnostics])

    def test_numpy_values_are_taken_as_the_python_values_they_hold(self):
        try:
            import numpy
        except ImportError:
            self.skipTest("numpy is not installed")
        self.assertEqual(gpusim.estimate(TRAINING, system__gpus=numpy.int64(2), cost__utilization=numpy.float64(0.5)),
                         gpusim.estimate(TRAINING, system__gpus=2, cost__utilization=0.5))
        rows = gpusim.sweep(TRAINING, {"system.gpus": numpy.array([1, 2])})
        self.assertEqual([r["step.time_s"] for r in rows],
                         [r["step.time_s"] for r in gpusim.sweep(TRAINING, {"system.gpus": [1, 2]})])

    def test_a_value_without_a_toml_form_raises_type_error(self):
        with self.assertRaises(TypeError):
            gpusim.estimate(TRAINING, overrides={"system.gpus": object()})
        with self.assertRaises(TypeError):
            gpusim.estimate(42)


class Errors(unittest.TestCase):
    def test_a_misspelled_key_raises_input_error_with_its_file_line_column_and_key(self):
        lines = read(TRAINING).splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith("micro_batch"))
        lines[at] = "  micro_bach = 16"
        path = write_temp(self, "\n".join(lines) + "\n")
        with self.assertRaises(gpusim.InputError) as caught:
            gpusim.estimate(path)
        err = caught.exception
        self.assertIsInstance(err, ValueError)
        self.assertEqual((err.file, err.line, err.column), (path, at + 1, 3))
        self.assertEqual(err.key, "training.micro_bach")
        self.assertEqual(err.diagnostics[0]["line"], at + 1)
        self.assertIn("micro_batch", err.message)  # the key it was probably meant to be

    def test_input_error_text_is_what_the_cli_prints(self):
        path = write_temp(self, read(TRAINING).replace("gpus = 1", "gpus = 0").replace("micro_batch = 16", "mb = 16"))
        with self.assertRaises(gpusim.InputError) as caught:
            gpusim.estimate(path)
        done = cli("estimate", path, ok=False)
        self.assertEqual(done.returncode, 2)
        self.assertEqual(str(caught.exception), done.stderr.rstrip("\n"))
        self.assertEqual(len(caught.exception.diagnostics), len(done.stderr.splitlines()))

    def test_malformed_toml_raises_input_error_at_its_position(self):
        path = write_temp(self, 'name = "x"\n\n[system]\ngpus = = 1\n')
        with self.assertRaises(gpusim.InputError) as caught:
            gpusim.estimate(path)
        self.assertEqual((caught.exception.file, caught.exception.line), (path, 4))
        self.assertGreater(caught.exception.column, 0)

    def test_a_missing_scenario_file_raises_input_error_naming_it(self):
        path = os.path.join(tempfile.gettempdir(), "gpusim-no-such-scenario.toml")
        with self.assertRaises(gpusim.InputError) as caught:
            gpusim.estimate(path)
        self.assertEqual(caught.exception.file, path)
        self.assertIn("cannot read", caught.exception.message)

    def test_a_bad_override_value_raises_input_error_naming_its_key(self):
        with self.assertRaises(gpusim.InputError) as caught:
            gpusim.estimate(TRAINING, system__gpus="many")
        self.assertEqual(caught.exception.key, "system.gpus")

    def test_an_unknown_gpu_id_raises_input_error(self):
        for call in (lambda: gpusim.estimate(TRAINING, gpu="no-such-gpu"), lambda: gpusim.gpu("no-such-gpu"),
                     lambda: gpusim.compare(TRAINING, ["rtx4090", "no-such-gpu"])):
            with self.assertRaises(gpusim.InputError):
                call()

    def test_input_error_pickles_with_its_diagnostics(self):
        with self.assertRaises(gpusim.InputError) as caught:
            gpusim.estimate(TRAINING, gpu="no-such-gpu")
        copy = pickle.loads(pickle.dumps(caught.exception))
        self.assertEqual((str(copy), copy.diagnostics, copy.key),
                         (str(caught.exception), caught.exception.diagnostics, caught.exception.key))


class Search(unittest.TestCase):
    def test_sweep_returns_one_row_per_point_of_the_product_of_the_axes_first_axis_fastest(self):
        vary = {"system.gpus": [1, 2], "training.micro_batch": [8, 16, 32]}
        rows = gpusim.sweep(TRAINING, vary)
        self.assertEqual([(r["system.gpus"], r["training.micro_batch"]) for r in rows],
                         [(g, m) for m in vary["training.micro_batch"] for g in vary["system.gpus"]])
        self.assertTrue(all(r["status"] == "ok" for r in rows))

    def test_sweep_rows_are_flat_report_fields_that_agree_with_estimate(self):
        rows = gpusim.sweep(TRAINING, {"training.micro_batch": [8, 16]}, system__gpus=2)
        for row in rows:
            report = gpusim.estimate(TRAINING, system__gpus=2, training__micro_batch=row["training.micro_batch"])
            for section, key in (("step", "time_s"), ("memory", "per_gpu_bytes"), ("system", "gpus")):
                self.assertEqual(row[f"{section}.{key}"], report[section][key])  # both exact (docs/report.md)
            self.assertEqual(row["bottleneck"], report["bottleneck"])
            self.assertIsNone(row["inference.time_to_first_token_s"])
            self.assertTrue(all(not isinstance(v, (dict, list)) for v in row.values()))

    def test_a_sweep_point_that_cannot_run_says_why_in_its_status(self):
        rows = gpusim.sweep(TRAINING, {"training.micro_batch": [16, 7]})
        self.assertEqual(rows[0]["status"], "ok")
        self.assertNotEqual(rows[1]["status"], "ok")
        self.assertIn("multiple", rows[1]["status"])
        self.assertNotIn("step.time_s", rows[1])

    def test_a_serving_sweep_has_the_inference_metrics(self):
        rows = gpusim.sweep(SERVING, {"serving.rate": ["2 req/s", "4 req/s"]})
        self.assertEqual([r["serving.rate"] for r in rows], ["2 req/s", "4 req/s"])
        for row in rows:
            self.assertGreater(row["inference.time_to_first_token_s"], 0)
            self.assertIsNone(row["training.time_s"])

    def test_sweep_rows_have_the_columns_and_values_of_the_cli_sweep_csv_with_axes_by_their_keys(self):
        rows = gpusim.sweep(TRAINING, {"system.gpus": [1, 2], "training.micro_batch": [16, 7]})
        done = cli("sweep", TRAINING, "--vary", "system.gpus=1,2", "--vary", "training.micro_batch=16,7",
                   "--format", "csv", ok=False)
        self.assertEqual(done.returncode, 4, done.stderr)  # micro_batch 7 cannot run: every row written, exit 4
        header, *records = list(csv.reader(io.StringIO(done.stdout)))
        self.assertEqual(len(records), len(rows))
        # "vary.system.gpus" is the row's "system.gpus"; the report's own "system.gpus" column is the same number.
        keys = [k[len("vary."):] if k.startswith("vary.") else k for k in header]
        columns = list(dict.fromkeys(keys))
        for row, record in zip(rows, records):
            if row["status"] != "ok":  # the CSV has every column, empty; the row only what it knows
                self.assertEqual(list(row), columns[:len(row)])
                self.assertEqual(record[len(row) - 1], row["status"])
                self.assertTrue(all(text == "" for text in record[len(row):]))
                continue
            self.assertEqual(list(row), columns)
            for key, text in zip(keys, record):
                value = row[key]
                with self.subTest(key=key):
                    if value is None:
                        self.assertEqual(text, "")
                    elif isinstance(value, bool):
                        self.assertEqual(text, "true" if value else "false")
                    elif isinstance(value, (int, float)):
                        self.assertEqual(float(text), value)
                    else:
                        self.assertEqual(text, value)

    def test_compare_returns_one_row_per_gpu_as_the_cli_does(self):
        gpus = ["rtx4090", "rtx3090", "a100-sxm4-80gb"]
        rows = gpusim.compare(TRAINING, gpus)
        self.assertEqual(sorted(r["gpu"] for r in rows), sorted(gpus))
        self.assertEqual(rows, cli("compare", TRAINING, "--gpus", ",".join(gpus), "--format", "json"))
        self.assertEqual(gpusim.compare(TRAINING, ",".join(gpus)), rows)

    def test_plan_of_a_training_scenario_returns_rows_best_first(self):
        result = gpusim.plan(TRAINING, top=3, system__gpus=2)
        expected = cli("plan", TRAINING, "--top", "3", "--set", "system.gpus=2", "--format", "json")
        self.assertEqual(result, expected)  # the report holds no wall time: the same bytes every run
        times = [row["train_time_s"] for row in result["best"]]
        self.assertTrue(0 < len(times) <= 3)
        self.assertEqual(times, sorted(times))

    def test_plan_of_a_serving_scenario_returns_deployments(self):
        result = gpusim.plan(SERVING, top=2, formats=["fp8"])
        self.assertIn("frontier", result)
        self.assertLessEqual(len(result["best"]), 2)
        self.assertTrue(all(row["weight_format"] == "fp8" for row in result["best"] + result["frontier"]))

    def test_plan_rejects_a_bad_objective_or_formats_for_training_with_value_error(self):
        with self.assertRaises(ValueError):
            gpusim.plan(TRAINING, objective="speed")
        with self.assertRaises(ValueError):
            gpusim.plan(TRAINING, formats="fp8")
        with self.assertRaises(ValueError):
            gpusim.plan(TRAINING, top=0)


class Shards(unittest.TestCase):
    VARY = {"system.gpus": [1, 2, 4], "training.micro_batch": [8, 16, 7]}

    def test_the_shards_of_a_sweep_interleaved_are_the_whole_sweep(self):
        whole = gpusim.sweep(TRAINING, self.VARY)
        for count in (1, 2, 4, 11):
            parts = [gpusim.sweep(TRAINING, self.VARY, shard=(i, count)) for i in range(count)]
            self.assertEqual(sum(len(p) for p in parts), len(whole))
            for i, part in enumerate(parts):
                self.assertEqual(part, whole[i::count])  # shard I holds points I, I + N, ...

    def test_a_shard_is_a_pair_with_its_index_below_its_count(self):
        for bad in ((2, 2), (-1, 2), (0, 0)):
            with self.assertRaises(ValueError):
                gpusim.sweep(TRAINING, self.VARY, shard=bad)
        for bad in ("1/2", 3, (0, 1, 2), (0.0, 2)):
            with self.assertRaises(TypeError):
                gpusim.sweep(TRAINING, self.VARY, shard=bad)

    def test_plan_many_answers_each_question_as_plan_does_in_order(self):
        answers = gpusim.plan_many([TRAINING, (TRAINING, {"top": 2, "system__gpus": 2})], top=3)
        self.assertEqual(answers, [gpusim.plan(TRAINING, top=3), gpusim.plan(TRAINING, top=2, system__gpus=2)])

    def test_plan_many_checks_every_question_before_answering_any(self):
        with self.assertRaises(ValueError):
            gpusim.plan_many([TRAINING, (TRAINING, {"objective": "speed"})])
        with self.assertRaises(TypeError):
            gpusim.plan_many([(TRAINING, 3)])


def local_cluster():
    """A dask.distributed LocalCluster of two worker processes and its client (python3-distributed)."""
    from dask.distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    return cluster, Client(cluster)


class Dask(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster, cls.client = local_cluster()

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.cluster.close()

    def test_a_sweep_on_a_dask_cluster_equals_the_sweep_in_process(self):
        vary = {"system.gpus": [1, 2, 4], "training.micro_batch": [8, 16, 7]}
        whole = gpusim.sweep(TRAINING, vary)
        self.assertEqual(gpusim.sweep(TRAINING, vary, client=self.client), whole)
        self.assertEqual(gpusim.sweep(TRAINING, vary, client=self.client, shards=5), whole)
        # A dict scenario travels with the work.
        with open(TRAINING, encoding="utf-8") as f:
            text = f.read()
        table = gpusim_tables(text)
        self.assertEqual(gpusim.sweep(table, vary, client=self.client), gpusim.sweep(table, vary))

    def test_plan_many_on_a_dask_cluster_equals_the_answers_in_process(self):
        questions = [TRAINING, (TRAINING, {"system__gpus": 2}), (SERVING, {"formats": ["fp8"], "top": 2})]
        self.assertEqual(gpusim.plan_many(questions, client=self.client, top=3),
                         gpusim.plan_many(questions, top=3))

    def test_an_input_error_on_a_worker_reaches_the_caller_as_input_error(self):
        with self.assertRaises(gpusim.InputError) as caught:
            gpusim.plan_many([TRAINING, (TRAINING, {"training__micro_batch": 7})], client=self.client)
        self.assertIn("micro_batch", str(caught.exception))
        with self.assertRaises(ValueError):
            gpusim.sweep(TRAINING, {"system.gpus": [1]}, client=self.client, shard=(0, 1))


def gpusim_tables(text):
    """A scenario file's tables as a dict (Python 3.11's tomllib), for the dict form of a scenario."""
    import tomllib
    return tomllib.loads(text)


class Catalog(unittest.TestCase):
    def test_roofline_is_the_cli_roofline_json_with_and_without_a_scenario(self):
        self.assertEqual(gpusim.roofline("h100-sxm5-80gb", dtype="fp8"),
                         cli("roofline", "--gpu", "h100-sxm5-80gb", "--dtype", "fp8", "--format", "json"))
        self.assertEqual(gpusim.roofline(scenario=TRAINING), cli("roofline", TRAINING, "--format", "json"))

    def test_a_roofline_request_gets_the_same_answer_or_refusal_from_python_as_from_the_cli(self):
        # One function serves both: a GPU without bf16 highlights fp16, fp4 where the GPU has it,
        # several GPUs as a list, a scenario on another GPU.
        answered = [
            ({"gpu": "v100-sxm2-32gb"}, ["--gpu", "v100-sxm2-32gb"]),
            ({"gpu": "b200", "dtype": "fp4"}, ["--gpu", "b200", "--dtype", "fp4"]),
            ({"gpus": ["rtx4090", "v100-sxm2-32gb"]}, ["--gpus", "rtx4090,v100-sxm2-32gb"]),
            ({"scenario": TRAINING, "gpu": "a100-sxm4-80gb"}, [TRAINING, "--gpu", "a100-sxm4-80gb"]),
        ]
        for kwargs, args in answered:
            with self.subTest(args=args):
                self.assertEqual(gpusim.roofline(**kwargs), cli("roofline", *args, "--format", "json"))
        refused = [
            ({"gpu": "t4", "dtype": "bf16"}, ["--gpu", "t4", "--dtype", "bf16"], "has no bf16 support"),
            ({"gpu": "h100-sxm5-80gb", "dtype": "fp4"}, ["--gpu", "h100-sxm5-80gb", "--dtype", "fp4"],
             "has no fp4 support"),
            ({"gpu": "h100-sxm5-80gb", "dtype": "int4"}, ["--gpu", "h100-sxm5-80gb", "--dtype", "int4"],
             "dtype must be one of"),
            ({}, [], "needs a GPU, several GPUs or a scenario"),
            ({"gpus": ["rtx4090"], "scenario": TRAINING}, ["--gpus", "rtx4090", TRAINING], "draws roofs only"),
            ({"gpu": "rtx4090", "overrides": {"system.gpus": 2}}, ["--gpu", "rtx4090", "--set", "system.gpus=2"],
             "apply to a scenario; none was given"),
        ]
        for kwargs, args, words in refused:
            with self.subTest(args=args):
                with self.assertRaises(ValueError) as raised:
                    gpusim.roofline(**kwargs)
                self.assertIn(words, str(raised.exception))
                done = cli("roofline", *args, ok=False)
                self.assertEqual(done.returncode, 2)
                self.assertIn(words, done.stderr)

    def test_a_plan_request_gets_the_same_answer_or_refusal_from_python_as_from_the_cli(self):
        self.assertEqual(gpusim.plan(TRAINING, top=3), cli("plan", TRAINING, "--top", "3", "--format", "json"))
        serving = os.path.join(SOURCE, "scenarios", "llama3-70b-fp8-4xh100-serve.toml")
        self.assertEqual(gpusim.plan(serving, formats=["fp8"], max_gpus=4),
                         cli("plan", serving, "--formats", "fp8", "--max-gpus", "4", "--format", "json"))
        refused = [
            ({"objective": "speed"}, ["--objective", "speed"], "objective must be one of"),
            ({"top": 0}, ["--top", "0"], "top must be between 1 and 1000"),
            ({"max_gpus": -1}, ["--max-gpus", "-1"], "must be between 0 and 100000, got -1"),
            ({"formats": ["fp8"]}, ["--formats", "fp8"], "formats apply to serving scenarios; this scenario trains"),
        ]
        for kwargs, args, words in refused:
            with self.subTest(args=args):
                with self.assertRaises(ValueError) as raised:
                    gpusim.plan(TRAINING, **kwargs)
                self.assertIn(words, str(raised.exception))
                done = cli("plan", TRAINING, *args, ok=False)
                self.assertEqual(done.returncode, 2)
                self.assertIn(words, done.stderr)

    def test_a_compare_request_gets_the_same_answer_or_refusal_from_python_as_from_the_cli(self):
        gpus = ["rtx4090", "a100-sxm4-80gb", "v100-sxm2-32gb"]
        self.assertEqual(gpusim.compare(TRAINING, gpus),
                         cli("compare", TRAINING, "--gpus", ",".join(gpus), "--format", "json"))
        # A job that runs on none of them is no comparison: refused by both, with each GPU's reason.
        fp8 = ["--set", 'training.precision="fp8"']
        with self.assertRaises(gpusim.InputError) as raised:
            gpusim.compare(TRAINING, ["v100-sxm2-32gb", "a100-sxm4-80gb"], training__precision="fp8")
        done = cli("compare", TRAINING, *fp8, "--gpus", "v100-sxm2-32gb,a100-sxm4-80gb", ok=False)
        self.assertEqual(done.returncode, 2)
        for gpu in ("v100-sxm2-32gb", "a100-sxm4-80gb"):
            self.assertIn("cannot run on " + gpu + ": training.precision", str(raised.exception))
            self.assertIn("cannot run on " + gpu + ": training.precision", done.stderr)
        with self.assertRaises(ValueError) as raised:
            gpusim.compare(TRAINING, [])
        self.assertIn("gpus names no GPU id", str(raised.exception))

    def test_breakeven_is_the_cli_breakeven_json(self):
        self.assertEqual(gpusim.breakeven(TRAINING), cli("breakeven", TRAINING, "--format", "json"))

    def test_specs_lists_each_kind_and_one_kind_alone(self):
        everything = gpusim.specs()
        self.assertEqual(set(everything), {"gpus", "links", "models", "arch", "runtimes", "comm"})
        self.assertEqual(everything["gpus"], gpusim.specs("gpus"))
        shipped = sorted(f[:-5] for f in os.listdir(os.path.join(SOURCE, "specs", "gpus")) if f.endswith(".toml"))
        self.assertEqual(sorted(everything["gpus"]), shipped)
        with self.assertRaises(ValueError):
            gpusim.specs("gpu")

    def test_gpu_figures_are_those_of_a_scenario_on_that_gpu(self):
        g = gpusim.gpu("rtx4090")
        report = gpusim.estimate(TRAINING)
        self.assertEqual(g["id"], report["system"]["gpu"])
        self.assertEqual(g["name"], report["system"]["gpu_name"])
        self.assertTrue(math.isclose(g["peak_flops"]["bf16"] / 1e12, report["utilization"]["peak_tflops_per_gpu"],
                                     rel_tol=1e-12))
        self.assertEqual(g["memory_bytes"], report["memory"]["capacity_bytes"])

    @unittest.skipIf(sys.version_info < (3, 11), "tomllib is Python 3.11+")
    def test_gpu_peaks_are_the_dtypes_of_its_spec_file(self):
        import tomllib

        with open(os.path.join(SOURCE, "specs", "gpus", "rtx4090.toml"), "rb") as f:
            spec = tomllib.load(f)
        self.assertEqual(set(gpusim.gpu("rtx4090")["peak_flops"]), set(spec["compute"]))

    def test_extra_spec_directories_add_gpus(self):
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "gpus"))
            with open(os.path.join(d, "gpus", "rtx4090-48gb.toml"), "w") as f:
                f.write('base = "rtx4090"\nname = "RTX 4090 48GB"\n\n[memory]\ncapacity = "48 GiB"\n')
            self.assertIn("rtx4090-48gb", gpusim.specs("gpus", specs=d))
            self.assertNotIn("rtx4090-48gb", gpusim.specs("gpus"))
            self.assertEqual(gpusim.gpu("rtx4090-48gb", specs=[d])["memory_bytes"], 48 * 2**30)
            report = gpusim.estimate(TRAINING, gpu="rtx4090-48gb", specs=[d])
            self.assertEqual(report["memory"]["capacity_bytes"], 48 * 2**30)

    def test_version_is_the_cmake_project_version(self):
        cmake = read(os.path.join(SOURCE, "CMakeLists.txt"))
        self.assertEqual(gpusim.__version__, re.search(r"project\(gpusim VERSION ([0-9.]+)", cmake).group(1))



if __name__ == "__main__":
    unittest.main()
