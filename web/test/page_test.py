#!/usr/bin/env python3
"""The page in a real browser (CTest; web/test/README.md).

Loads build-web/page/index.html#selftest in headless Chromium from file:// (the page runs every
shipped scenario through its own inputs, then drags the batch, power-limit and utilization
sliders and picks another GPU, then moves the GPU's memory bandwidth, clock and PCIe generation
(compared with the command line given the patch the page shows, under --specs), and writes the estimate it showed for each into #selftest-result),
and pastes a scenario with a value out of range, then runs `gpusim estimate` on the same scenario
with the same --gpu and --set options and asserts
that the JSON reports are equal: the same keys and strings, and numbers within 1e-9 of each other
(the page's module links another C library, whose last-bit rounding of exp and log may differ),
that each figure the page shows is the report's, and that the refused scenario shows the command
line's message (file:line:col, key, value, range) where the command line exits 2. Writes a
screenshot of the loaded page
and the results to --out.
"""
import argparse
import html
import json
import math
import os
import re
import subprocess
import sys

REL_TOL = 1e-9


def chromium(args, browser, url, extra):
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=120000", *extra, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)


def compare(a, b, path, problems):
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            problems.append(f"{path}: keys differ: {sorted(set(a) ^ set(b))}")
            return
        for k in a:
            compare(a[k], b[k], f"{path}.{k}" if path else k, problems)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            problems.append(f"{path}: {len(a)} entries against {len(b)}")
            return
        for i, (x, y) in enumerate(zip(a, b)):
            compare(x, y, f"{path}[{i}]", problems)
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        if not math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-300):
            problems.append(f"{path}: page {a!r}, command line {b!r}")
    elif isinstance(a, str) and isinstance(b, str) and a != b:
        # Sentences carry numbers printed to a few digits: equal once those are compared loosely.
        na, nb = re.split(r"-?\d[\d.,e+-]*", a), re.split(r"-?\d[\d.,e+-]*", b)
        if na != nb:
            problems.append(f"{path}: page {a!r}, command line {b!r}")
    elif type(a) is not type(b) or (not isinstance(a, (str, int, float)) and a != b):
        problems.append(f"{path}: page {a!r}, command line {b!r}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--chromium", required=True)
    p.add_argument("--page", required=True, help="the built page's folder (build-web/page)")
    p.add_argument("--gpusim", required=True)
    p.add_argument("--root", required=True, help="the source root (scenarios/)")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    a.gpusim = os.path.abspath(a.gpusim)
    os.makedirs(a.out, exist_ok=True)
    index = os.path.join(os.path.abspath(a.page), "index.html")
    if not os.path.exists(os.path.join(a.page, "gpusim.js")):
        sys.exit(f"{a.page}/gpusim.js is missing: build the page first (scripts/build-web)")
    run = chromium(a, a.chromium, "file://" + index + "#selftest", ["--dump-dom"])
    m = re.search(r'<pre id="selftest-result"[^>]*>(.*?)</pre>', run.stdout, re.S)
    if not m or not m.group(1).strip():
        sys.exit("the page wrote no self-test result; Chromium said:\n" + run.stderr[-3000:])
    runs = json.loads(html.unescape(m.group(1)))
    problems = []
    for r in runs:
        if "pasted" in r:  # refused input: the page shows the command line's message, exit 2
            with open(os.path.join(a.out, "pasted.toml"), "w", encoding="utf-8") as f:
                f.write(r["pasted"])
            cli = subprocess.run([a.gpusim, "estimate", "pasted.toml", "--format", "json"], cwd=a.out,
                                 capture_output=True, text=True, check=False)
            page = json.loads(r["estimate"])
            if cli.returncode != 2 or cli.stdout:
                problems.append(f"pasted scenario: the command line exited {cli.returncode} (expected 2, nothing written)")
            elif page.get("error", "").strip() != cli.stderr.strip():
                problems.append(f"pasted scenario: the page says {page.get('error')!r}, the command line {cli.stderr!r}")
            elif cli.stderr.strip() not in r["shown_error"]:
                problems.append(f"pasted scenario: the page shows {r['shown_error']!r}")
            continue
        cmd = [a.gpusim, "estimate", os.path.join(a.root, "scenarios", r["scenario"] + ".toml"), "--format", "json"]
        if r["gpu"]:
            cmd += ["--gpu", r["gpu"]]
        for s in r["sets"]:
            cmd += ["--set", s]
        if r.get("patch"):  # a GPU what-if: the patch the page shows, under --specs
            folder = os.path.join(os.path.abspath(a.out), "what-if")
            os.makedirs(os.path.join(folder, "gpus"), exist_ok=True)
            with open(os.path.join(folder, "gpus", r["patch"]["gpu"] + ".toml"), "w", encoding="utf-8") as f:
                f.write(r["patch"]["text"])
            cmd += ["--specs", folder]
        cli = subprocess.run(cmd, capture_output=True, text=True, check=False)
        label = " ".join(cmd[1:])
        page = json.loads(r["estimate"])
        if "error" in page:
            problems.append(f"{label}: the page refused it: {page['error']}")
            continue
        if cli.returncode != 0:
            problems.append(f"{label}: the command line refused it: {cli.stderr}")
            continue
        mine = []
        compare(page, json.loads(cli.stdout), "", mine)
        problems += [f"{label}: {x}" for x in mine]
        expected = json.loads(cli.stdout)
        for key, shown in r["shown"]:
            value = expected
            for part in key.split("."):
                value = value.get(part) if isinstance(value, dict) else None
            if shown in ("null", "undefined") and value is None:
                continue
            if value is None or not math.isclose(float(shown), float(value), rel_tol=REL_TOL):
                problems.append(f"{label}: the page shows {key} = {shown}, the command line {value}")
    with open(os.path.join(a.out, "selftest.json"), "w", encoding="utf-8") as f:
        json.dump(runs, f, indent=1)
    shot = chromium(a, a.chromium, "file://" + index,
                    ["--screenshot=" + os.path.join(os.path.abspath(a.out), "page.png"), "--window-size=1400,1700"])
    if not os.path.exists(os.path.join(a.out, "page.png")):
        problems.append("no screenshot: " + shot.stderr[-2000:])
    print(f"{len(runs)} page runs against the command line, {len(problems)} differences; "
          f"screenshot {os.path.join(a.out, 'page.png')}")
    for x in problems[:50]:
        print("  " + x)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
