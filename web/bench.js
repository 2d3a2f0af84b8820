// The page's evaluation time, as a slider drag asks for it: for every shipped scenario, the best
// of 5 runs of the module's estimate alone and with the roofline and break-even charts, in V8
// (Node.js, the engine of Chromium). Run by scripts/bench-web after scripts/build-web.
"use strict";
const page = process.argv[2];
global.window = {};
require(page + "/scenarios.js");
const createGpusim = require(page + "/gpusim.js");

// Best of 5: the estimate alone, and with the roofline and break-even charts. `variant`: a GPU
// what-if's JSON ("" for none), as the page passes it when its GPU sliders moved.
function time(m, s, variant) {
  let estimate = Infinity;
  let total = Infinity;
  for (let i = 0; i < 5; i++) {
    const a = performance.now();
    m.estimate(s.id + ".toml", s.text, "", "", variant);
    const b = performance.now();
    m.rooflineSvg(s.id + ".toml", s.text, "", "", variant);
    m.breakevenSvg(s.id + ".toml", s.text, "", "", variant);
    const c = performance.now();
    estimate = Math.min(estimate, b - a);
    total = Math.min(total, c - a);
  }
  return { id: s.id, estimate, total };
}

createGpusim().then((m) => {
  const rows = window.GPUSIM_SCENARIOS.map((s) => time(m, s, ""));
  rows.sort((x, y) => x.total - y.total);
  const median = rows[Math.floor(rows.length / 2)];
  const worst = rows[rows.length - 1];
  console.log(`${rows.length} scenarios; a page evaluation (estimate + roofline + break-even):`);
  console.log(`  median ${median.total.toFixed(1)} ms (${median.id}), slowest ${worst.total.toFixed(1)} ms (${worst.id})`);
  for (const r of rows.slice(-5).reverse()) {
    console.log(`  ${r.id.padEnd(40)} estimate ${r.estimate.toFixed(1)} ms, with charts ${r.total.toFixed(1)} ms`);
  }
  // The GPU sliders: the scenario resolved again over a patched GPU spec.
  const what = JSON.stringify({ memory_bandwidth: 1.5, clock: 0.9 });
  const varied = time(m, window.GPUSIM_SCENARIOS.find((s) => s.id === median.id), what);
  console.log(`  with a GPU what-if (${what}), ${median.id}: estimate ${varied.estimate.toFixed(1)} ms, ` +
    `with charts ${varied.total.toFixed(1)} ms`);
});
