#!/usr/bin/env python3
"""One table of requests through the three front ends (CTest): the command line, the Python module
and the WebAssembly module of the browser page all answer through include/gpusim/app.hpp, so each
request must give the same JSON report in all three. The CLI and Python must agree exactly; the
WebAssembly module links another C library, whose last-bit rounding of exp and log may differ, so
its numbers must be within 1e-9 (web/test/page_test.py's comparison). Refusals are compared too:
a request every front end refuses must be refused by all three, naming the same field.
"""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from page_test import compare  # noqa: E402

# Each row: the command, the request (app.hpp's fields), and whether it is refused.
ROWS = [
    ("estimate", {"scenario": "scenarios/gpt2-124m-rtx4090.toml"}),
    ("estimate", {"scenario": "scenarios/llama2-7b-pretrain-a100.toml", "gpu": "h100-sxm5-80gb",
                  "sets": ["training.micro_batch=2"]}),
    ("estimate", {"scenario": "scenarios/llama3-70b-fp8-4xh100-serve.toml"}),
    ("breakeven", {"scenario": "scenarios/breakeven-desktop.toml"}),
    ("roofline", {"gpu": "v100-sxm2-32gb"}),
    ("roofline", {"gpu": "b200", "dtype": "fp4"}),
    ("roofline", {"gpus": ["a100-sxm4-80gb", "h100-sxm5-80gb", "rtx4090"]}),
    ("roofline", {"scenario": "scenarios/gpt2-124m-rtx4090.toml"}),
    ("compare", {"scenario": "scenarios/gpt2-124m-rtx4090.toml", "gpus": ["rtx4090", "a100-sxm4-80gb", "l40s"]}),
    ("plan", {"scenario": "scenarios/llama2-7b-pretrain-a100.toml", "top": 3, "max_gpus": 512}),
    ("plan", {"scenario": "scenarios/llama3-70b-fp8-4xh100-serve.toml", "max_gpus": 4}),
    ("plan", {"scenario": "scenarios/gpt2-124m-8xa100.toml", "gpu": "h100-sxm5-80gb", "top": 3}),
    ("sweep", {"scenario": "scenarios/scaling-llama2-7b.toml",
               "vary": ["training.micro_batch=1,2", "parallelism.zero=0,3", "system.gpus=8,64"]}),
    # GPU what-ifs: the DRAM bandwidth, the SM clock and the PCIe generation.
    ("estimate", {"scenario": "scenarios/llama2-7b-decode-rtx4090.toml",
                  "gpu_variant": {"memory_bandwidth": 2, "clock": 1.1, "pcie_gen": 5}}),
    ("estimate", {"scenario": "scenarios/llama2-7b-full-bf16-4x4090-fsdp.toml", "gpu_variant": {"pcie_gen": 5}}),
    ("breakeven", {"scenario": "scenarios/breakeven-desktop.toml", "gpu_variant": {"clock": 0.8}}),
    ("roofline", {"gpu": "rtx4090", "gpu_variant": {"memory_bandwidth": 1.5}}),
    ("roofline", {"scenario": "scenarios/gpt2-124m-rtx4090.toml", "gpu_variant": {"clock": 1.2}}),
    # Refused requests: a dtype the GPU lacks, an unknown GPU, a what-if out of range.
    ("estimate", {"scenario": "scenarios/gpt2-124m-rtx4090.toml", "gpu_variant": {"memory_bandwidth": 20}}),
    ("roofline", {"gpu": "v100-sxm2-32gb", "dtype": "bf16"}),
    ("estimate", {"scenario": "scenarios/gpt2-124m-rtx4090.toml", "gpu": "no-such-gpu"}),
]


def cli_argv(gpusim, command, r):
    argv = [gpusim, command]
    if command != "roofline" and "scenario" in r:
        argv.append(r["scenario"])
    if command == "roofline":
        if "scenario" in r:
            argv += ["--scenario", r["scenario"]]
        if "dtype" in r:
            argv += ["--dtype", r["dtype"]]
        if "gpus" in r:
            argv += ["--gpus", ",".join(r["gpus"])]
    elif "gpus" in r:
        argv += ["--gpus", ",".join(r["gpus"])]
    if "gpu" in r:
        argv += ["--gpu", r["gpu"]]
    for s in r.get("sets", []):
        argv += ["--set", s]
    for v in r.get("vary", []):
        argv += ["--vary", v]
    if "gpu_variant" in r:
        argv += ["--gpu-variant", ",".join(f"{k}={v}" for k, v in r["gpu_variant"].items())]
    for key in ("objective", "top", "max_gpus"):
        if key in r:
            argv += ["--" + key.replace("_", "-"), str(r[key])]
    return argv + ["--format", "json"]


