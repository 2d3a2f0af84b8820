// The page around the WebAssembly module (web/module.cpp): its inputs become a scenario TOML and
// `key=value` overrides, exactly what `gpusim estimate SCENARIO --set KEY=VALUE --gpu ID` takes, and
// what the module answers (the command line's JSON and SVG) is shown as it comes. The page computes
// nothing itself. With #selftest in its address it runs every shipped scenario through its own
// inputs and writes what it showed into #selftest-result (web/test/page_test.py reads it).
"use strict";

const $ = (id) => document.getElementById(id);
let gpusim = null;
let catalog = null;
let current = { name: "", text: "" };  // the scenario: its name (in messages) and TOML text
const touched = new Set();              // the what-ifs moved away from the scenario's own values

// The figures shown, each a key of the JSON report (docs/report.md) and how it reads.
const FIGURES = {
  training: [
    ["step.time_s", "step time", "s"], ["throughput.tokens_per_s", "tokens/s", ""],
    ["throughput.tokens_per_s_per_gpu", "tokens/s per GPU", ""], ["utilization.mfu", "MFU", "%"],
    ["memory.per_gpu_bytes", "memory per GPU", "GiB"], ["training.time_s", "time to train", "s→days"],
    ["training.gpu_hours", "GPU-hours", ""], ["power.gpu_avg_w", "average GPU power", "W"],
    ["power.energy_kwh", "energy", "kWh"], ["power.carbon_kg", "carbon", "kg"],
    ["cost.cloud_usd", "cloud cost", "USD"], ["cost.owned_usd", "owned cost", "USD"],
    ["cost.breakeven_days", "break-even", "days"],
  ],
  inference: [
    ["inference.time_to_first_token_s", "time to first token", "ms"],
    ["inference.time_per_output_token_s", "time per output token", "ms"],
    ["inference.output_tokens_per_s", "output tokens/s", ""], ["inference.requests_per_s", "requests/s", ""],
    ["inference.tokens_per_s_per_user", "tokens/s per user", ""], ["inference.mbu", "MBU", "%"],
    ["memory.per_gpu_bytes", "memory per GPU", "GiB"], ["power.gpu_avg_w", "average GPU power", "W"],
    ["cost.usd_per_million_output_tokens", "USD per million output tokens", "USD"],
    ["cost.breakeven_days", "break-even", "days"],
  ],
};

function at(obj, key) {
  return key.split(".").reduce((o, k) => (o === null || o === undefined ? undefined : o[k]), obj);
}

function shown(v, unit) {
  if (v === null || v === undefined) return "–";
  if (typeof v === "boolean") return v ? "yes" : "no";
  // The report's units (docs/report.md) as people read them: "s→days" is a time in seconds shown in days.
  const scaled = unit === "%" ? v * 100 : unit === "GiB" ? v / 2 ** 30 : unit === "s→days" ? v / 86400
    : unit === "ms" ? v * 1e3 : v;
  const digits = Math.abs(scaled) >= 100 ? 0 : Math.abs(scaled) >= 10 ? 1 : 3;
  const label = unit === "s→days" ? "days" : unit;
  return scaled.toLocaleString("en-US", { maximumFractionDigits: digits }) + (label ? " " + label : "");
}

function jobOf(text) {
  return /^\s*\[training\]/m.test(text) ? "training" : "inference";
}

// The overrides of the what-ifs the user moved, as --set lines.
function overrides() {
  const sets = [];
  const job = jobOf(current.text);
  if (touched.has("gpus") && $("gpus").value) sets.push(`system.gpus=${$("gpus").value}`);
  if (touched.has("batch")) sets.push(`${job === "training" ? "training.micro_batch" : "inference.batch"}=${$("batch").value}`);
  if ($("tensor").value) sets.push(`parallelism.tensor=${$("tensor").value}`);
  if (touched.has("power")) {
    const gpu = catalog.gpus.find((g) => g.id === ($("gpu").value || scenarioGpu()));
    if (gpu) sets.push(`system.power_limit=${Math.round(gpu.tdp_w * $("power").value / 100)} W`);
  }
  if ($("lanes").value) sets.push(`system.pcie_lanes=${$("lanes").value}`);
  if ($("model").value) sets.push(`model.preset=${$("model").value}`);
  if ($("runtime").value) sets.push(`runtime.name=${$("runtime").value}`);
  if ($("precision").value) {
    sets.push(`${job === "training" ? "training.precision" : "inference.weight_precision"}=${$("precision").value}`);
  }
  if ($("purchase").value) sets.push(`cost.purchase=${$("purchase").value} USD`);
  if (touched.has("utilization")) sets.push(`cost.utilization=${$("utilization").value / 100}`);
  if ($("cloud-rate").value) sets.push(`cost.cloud_rate=${$("cloud-rate").value} USD/h`);
  if ($("electricity").value) sets.push(`cost.electricity=${$("electricity").value} USD/kWh`);
  return sets;
}

