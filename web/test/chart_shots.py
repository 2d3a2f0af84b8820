#!/usr/bin/env python3
"""Screenshots of the charts gpusim draws (CTest; kept as test artifacts).

Runs the command line on shipped scenarios with --svg (roofline, plan, serving plan, sweep with a
point that cannot run, compare over four GPUs, break-even) into --out, then loads each SVG in
headless Chromium from file:// at its own size and writes a PNG beside it. Fails (exit 1) when an
SVG or a PNG is missing or empty. The same script run with an older gpusim into another folder
gives pictures to compare side by side.
"""
import argparse
import os
import re
import subprocess
import sys

# (file stem, gpusim arguments); the scenario paths are relative to --root.
CHARTS = [
    ("roofline", ["roofline", "scenarios/llama3-8b-8xh100.toml"]),
    ("roofline-4090", ["roofline", "scenarios/gpt2-124m-rtx4090.toml"]),
    ("plan", ["plan", "scenarios/llama2-13b-8xa100.toml"]),
    ("plan-serving", ["plan", "scenarios/llama3-70b-fp8-4xh100-serve.toml"]),
    ("sweep", ["sweep", "scenarios/gpt2-124m-rtx4090.toml", "--vary", "system.gpus=1,2,4,8",
               "--vary", "training.micro_batch=4,16,512", "--metric", "step.time_s", "-o", os.devnull]),
    ("compare", ["compare", "scenarios/llama2-13b-8xa100.toml", "--gpus",
                 "a100-sxm4-80gb,h100-sxm5-80gb,rtx4090,l40s", "--baseline", "a100-sxm4-80gb"]),
    ("breakeven", ["breakeven", "scenarios/breakeven-desktop.toml"]),
]


def size_of(svg_path):
    with open(svg_path, encoding="utf-8") as f:
        head = f.read(400)
    m = re.search(r'width="([0-9.]+)" height="([0-9.]+)"', head)
    return (int(float(m.group(1))), int(float(m.group(2)))) if m else (800, 600)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--gpusim", required=True)
    p.add_argument("--chromium", required=True)
    p.add_argument("--root", required=True, help="the source tree (scenarios/)")
    p.add_argument("--out", required=True, help="folder for the SVGs and PNGs")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    problems = []
    for stem, args in CHARTS:
        svg = os.path.abspath(os.path.join(a.out, stem + ".svg"))
        png = os.path.abspath(os.path.join(a.out, stem + ".png"))
        for old in (svg, png):
            if os.path.exists(old):
                os.remove(old)
        cmd = [a.gpusim] + [os.path.join(a.root, x) if x.startswith("scenarios/") else x for x in args]
        run = subprocess.run(cmd + ["--svg", svg], capture_output=True, text=True, check=False, timeout=600)
        if run.returncode not in (0, 4):  # 4: a sweep with a point that cannot run, as asked
            problems.append(f"{stem}: gpusim exited {run.returncode}: {run.stderr[-500:]}")
            continue
        if not os.path.exists(svg) or os.path.getsize(svg) == 0:
            problems.append(f"{stem}: no SVG written")
            continue
        w, h = size_of(svg)
        shot = subprocess.run([a.chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                               "--screenshot=" + png, f"--window-size={w},{h}", "file://" + svg],
                              capture_output=True, text=True, check=False, timeout=300)
        if not os.path.exists(png) or os.path.getsize(png) == 0:
            problems.append(f"{stem}: no screenshot: {shot.stderr[-500:]}")
            continue
        print(f"{png} ({w} x {h})")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