def typed(text):
    """A command-line value as Python gives it: a number or a boolean as such, else the string."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def python_answer(gpusim, command, r):
    kw = {}
    if "sets" in r:  # "key=value" lines as the module's dict of dotted keys to values
        kw["overrides"] = {k: typed(v) for k, v in (x.split("=", 1) for x in r["sets"])}
    try:
        if command == "estimate":
            return gpusim.estimate(r["scenario"], gpu=r.get("gpu"), gpu_variant=r.get("gpu_variant"), **kw)
        if command == "breakeven":
            return gpusim.breakeven(r["scenario"], gpu=r.get("gpu"), gpu_variant=r.get("gpu_variant"), **kw)
        if command == "roofline":
            return gpusim.roofline(r.get("gpu"), r.get("scenario"), gpus=r.get("gpus"), dtype=r.get("dtype"),
                                   gpu_variant=r.get("gpu_variant"), **kw)
        if command == "compare":
            return gpusim.compare(r["scenario"], r["gpus"], **kw)
        if command == "plan":
            return gpusim.plan(r["scenario"], gpu=r.get("gpu"), top=r.get("top", 10), max_gpus=r.get("max_gpus", 0),
                               **kw)
        if command == "sweep":  # flat rows: compared with the command line's on their fields below
            return gpusim.sweep(r["scenario"],
                                {k: [typed(x) for x in v.split(",")] for k, v in (x.split("=", 1) for x in r["vary"])},
                                **kw)
    except (ValueError, gpusim.InputError) as e:
        # Python names an override as the package takes it, overrides["KEY"] = VALUE; the command
        # line and the page, as the flag: --set KEY=VALUE.
        return {"error": re.sub(r'^overrides\["([^"]*)"\] = ', r"--set \1=", str(e), flags=re.M)}
    raise AssertionError(command)


# The command line's sweep record keys, and the report fields they are (docs/report.md).
SWEEP_KEYS = {"step_time_s": "step.time_s", "tokens_per_s": "throughput.tokens_per_s", "mfu": "utilization.mfu",
              "memory_per_gpu_bytes": "memory.per_gpu_bytes", "fits": "memory.fits",
              "train_time_s": "training.time_s", "cloud_usd": "cost.cloud_usd", "bottleneck": "bottleneck"}


def sweep_as_cli(rows, cli):
    """Python's flat sweep rows in the shape of the command line's JSON records: the axis values,
    the status and, for each record key, the report field it is."""
    out = []
    for record, row in zip(cli, rows):
        mine = {}
        for key in record:
            if key in SWEEP_KEYS or key == "status":
                mine[key] = row.get(SWEEP_KEYS.get(key, key))
            else:  # an axis: its value as given, which the command line prints as text
                mine[key] = str(row.get(key))
        out.append(mine)
    return out if len(rows) == len(cli) else {"error": f"{len(rows)} rows against {len(cli)}"}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gpusim", required=True)
    p.add_argument("--python-module", required=True, help="the folder holding the gpusim package")
    p.add_argument("--page", required=True, help="build-web/page")
    p.add_argument("--root", required=True)
    a = p.parse_args()
    a.gpusim, a.page, a.python_module = (os.path.abspath(x) for x in (a.gpusim, a.page, a.python_module))
    os.chdir(a.root)
    sys.path.insert(0, a.python_module)
    import gpusim  # noqa: E402

    wasm_requests = []
    for command, r in ROWS:
        w = dict(r)
        if "scenario" in r:
            with open(r["scenario"], encoding="utf-8") as f:
                w["scenario"] = {"path": r["scenario"], "text": f.read()}
        wasm_requests.append([command, w])
    node = subprocess.run(["node", os.path.join(os.path.dirname(__file__), "parity_node.js"), os.path.abspath(a.page)],
                          input=json.dumps(wasm_requests), capture_output=True, text=True, check=False)
    if node.returncode != 0:
        sys.exit("the WebAssembly module did not answer: " + node.stderr[-2000:])
    wasm = [json.loads(x) for x in json.loads(node.stdout)]
    problems = []
    for (command, r), w in zip(ROWS, wasm):
        argv = cli_argv(a.gpusim, command, r)
        label = " ".join(argv[1:])
        cli = subprocess.run(argv, capture_output=True, text=True, check=False)
        py = python_answer(gpusim, command, r)
        refused = cli.returncode != 0
        if refused:
            if cli.returncode != 2 or cli.stdout:
                problems.append(f"{label}: the command line exited {cli.returncode}, expected 2 and nothing written")
            if "error" not in py or "error" not in w:
                problems.append(f"{label}: refused by the command line only (Python {'error' in py}, page {'error' in w})")
            elif py["error"].strip() != w["error"].strip():
                problems.append(f"{label}: Python says {py['error']!r}, the page's module {w['error']!r}")
            elif py["error"].split(" ", 1)[-1].strip() not in cli.stderr:
                problems.append(f"{label}: the command line says {cli.stderr!r}, Python {py['error']!r}")
            continue
        expected = json.loads(cli.stdout)
        if command == "sweep" and isinstance(py, list):  # flat rows against the command line's records
            py = sweep_as_cli(py, expected)
        if isinstance(py, dict) and "error" in py:
            problems.append(f"{label}: Python refused it: {py['error']}")
        elif py != expected:
            mine = []
            compare(py, expected, "", mine)
            problems.append(f"{label}: Python differs: {mine[:3] or 'in ways the numbers do not show'}")
        if isinstance(w, dict) and "error" in w:
            problems.append(f"{label}: the page's module refused it: {w['error']}")
        else:
            mine = []
            compare(w, expected, "", mine)
            problems += [f"{label}: WebAssembly: {x}" for x in mine[:5]]
    print(f"{len(ROWS)} requests through the command line, Python and WebAssembly: {len(problems)} differences")
    for x in problems:
        print("  " + x)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