// The GPU what-ifs the user moved, as app::GpuVariant's JSON: factors of the spec's memory
// bandwidth and SM clock, a PCIe generation. The command line gets the same GPU from a patch over
// its spec file (variantPatch), loaded with --specs.
function variant() {
  const v = {};
  if (touched.has("membw")) v.memory_bandwidth = $("membw").value / 100;
  if (touched.has("clock")) v.clock = $("clock").value / 100;
  if ($("pcie-gen").value) v.pcie_gen = Number($("pcie-gen").value);
  return v;
}

function scenarioGpu() {
  const m = current.text.match(/^\s*gpu\s*=\s*"([^"]+)"/m);
  return m ? m[1] : "";
}

function docTitle(key) {
  const d = (window.GPUSIM_REPORT_KEYS || {})[key];
  return d ? `${key}: ${d}` : key;
}

function showError(message) {
  $("error").hidden = !message;
  $("error").textContent = message ? "gpusim refuses this input:\n" + message : "";
}

// One evaluation of the page's inputs: the estimate, its roofline and break-even, the comparison.
function evaluate() {
  const sets = overrides().join("\n");
  const gpu = $("gpu").value;
  const what = variant();
  const varied = Object.keys(what).length > 0;
  const w = JSON.stringify(what);
  $("overrides").textContent = "gpusim estimate " + current.name + (gpu ? " --gpu " + gpu : "") +
    (varied ? " --specs what-if" : "") + overrides().map((s) => ` --set "${s}"`).join("");
  const t0 = performance.now();
  const answer = gpusim.estimate(current.name, current.text, sets, gpu, w);
  const t1 = performance.now();
  window.lastEstimate = answer;
  const e = JSON.parse(answer);
  if (e.error) {
    showError(e.error);
    return { ms: t1 - t0, error: e.error };
  }
  showError("");
  render(e);
  $("variant-details").hidden = !varied;
  window.lastPatch = varied ? { gpu: gpu || e.system.gpu, text: gpusim.variantPatch(gpu || e.system.gpu, w) } : null;
  if (varied) {
    $("variant-gpu").textContent = window.lastPatch.gpu;
    $("variant-patch").textContent = window.lastPatch.text;
  }
  setSvg("roofline", gpusim.rooflineSvg(current.name, current.text, sets, gpu, w));
  setSvg("breakeven", gpusim.breakevenSvg(current.name, current.text, sets, gpu, w));
  const others = [...$("compare").selectedOptions].map((o) => o.value);
  if (others.length) {
    const ids = [gpu || e.system.gpu, ...others.filter((g) => g !== (gpu || e.system.gpu))];
    setSvg("compare-chart", gpusim.compareSvg(current.name, current.text, sets, ids.join("\n")));
  } else {
    $("compare-chart").innerHTML = '<p class="hint">Choose GPUs to compare.</p>';
  }
  scheduleLoadCurve(e, sets, gpu, what);
  const t2 = performance.now();
  $("timing").textContent = `estimate ${(t1 - t0).toFixed(1)} ms, with the charts ${(t2 - t0).toFixed(1)} ms`;
  return { ms: t1 - t0, total_ms: t2 - t0 };
}

// Serving: the time to first token and per output token at offered loads up to the deployment's
// saturation, each a simulation of the scenario under a Poisson load (without the bands), drawn
// once the inputs rest.
let loadTimer = 0;
function scheduleLoadCurve(e, sets, gpu, what) {
  clearTimeout(loadTimer);
  const saturation = e.inference && e.inference.saturation_requests_per_s;
  $("load-figure").hidden = !saturation;
  if (!saturation) return;
  loadTimer = setTimeout(() => drawLoadCurve(saturation, sets, gpu, what), 250);
}

