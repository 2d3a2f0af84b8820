#!/usr/bin/env python3
"""The page's own evaluation times in headless Chromium, in real time (scripts/bench-web).

The page test (page_test.py) runs Chromium under a virtual clock, so that it waits for the module
to load; under it the page's clock stands still while a script runs, and the times the page
measures read 0. Here Chromium runs on the real clock, driven over the DevTools protocol on a pipe
(--remote-debugging-pipe: JSON messages, each ended by a NUL byte, on file descriptors 3 and 4):
the page's #selftest runs every shipped scenario and the slider drags through its own inputs, and
the evaluation time it measured for each (performance.now() around the module's estimate) is
printed. A benchmark, not a test: it asserts nothing about the times.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


class Pipe:
    def __init__(self, browser, url):
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()
        # The child must see the pipes as its descriptors 3 (commands in) and 4 (answers out), which
        # closing the other descriptors would close again.
        def child_fds():
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)
            os.set_inheritable(3, True)  # dup2 onto itself keeps close-on-exec
            os.set_inheritable(4, True)
        self.proc = subprocess.Popen(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", url],
            preexec_fn=child_fds, close_fds=False,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.next_id = 0
        self.buffer = b""

    def call(self, method, params=None, session=None):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self.buffer:
                chunk = os.read(self.from_browser, 1 << 16)
                if not chunk:
                    raise RuntimeError("Chromium closed the pipe")
                self.buffer += chunk
            raw, self.buffer = self.buffer.split(b"\0", 1)
            answer = json.loads(raw)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer["result"]

    def close(self):
        self.proc.kill()
        self.proc.wait()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--chromium", default="chromium")
    p.add_argument("--page", required=True, help="the built page's folder (build-web/page)")
    p.add_argument("--wait", type=float, default=120, help="seconds to wait for the self-test")
    a = p.parse_args()
    url = "file://" + os.path.join(os.path.abspath(a.page), "index.html") + "#selftest"
    pipe = Pipe(a.chromium, "about:blank")
    try:
        target = pipe.call("Target.createTarget", {"url": url})["targetId"]
        session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        deadline = time.monotonic() + a.wait
        text = ""
        while not text and time.monotonic() < deadline:
            time.sleep(0.5)
            r = pipe.call("Runtime.evaluate", {"expression": "(document.getElementById('selftest-result') || "
                                                             "{}).textContent || ''", "returnByValue": True},
                          session)
            text = r["result"].get("value", "")
        version = pipe.call("Browser.getVersion")["product"]
    finally:
        pipe.close()
    if not text:
        sys.exit(f"the page wrote no self-test result within {a.wait:g} s")
    runs = [r for r in json.loads(text) if r.get("ms") is not None]
    scenarios = [r for r in runs if not r["sets"] and not r.get("patch")]
    drags = [r for r in runs if r["sets"] or r.get("patch")]
    # The first evaluation also compiles and warms the module's code: shown apart.
    first, rest = scenarios[0], scenarios[1:]
    ms = sorted(r["ms"] for r in rest)
    slowest = max(rest, key=lambda r: r["ms"])
    print(f"in the page ({version}, {os.cpu_count()} cores), the module's estimate as the page times it:")
    print(f"  the first evaluation, with the module's warm-up: {first['ms']:.1f} ms ({first['scenario']})")
    print(f"  the {len(rest)} other shipped scenarios: median {statistics.median(ms):.1f} ms, "
          f"slowest {slowest['ms']:.1f} ms ({slowest['scenario']})")
    for r in drags:
        what = "GPU what-if, " if r.get("patch") else ""
        print(f"  slider drag ({what}{len(r['sets'])} overrides) on {r['scenario']}: {r['ms']:.1f} ms")


if __name__ == "__main__":
    main()
