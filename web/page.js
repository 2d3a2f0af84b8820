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
  if (touched.has("utilization")) sets.push(`cost.utilization=${$("utilization").value / 100}`);
  if ($("cloud-rate").value) sets.push(`cost.cloud_rate=${$("cloud-rate").value} USD/h`);
  if ($("electricity").value) sets.push(`cost.electricity=${$("electricity").value} USD/kWh`);
  return sets;
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
  $("overrides").textContent = "gpusim estimate " + current.name + (gpu ? " --gpu " + gpu : "") +
    overrides().map((s) => ` --set "${s}"`).join("");
  const t0 = performance.now();
  const answer = gpusim.estimate(current.name, current.text, sets, gpu);
  const t1 = performance.now();
  window.lastEstimate = answer;
  const e = JSON.parse(answer);
  if (e.error) {
    showError(e.error);
    return { ms: t1 - t0, error: e.error };
  }
  showError("");
  render(e);
  setSvg("roofline", gpusim.rooflineSvg(current.name, current.text, sets, gpu));
  setSvg("breakeven", gpusim.breakevenSvg(current.name, current.text, sets, gpu));
  const others = [...$("compare").selectedOptions].map((o) => o.value);
  if (others.length) {
    const ids = [gpu || e.system.gpu, ...others.filter((g) => g !== (gpu || e.system.gpu))];
    setSvg("compare-chart", gpusim.compareSvg(current.name, current.text, sets, ids.join("\n")));
  } else {
    $("compare-chart").innerHTML = '<p class="hint">Choose GPUs to compare.</p>';
  }
  const t2 = performance.now();
  $("timing").textContent = `estimate ${(t1 - t0).toFixed(1)} ms, with the charts ${(t2 - t0).toFixed(1)} ms`;
  return { ms: t1 - t0, total_ms: t2 - t0 };
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

function resetKnobs() {
  touched.clear();
  $("gpus").value = (current.text.match(/^\s*gpus\s*=\s*(\d+)/m) || [])[1] || "";
  const batch = current.text.match(/^\s*(micro_batch|batch)\s*=\s*(\d+)/m);
  $("batch").value = batch ? batch[2] : 1;
  $("batch-name").textContent = jobOf(current.text) === "training" ? "Micro-batch" : "Batch";
  $("tensor").value = "";
  $("lanes").value = "";
  $("power").value = 100;
  $("utilization").value = 15;
  $("cloud-rate").value = "";
  $("electricity").value = "";
  for (const id of ["batch", "power", "utilization"]) $(id + "-out").textContent = $(id).value;
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
  for (const id of ["gpus", "batch", "power", "utilization"]) {
    $(id).addEventListener("input", () => {
      touched.add(id);
      const out = $(id + "-out");
      if (out) out.textContent = $(id).value;
      schedule();
    });
  }
  for (const id of ["gpu", "tensor", "lanes", "cloud-rate", "electricity", "compare"]) {
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
    runs.push({ scenario: s.id, sets: [], gpu: "", estimate: window.lastEstimate, ms: t.ms,
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
  const t = evaluate();
  runs.push({ scenario: first.id, sets: overrides(), gpu: "h100-sxm5-80gb", estimate: window.lastEstimate,
    ms: t.ms, shown: [] });
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
  for (const g of catalog.gpus) {
    const label = `${g.name} (${g.memory_gib.toFixed(0)} GiB, ${g.memory_bandwidth_gbs.toFixed(0)} GB/s)`;
    $("gpu").add(new Option(label, g.id));
    $("compare").add(new Option(label, g.id));
  }
  bind();
  const preferred = window.GPUSIM_SCENARIOS.find((s) => s.id === "llama2-7b-pretrain-a100") || window.GPUSIM_SCENARIOS[0];
  $("scenario").value = preferred.id;
  loadScenario(preferred.id);
  if (location.hash === "#selftest") {
    selfTest();
  } else {
    evaluate();
  }
}

createGpusim().then((module) => { gpusim = module; start(); });