function drawLoadCurve(saturation, sets, gpu, what) {
  const points = [];
  for (const f of [0.1, 0.25, 0.4, 0.55, 0.7, 0.8, 0.9, 0.95]) {
    const rate = saturation * f;
    const request = { scenario: { path: current.name, text: current.text }, gpu, bands: false, gpu_variant: what,
      sets: [...sets.split("\n").filter((s) => s && !s.startsWith("serving.")), "serving.arrival=poisson",
        `serving.rate=${rate.toPrecision(6)} req/s`] };
    const r = JSON.parse(gpusim.request("estimate", JSON.stringify(request)));
    if (r.error || !r.inference.ttft_s) continue;
    points.push({ rate, ttft: r.inference.ttft_s, tpot: r.inference.tpot_s });
  }
  $("load-chart").innerHTML = loadSvg(points, saturation);
}

function loadSvg(points, saturation) {
  const W = 460, H = 220, L = 48, B = 34, T = 10, R = 10;
  const panel = (x0, key, title) => {
    const w = (W - L - R) / 2 - 12;
    const ys = points.flatMap((p) => [p[key].p50, p[key].p99]).map((v) => v * 1e3);
    const ymax = Math.max(...ys) * 1.1 || 1;
    const X = (r) => x0 + (r / saturation) * w;
    const Y = (v) => T + (H - T - B) * (1 - v * 1e3 / ymax);
    const line = (q, dash) => `<polyline fill="none" stroke="${key === "ttft" ? "#2f6db5" : "#d9822b"}" stroke-width="2" ${dash ? 'stroke-dasharray="5 3"' : ""} points="${points.map((p) => `${X(p.rate).toFixed(1)},${Y(p[key][q]).toFixed(1)}`).join(" ")}"/>`;
    return `<text x="${x0 + w / 2}" y="${H - 4}" font-size="11" text-anchor="middle">${title}, ms · requests/s →</text>` +
      `<line x1="${x0}" y1="${H - B}" x2="${x0 + w}" y2="${H - B}" stroke="#888"/><line x1="${x0}" y1="${T}" x2="${x0}" y2="${H - B}" stroke="#888"/>` +
      `<text x="${x0 - 4}" y="${T + 8}" font-size="10" text-anchor="end">${ymax.toPrecision(3)}</text>` +
      `<text x="${x0 + w}" y="${H - B + 12}" font-size="10" text-anchor="end">${saturation.toPrecision(3)}</text>` +
      line("p50", false) + line("p99", true);
  };
  if (!points.length) return '<p class="hint">No load could be simulated.</p>';
  return `<svg viewBox="0 0 ${W} ${H}" xmlns="http://www.w3.org/2000/svg" font-family="sans-serif">` +
    panel(L, "ttft", "TTFT") + panel(L + (W - L - R) / 2 + 12, "tpot", "TPOT") + "</svg>";
}

function setSvg(id, text) {
  const parsed = text.startsWith("{") ? JSON.parse(text) : null;
  $(id).innerHTML = "";
  if (parsed && parsed.error) {
    const p = document.createElement("p");
    p.className = "hint";
    p.textContent = parsed.error;
    $(id).appendChild(p);
  } else {
    $(id).innerHTML = text;  // the module's own SVG
  }
}

function render(e) {
  $("title").textContent = `${e.scenario} — ${e.system.gpus} × ${e.system.gpu_name} (${e.runtime.name})`;
  $("bottleneck").textContent = `Bound by ${e.bottleneck}: ${e.bottleneck_reason}`;
  const table = $("figures");
  table.innerHTML = "";
  for (const [key, label, unit] of FIGURES[jobOf(current.text)]) {
    const row = table.insertRow();
    const name = row.insertCell();
    const a = document.createElement("abbr");
    a.textContent = label;
    a.title = docTitle(key);
    name.appendChild(a);
    const value = row.insertCell();
    value.textContent = shown(at(e, key), unit);
    value.dataset.key = key;
    value.dataset.value = String(at(e, key));  // the report's number, as the module gave it
    const band = at(e.uncertainty, key);
    const range = row.insertCell();
    range.className = "band";
    if (band && band.low !== null && band.high !== null) {
      range.textContent = `${shown(band.low, unit)} … ${shown(band.high, unit)}`;
      range.title = docTitle("uncertainty");
    }
  }
  // The step: its parts as shares of a bar.
  const parts = [["compute_s", "compute"], ["communication_s", "communication"], ["bubble_s", "pipeline bubble"],
    ["input_stall_s", "input stall"], ["offload_s", "offload"], ["overhead_s", "overhead"]];
  const total = parts.reduce((s, [k]) => s + (e.step[k] || 0), 0);
  const bar = $("breakdown");
  bar.innerHTML = "";
  for (const [k, label] of parts) {
    const v = e.step[k] || 0;
    if (v <= 0 || total <= 0) continue;
    const seg = document.createElement("span");
    seg.className = "seg " + k;
    seg.style.width = (100 * v / total) + "%";
    seg.title = `${label}: ${shown(v, "s")} (${(100 * v / total).toFixed(1)} %) — ${docTitle("step." + k)}`;
    seg.textContent = v / total > 0.08 ? label : "";
    bar.appendChild(seg);
  }
  $("advice").innerHTML = "";
  for (const a of e.advice || []) {
    const li = document.createElement("li");
    li.textContent = a;
    $("advice").appendChild(li);
  }
}

function loadScenario(id) {
  const s = window.GPUSIM_SCENARIOS.find((x) => x.id === id);
  current = { name: `scenarios/${s.id}.toml`, text: s.text };
  $("toml").value = s.text;
  resetKnobs();
}

// The precisions a job of this kind takes (docs/scenarios.md: training.precision,
// inference.weight_precision).
const PRECISIONS = {
  training: ["fp32", "tf32", "fp16", "bf16", "fp8"],
  inference: ["fp16", "bf16", "fp8", "int8", "int4", "awq-int4", "gptq-int4", "nvfp4", "mxfp4", "q8_0", "q4_0", "q4_k_m"],
};

function resetKnobs() {
  touched.clear();
  const precision = $("precision");
  precision.length = 1;
  for (const p of PRECISIONS[jobOf(current.text)]) precision.add(new Option(p, p));
  for (const id of ["model", "runtime", "precision", "purchase"]) $(id).value = "";
  $("gpus").value = (current.text.match(/^\s*gpus\s*=\s*(\d+)/m) || [])[1] || "";
  const batch = current.text.match(/^\s*(micro_batch|batch)\s*=\s*(\d+)/m);
  $("batch").value = batch ? batch[2] : 1;
  $("batch-name").textContent = jobOf(current.text) === "training" ? "Micro-batch" : "Batch";
  $("tensor").value = "";
  $("lanes").value = "";
  $("pcie-gen").value = "";
  $("membw").value = 100;
  $("clock").value = 100;
  $("power").value = 100;
  $("utilization").value = 15;
  $("cloud-rate").value = "";
  $("electricity").value = "";
  for (const id of ["batch", "power", "utilization", "membw", "clock"]) $(id + "-out").textContent = $(id).value;
}

let pending = false;
function schedule() {
  if (pending) return;
  pending = true;
  requestAnimationFrame(() => { pending = false; evaluate(); });
}

function bind() {
  $("scenario").addEventListener("change", () => { loadScenario($("scenario").value); schedule(); });
  $("apply-toml").addEventListener("click", () => {
    current = { name: "pasted.toml", text: $("toml").value };
    resetKnobs();
    schedule();
  });
  for (const id of ["gpus", "batch", "power", "utilization", "membw", "clock"]) {
    $(id).addEventListener("input", () => {
      touched.add(id);
      const out = $(id + "-out");
      if (out) out.textContent = $(id).value;
      schedule();
    });
  }
  for (const id of ["gpu", "model", "runtime", "precision", "tensor", "lanes", "pcie-gen", "cloud-rate", "electricity", "purchase", "compare"]) {
    $(id).addEventListener("change", schedule);
  }
  $("reset").addEventListener("click", () => { resetKnobs(); schedule(); });
}

// Every shipped scenario through the page's own inputs, then one what-if, into #selftest-result.
function selfTest() {
  const runs = [];
  for (const s of window.GPUSIM_SCENARIOS) {
    $("scenario").value = s.id;
    $("scenario").dispatchEvent(new Event("change"));
    const t = evaluate();
    runs.push({ scenario: s.id, sets: [], gpu: "", patch: null, estimate: window.lastEstimate, ms: t.ms,
      shown: [...document.querySelectorAll("#figures td[data-key]")].map((td) => [td.dataset.key, td.dataset.value]) });
  }
  // A drag of sliders: the batch, the power limit and the utilization, then another GPU.
  const first = window.GPUSIM_SCENARIOS.find((s) => /^\s*\[training\]/m.test(s.text)) || window.GPUSIM_SCENARIOS[0];
  $("scenario").value = first.id;
  $("scenario").dispatchEvent(new Event("change"));
  const drag = (id, value) => { $(id).value = value; $(id).dispatchEvent(new Event("input")); };
  drag("batch", 2);
  drag("power", 80);
  drag("utilization", 50);
  $("gpu").value = "h100-sxm5-80gb";
  $("gpu").dispatchEvent(new Event("change"));
  let t = evaluate();
  runs.push({ scenario: first.id, sets: overrides(), gpu: "h100-sxm5-80gb", patch: null, estimate: window.lastEstimate,
    ms: t.ms, shown: [] });
  // The GPU's what-ifs: memory bandwidth, SM clock and PCIe generation (the command line gets them
  // from the patch the page shows, through --specs).
  drag("membw", 150);
  drag("clock", 90);
  $("pcie-gen").value = "4";
  $("pcie-gen").dispatchEvent(new Event("change"));
  t = evaluate();
  runs.push({ scenario: first.id, sets: overrides(), gpu: "h100-sxm5-80gb", patch: window.lastPatch,
    estimate: window.lastEstimate, ms: t.ms, shown: [] });
  // A drag on the slowest shipped scenario, a serving simulation: the batch limit and the utilization.
  const serving = window.GPUSIM_SCENARIOS.find((s) => s.id === "llama3-70b-fp8-4xh100-serve");
  if (serving) {
    $("scenario").value = serving.id;
    $("scenario").dispatchEvent(new Event("change"));
    drag("batch", 64);
    drag("utilization", 40);
    t = evaluate();
    runs.push({ scenario: serving.id, sets: overrides(), gpu: "", patch: null, estimate: window.lastEstimate,
      ms: t.ms, shown: [] });
  }
  // A scenario pasted with a value out of range: the page shows the command line's message.
  const bad = first.text.replace(/^(\s*gpus\s*=\s*)\d+/m, "$10");
  $("toml").value = bad;
  $("apply-toml").click();
  evaluate();
  runs.push({ pasted: bad, sets: [], gpu: "", estimate: window.lastEstimate, shown_error: $("error").textContent });
  const out = $("selftest-result");
  out.textContent = JSON.stringify(runs);
  out.hidden = false;
}

function start() {
  catalog = JSON.parse(gpusim.catalog());
  for (const s of window.GPUSIM_SCENARIOS) $("scenario").add(new Option(s.id, s.id));
  for (const id of catalog.models) $("model").add(new Option(id, id));
  for (const r of catalog.runtimes) $("runtime").add(new Option(`${r.name} (${r.id})`, r.id));
  for (const g of catalog.gpus) {
    const label = `${g.name} (${g.memory_gib.toFixed(0)} GiB, ${g.memory_bandwidth_gbs.toFixed(0)} GB/s)`;
    $("gpu").add(new Option(label, g.id));
    $("compare").add(new Option(label, g.id));
  }
  bind();
  // #scenario=ID opens that scenario (a link to share), else a training job everyone knows.
  const asked = decodeURIComponent((location.hash.match(/^#scenario=(.+)$/) || [])[1] || "");
  const preferred = window.GPUSIM_SCENARIOS.find((s) => s.id === asked) ||
    window.GPUSIM_SCENARIOS.find((s) => s.id === "llama2-7b-pretrain-a100") || window.GPUSIM_SCENARIOS[0];
  $("scenario").value = preferred.id;
  loadScenario(preferred.id);
  if (location.hash === "#selftest") {
    selfTest();
  } else {
    evaluate();
  }
}

createGpusim().then((module) => { gpusim = module; start(); });
