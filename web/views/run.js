// run.js - one run (?run=ID): its chart, rows, summary, card and software,
// validity, checks against the floors (a health run's) and verdicts (run_verdicts.js); while the run is queued or
// running only its status line is redrawn, every second.

import { $, el } from "../lib/dom.js";
import { api } from "../lib/api.js";
import { isNum, num, pct, duration, rowKey, spreadOf, fieldShow } from "../lib/format.js";
import { state, benchmarks, later, current, ready, errorBox, render } from "../lib/page.js";
import * as GBCharts from "../lib/charts.js";
import { copyMarkdown, timeEl, statusBadge, validityOf, validityBadge, originText, originTag, progressMessage, chartFigure, chartOrNote, fitTables, layTables, checksTable } from "../lib/widgets.js";
import { runVerdictsPanel, runAlerts } from "./run_verdicts.js";
import { askToken } from "./post.js";

// The rows table's columns: [field, header, how to show a value]; key
// fields head the rows instead.
function rowColumns() {
  return (state.resultFields || []).filter((f) => !f.key).map((f) => [f.name, f.label, fieldShow(f)]);
}

// What a row's ratio is measured against, per benchmark (units in headers).
const RATIO_HEADER = {
  smem_stride: "Time ratio (× stride-1 time)",
  smem_pattern: "Time ratio (× stride-1 time)",
  transpose: "Time ratio (× copy time)",
};

// The rows as one table, or as several side by side in columns where one
// would not fit its box (fitTables): each repeats the row's key.
function rowsTable(rows, key, caption, benchmark) {
  const withSpread = rows.map((r) => ({ ...r, spread: spreadOf(r) }));
  // A column with no value in any row (gmem_stride's peak) is left out.
  const cols = rowColumns().filter(([f]) => withSpread.some((r) => r[f] !== undefined && r[f] !== null));
  const header = (f, h) => (f === "ratio" && RATIO_HEADER[benchmark]) || h;
  return fitTables(cols, (part, i, n) => {
    const head = el("tr", {}, el("th", { scope: "col" }, key || "row"), part.map(([f, h]) => el("th", { scope: "col" }, header(f, h))));
    const body = withSpread.map((r, j) => el("tr", { dataset: { key: key ? String(r[key]) : String(j) } },
      el("th", { scope: "row" }, key ? String(r[key]) : String(j + 1)),
      part.map(([f, , show]) => {
        const v = r[f];
        // data-value keeps the exact number for whoever reads the DOM (tests).
        // Numbers never wrap (class num); words (a peak's source) may.
        const attrs = { dataset: { field: f }, class: typeof v === "number" || Array.isArray(v) ? "num" : typeof v === "string" && v.includes(" ") ? "text" : "" };
        if (typeof v === "number" || typeof v === "boolean") attrs.dataset.value = String(v);
        if (Array.isArray(v)) { attrs.dataset.value = String(v.length); attrs.title = v.map((x) => num(x, 4)).join(", ") + " ms"; }
        if (f === "verified" && v === false) attrs.class = "bad";
        if ((f === "mismatches" || f === "errors") && typeof v === "number" && v > 0) attrs.class = "num bad";
        return el("td", attrs, show(v));
      })));
    return el("div", { class: "table-wrap" }, el("table", { class: "rows" },
      el("caption", {}, caption + (n > 1 ? ` (columns, part ${i + 1} of ${n})` : "")), el("thead", {}, head), el("tbody", {}, body)));
  });
}

function runChart(run) {
  const rows = (run.results && run.results.rows) || [];
  if (!rows.length) return null;
  const summary = run.results.summary || {};
  const dev = (run.device && run.device.name) || "this card";
  if (run.benchmark === "soak" && Array.isArray(summary.series) && summary.series.length) {
    return soakFigure(summary, dev);
  }
  if (run.benchmark === "known_answer") {
    return chartFigure(`Mismatches per kind on ${dev} (any bar is a wrong result; 0 is a card that computed every answer exactly)`,
      (c) => GBCharts.bars(c, rows.map((r) => r.label), [{ label: "mismatches", data: rows.map((r) => r.mismatches) }], "mismatches"));
  }
  if (run.benchmark === "memtest") {
    return chartFigure(`GB/s per pattern on ${dev}, the memcpy ceiling of the same run last`,
      (c) => GBCharts.bars(c, rows.map((r) => r.label), [{ label: "GB/s (written plus read)", data: rows.map((r) => r.value) }], "GB/s"));
  }
  if (run.benchmark === "smem_stride" && rows.some((r) => isNum(r.ratio))) {
    return strideFigure(rows, dev);
  }
  if (run.benchmark === "gmem_stride" && rows.some((r) => isNum(r.ratio))) {
    return gmemFigure(rows, dev);
  }
  const peak = peakRows(rows);
  if (peak) {
    return chartFigure(`Measured ${peak.unit} per row on ${dev} against each row's peak (dashed outline)`,
      (c) => GBCharts.peaks(c, peak.rows, peak.unit));
  }
  if (rows.some((r) => isNum(r.gbps))) {
    const ceil = summary.ceiling || {};
    return chartFigure(`Transpose throughput per variant on ${dev}, against the copy ceiling`,
      (c) => GBCharts.transpose(c, rows, ceil.gbps, ceil.source));
  }
  const key = rowKey(rows);
  const keys = rows.map((r, i) => (key ? String(r[key]) : String(i + 1)));
  if (rows.some((r) => isNum(r.ratio)) && rows.some((r) => isNum(r.predicted_degree))) {
    return chartFigure(`Measured ratio and predicted conflict degree per ${key || "row"} on ${dev}`,
      (c) => GBCharts.bars(c, keys, [
        { label: "measured ratio (×)", data: rows.map((r) => r.ratio) },
        { label: "predicted degree", data: rows.map((r) => r.predicted_degree) },
      ], "ratio (×) / degree"));
  }
  if (rows.some((r) => isNum(r.median_ms))) {
    return chartFigure(`Median time per ${key || "row"} on ${dev} (this result has no throughput)`,
      (c) => GBCharts.bars(c, keys, [{ label: "median (ms)", data: rows.map((r) => r.median_ms) }], "median time (ms)"));
  }
  return null;
}

// soak's one-second series (issue 32) as two charts: the loads' rates, then
// the card's SM clock, temperature and power, against time.
function soakFigure(summary, dev) {
  const rate = chartFigure(`Rate against time on ${dev}: GEMM TFLOP/s (left) and HBM GB/s (right), one point a second; a triangle is a second with a thermal or hardware slowdown`,
    (c) => GBCharts.soak(c, summary.series, "rate"));
  const card = chartFigure(`SM clock (left), temperature and power (right) against time on ${dev}; NVML's slowdown threshold dashed`,
    (c) => GBCharts.soak(c, summary.series, "card", summary.slowdown_temperature_c));
  rate.fig.id = "soak-rate";
  card.fig.id = "soak-card";
  return { fig: el("div", { class: "soak-charts" }, rate.fig, card.fig), draw: () => { rate.draw(); card.draw(); } };
}

// known_answer's first mismatches and memtest's first errors (issue 32):
// where the card went wrong, as the worker wrote it (at most 16 a row).
function firstWrong(benchmark, rows) {
  const known = benchmark === "known_answer";
  const list = known ? "first_mismatches" : "first_errors";
  const found = rows.flatMap((r) => (Array.isArray(r[list]) ? r[list] : []).map((x) => ({ row: r.label, ...x })));
  if (!found.length) return null;
  const head = known ? ["Kind", "SM", "Element", "Expected", "Got"] : ["Pattern", "Address", "Expected", "Got"];
  const body = found.map((x) => el("tr", {}, el("th", { scope: "row" }, x.row),
    known ? [el("td", { class: "num", dataset: { field: "sm" } }, String(x.sm)), el("td", { class: "num" }, String(x.element))]
      : el("td", { class: "mono", dataset: { field: "address" } }, x.address),
    el("td", { class: "mono" }, x.expected), el("td", { class: "mono bad" }, x.got)));
  return el("section", { id: "run-first-wrong" }, el("h2", {}, known ? "First mismatches" : "First errors"),
    el("div", { class: "table-wrap" }, el("table", { class: "rows" },
      el("caption", {}, known ? "Results that differed from the host's exact answer: the SM that computed each, bits as hex" : "Words that read back other than written: their byte address on the card, bits as hex"),
      el("thead", {}, el("tr", {}, head.map((h) => el("th", { scope: "col" }, h)))), el("tbody", {}, body))));
}

// Issue 16's rows carry value, unit and peak: the rows of the unit most
// rows with a peak have (p2p's GB/s, not its latencies), or null.
function peakRows(rows) {
  const counts = {};
  for (const r of rows) if (isNum(r.value) && isNum(r.peak) && typeof r.unit === "string") counts[r.unit] = (counts[r.unit] || 0) + 1;
  const unit = Object.keys(counts).sort((a, b) => counts[b] - counts[a])[0];
  return unit ? { unit, rows: rows.filter((r) => r.unit === unit && isNum(r.value)) } : null;
}

// gmem_stride, drawn like smem_stride: the time ratio to stride 1 against
// the predicted sectors per request over stride 1's (the time a request
// takes should follow the sectors it moves, until the bus saturates).
function gmemFigure(rows, dev) {
  const base = rows.find((r) => r.stride === 1) || rows[0];
  const b = base && isNum(base.predicted_sectors) && base.predicted_sectors > 0 ? base.predicted_sectors : null;
  const pred = {
    label: "predicted sectors per request ÷ stride-1's" + (b ? " (" + b + ")" : ""),
    values: rows.map((r) => (b && isNum(r.predicted_sectors) ? r.predicted_sectors / b : null)),
    tip: (r) => "predicted " + num(r.predicted_sectors) + " sectors per request",
  };
  return chartFigure(`Measured time ÷ stride-1 time (median) and the predicted 32-byte sectors per warp request, per stride, on ${dev}`,
    (c) => GBCharts.stride(c, rows, "ratio", "time ÷ stride-1 time", pred));
}

// p2p_bandwidth's summary.matrix as a heat map: an HTML table whose cells
// are shaded by their share of the largest value AND hold the number, so
// the colour never carries the number alone; the link type in each cell.
function matrixFigure(m, field, unit, caption) {
  const values = (m[field] || []).flat().filter(isNum);
  const max = values.length ? Math.max(...values) : 0;
  const devs = m.devices || [];
  const head = el("tr", {}, el("th", { scope: "col" }, "from \\ to"), devs.map((d) => el("th", { scope: "col" }, "GPU " + d)));
  const body = devs.map((src, i) => el("tr", {}, el("th", { scope: "row" }, "GPU " + src), devs.map((dst, j) => {
    const v = ((m[field] || [])[i] || [])[j];
    const link = ((m.link || [])[i] || [])[j];
    const linkText = link && link.type ? link.type + (isNum(link.links) ? " ×" + link.links : "") + (isNum(link.version) ? " v" + link.version : "") : "";
    if (!isNum(v)) return el("td", { class: "num self", dataset: { src: String(src), dst: String(dst) } }, "–");
    const share = max > 0 ? v / max : 0;
    const td = el("td", { class: "num heat", dataset: { src: String(src), dst: String(dst), value: String(v) }, title: linkText },
      num(v, 4) + " " + unit, linkText ? el("span", { class: "link-type" }, " " + linkText) : "");
    // Light to dark blue; text turns white on the dark half.  Through the
    // CSSOM, which the page's CSP allows (a style attribute it would not).
    td.style.backgroundColor = `rgba(0, 114, 178, ${(0.1 + 0.8 * share).toFixed(3)})`;
    td.style.color = share > 0.55 ? "#fff" : "#1d2731";
    return td;
  })));
  return el("figure", { class: "heatmap", dataset: { field } },
    el("div", { class: "table-wrap" }, el("table", { class: "rows matrix" }, el("caption", {}, caption), el("thead", {}, head), el("tbody", {}, body))));
}

// smem_stride: the ratio in clock cycles (time x measured SM clock, so a
// clock that moved between rows does not pass for a conflict) by default,
// with the plain time ratio one click away; runs without cycles show time.
const STRIDE_MEASURES = {
  cycles: ["ratio_cycles", "Cycle ratio", "SM busy cycles ÷ stride-1 busy cycles"],
  time: ["ratio", "Time ratio", "time ÷ stride-1 time"],
};

function strideFigure(rows, dev) {
  const measures = Object.keys(STRIDE_MEASURES).filter((m) => rows.some((r) => isNum(r[STRIDE_MEASURES[m][0]])));
  const caption = (m) => `Measured ${STRIDE_MEASURES[m][2]} (median) and the predicted conflict degree, per stride, on ${dev}`;
  let measure = measures[0];
  let canvas = null;
  const draw = (c) => { canvas = c || canvas; GBCharts.stride(canvas, rows, STRIDE_MEASURES[measure][0], STRIDE_MEASURES[measure][2]); };
  const f = chartFigure(caption(measure), draw);
  f.fig.dataset.measure = measure;
  if (measures.length > 1) {
    const buttons = measures.map((m) => el("button", {
      type: "button", class: "small", "aria-pressed": String(m === measure), dataset: { measure: m },
      onclick: () => {
        if (m === measure) return;
        measure = m;
        f.fig.dataset.measure = m;
        for (const b of buttons) b.setAttribute("aria-pressed", String(b.dataset.measure === m));
        $("figcaption", f.fig).textContent = caption(m);
        canvas.setAttribute("aria-label", caption(m) + ". The table below has the same numbers.");
        GBCharts.destroyAll();
        chartOrNote(f.fig, () => draw());
      },
    }, STRIDE_MEASURES[m][1]));
    f.fig.prepend(el("div", { class: "measure-toggle", role: "group", "aria-label": "Chart the ratio in" }, "Chart: ", buttons));
  }
  return f;
}

export async function showRun(q) {
  const gen = state.generation;
  const id = q.get("run");
  const box = $("#run");
  let run;
  try {
    run = await api("/runs/" + encodeURIComponent(id));
    await benchmarks(); // the row table's columns
  } catch (e) {
    if (!current(gen)) return;
    box.replaceChildren(el("h1", { tabindex: -1 }, "Run " + id), errorBox(e));
    ready();
    return;
  }
  if (!current(gen)) return;
  const live = run.status === "queued" || run.status === "running";
  // While live, only the status part is redrawn each second: a reader's
  // place (and focus) elsewhere on the page is left alone.
  if (live && box.dataset.id === run.id && box.dataset.live === "1") {
    $("#run-status").replaceWith(runStatus(run));
  } else {
    renderRun(box, run);
  }
  box.dataset.id = run.id;
  box.dataset.live = live ? "1" : "0";
  ready();
  if (live) later(() => showRun(q), 1000);
}

function renderRun(box, run) {
  GBCharts.destroyAll();
  const card = (run.device && run.device.name) || "?";
  const meta = run.meta || {};
  const summary = (run.results && run.results.summary) || {};
  const rows = (run.results && run.results.rows) || [];
  const parts = [
    el("h1", { tabindex: -1, id: "run-title" }, run.benchmark, el("span", { class: "sub" }, " on " + card + (run.host ? " · " + run.host : "")), originTag(run)),
    runStatus(run),
  ];
  if (run.status === "done") parts.push(validityPanel(run));
  if (Array.isArray(run.checks) && run.checks.length) parts.push(checksPanel(run.checks));
  const warnings = [];
  const clock = clockExplained(run);
  if (meta.synthetic || summary.synthetic) warnings.push(el("p", { class: "warn synthetic", role: "note" }, el("strong", {}, "Synthetic: "), "these numbers were made up by the worker's test double. Nothing here was measured on a GPU."));
  // A clock fall the validity already explains (the power_capped note, a
  // throttled reason) is said there, once, not contradicted here.
  if (meta.clock_dropped === true && !clock) warnings.push(el("p", { class: "warn", id: "clock-dropped" }, el("strong", {}, "Clock dropped: "), "the SM clock fell during the measurement (see the card's state below); times may be inflated."));
  if (summary.ceiling_suspect) warnings.push(el("p", { class: "warn" }, el("strong", {}, "Ceiling suspect: "), "a variant ran faster than the copy ceiling (" + (summary.over_ceiling || []).join(", ") + "), so the ceiling is wrong, not the variant fast."));
  const deep = run.benchmark === "known_answer" || run.benchmark === "memtest";
  if (deep && rows.some((r) => r.verified === false)) {
    // a wrong answer or a bad word is what the check is there to find: a fact about the card
    const lines = (run.checks || []).filter((c) => c.pass === false && c.message).map((c) => c.message);
    warnings.push(el("p", { class: "error", role: "alert", id: "run-wrong-results" }, el("strong", {}, "Wrong results: "),
      (lines.length ? lines.join("; ") : "a row did not verify") + ". The card is degraded until a later run passes and a person acknowledges its alert."));
  } else if (rows.some((r) => r.verified === false)) warnings.push(el("p", { class: "warn" }, el("strong", {}, "Unverified output: "), "a variant did not write the right result; its time means nothing."));
  if (run.error) warnings.push(el("p", { class: "error", role: "alert" }, el("strong", {}, "Failed: "), run.error.code + ": " + run.error.message));
  // What the database holds of it is damaged (issue 31): shown as it was read, the damaged parts empty.
  if (run.damaged) warnings.push(el("p", { class: "error", role: "alert", id: "run-damaged" }, el("strong", {}, "Damaged: "), "the database no longer holds this run's " + (run.damaged_columns || []).join(", ") + " as written (a damaged page); they are left out here. Run gpubenchd --check-db (README, \"When things go wrong\")."));
  parts.push(...warnings);

  parts.push(el("p", { class: "downloads" }, "This run as ",
    el("a", { href: "/runs/" + encodeURIComponent(run.id), type: "application/json" }, "JSON"), " · ",
    el("a", { href: "/runs/" + encodeURIComponent(run.id) + ".csv", download: true }, "CSV"), " · ",
    copyMarkdown("/runs/" + encodeURIComponent(run.id) + ".md"), " · ",
    el("a", { class: "nav", href: "?view=compare&benchmark=" + encodeURIComponent(run.benchmark) }, "compare " + run.benchmark + " across cards")));

  const fig = runChart(run);
  const results = el("div", { class: "results" });
  if (fig) results.append(fig.fig);
  if (rows.length) results.append(rowsTable(rows, rowKey(rows), "Rows of this run: every sample's time in ms is in the Samples cell's tooltip and the CSV", run.benchmark));
  else if (run.status === "done") results.append(noRows(summary));
  const wrong = deep ? firstWrong(run.benchmark, rows) : null;
  if (wrong) results.append(wrong);
  const matrixHas = (f) => ((summary.matrix || {})[f] || []).flat().some(isNum);
  if (summary.matrix && Array.isArray(summary.matrix.devices) && matrixHas("gbps")) {
    results.append(matrixFigure(summary.matrix, "gbps", "GB/s", "Peer bandwidth, GB/s from each GPU (row) to each (column); darker is faster, every cell holds its number"));
    if (matrixHas("latency_us")) results.append(matrixFigure(summary.matrix, "latency_us", "µs", "Peer latency, µs from each GPU (row) to each (column)"));
  }
  results.append(summaryPanel(run.benchmark, summary));
  const verdicts = runVerdictsPanel(run); // verdicts.js
  if (verdicts) results.append(verdicts);

  box.replaceChildren(el("div", { class: "run-grid" }, el("div", { class: "run-main" }, parts, results), metaPanel(run)));
  layTables();
  if (fig) fig.draw();
  if (verdicts && run.verdicts && run.verdicts.judged) runAlerts(run);
}

// Why a finished run has no rows, in the worker's words where it gave
// them (p2p_bandwidth on a one-GPU node: summary.no_pair).
function noRows(summary) {
  const why = summary.no_pair || summary.reason;
  if (typeof why !== "string" || !why) return el("p", { class: "note", id: "run-no-rows" }, "This run has no rows.");
  return el("p", { class: "warn", id: "run-no-rows", role: "note" }, el("strong", {}, "Nothing measured: "), why + ".");
}

// What in the run's validity explains an SM clock that fell (meta
// clock_dropped): the power_capped note (valid: the GEMM rows ran at the
// card's cap, as they should) or a throttled or clock_unstable reason
// (invalid), as {kind: "note" | "reason", code}; null when nothing does.
function clockExplained(run) {
  if (!run.meta || run.meta.clock_dropped !== true) return null;
  const { reasons, notes } = validityOf(run);
  const r = reasons.find((x) => x.code === "throttled" || x.code === "clock_unstable");
  if (r) return { kind: "reason", code: r.code };
  const n = notes.find((x) => x.code === "power_capped");
  return n ? { kind: "note", code: n.code } : null;
}

const CLOCK_FELL = ". The SM clock fell during the run (see the card's state)";

// The verdict with each reason's sentence: what makes this run trustworthy
// or not.
function validityPanel(run) {
  const { state, reasons } = validityOf(run);
  const clock = clockExplained(run);
  const clockWhy = (kind, code) => (clock && clock.kind === kind && clock.code === code
    ? el("span", { class: "clock-why" }, CLOCK_FELL + (kind === "note" ? ": this cap is why; the rates are those under it." : ": times may be inflated."))
    : null);
  const box = el("div", { id: "run-validity", class: "validity-panel validity-" + state, role: state === "invalid" ? "note" : undefined },
    el("strong", {}, "Validity: "), validityBadge(run));
  if (state === "invalid") box.append(el("ul", {}, reasons.map((r) => el("li", { dataset: { code: r.code } }, el("strong", {}, r.code), ": " + r.message, clockWhy("reason", r.code)))));
  else if (state === "unknown") box.append(" ", el("span", { class: "note" }, "this run was not watched (made before the watch, or imported); it counts as valid."));
  const { notes } = validityOf(run);
  if (notes.length) box.append(el("ul", { class: "validity-notes" }, notes.map((n) => el("li", { class: "note", dataset: { note: n.code } }, el("strong", {}, "note " + n.code), ": " + n.message + (isNum(n.enforced_power_limit_w) ? ` (enforced power limit ${n.enforced_power_limit_w} W)` : ""), clockWhy("note", n.code)))));
  return box;
}

// A health run's rows against its card model's floors, judged by the daemon
// as validity is (null for runs of other benchmarks: nothing shown).
function checksPanel(checks) {
  const failed = checks.filter((c) => c.pass === false).length;
  return el("section", { id: "run-checks", class: "run-checks" }, el("h2", {}, "Checks against the floors"),
    checksTable("run-checks", failed ? `${failed} of ${checks.length} rows below their card model's floor (each floor's source is its title and last column)`
      : "Each checked row against its card model's floor (each floor's source is its title and last column)", checks));
}

// Status line: queued with position, running with progress (or why it waits),
// or how it ended.
function runStatus(run) {
  const p = el("div", { id: "run-status", class: "run-status", "aria-live": "polite" }, statusBadge(run.status));
  const waiting = run.status === "queued" || run.status === "running" ? progressMessage(run) : null;
  if (run.status === "queued") {
    p.append(" ", isNum(run.queue_position) ? `position ${run.queue_position} in this GPU's queue` : "waiting for its GPU");
    p.append(" ", el("button", { type: "button", class: "small", onclick: () => cancelRun(run.id) }, "Cancel run"));
  }
  if (waiting) {
    p.append(" ", el("span", { id: "run-progress-message", class: "progress-message" }, waiting));
  } else if (run.status === "running" && run.progress && isNum(run.progress.total) && run.progress.total > 0) {
    const { done, total } = run.progress;
    p.append(" ", el("progress", { max: total, value: done, "aria-label": "rows measured" }), ` ${done} of ${total} rows measured`);
  } else if (run.status === "running") {
    p.append(" measuring…");
  }
  const times = [" · created ", timeEl(run.created_at)];
  if (run.started_at) times.push(" · started ", timeEl(run.started_at));
  if (run.finished_at) times.push(" · took " + (duration(run.started_at, run.finished_at) || "–"));
  p.append(el("span", { class: "times" }, ...times));
  if (run.label) p.append(el("span", { class: "tag" }, "label " + run.label));
  if (run.batch) p.append(" ", el("a", { class: "nav", href: "?batch=" + encodeURIComponent(run.batch) }, "its batch"));
  return p;
}

async function cancelRun(id) {
  try {
    await api("/runs/" + encodeURIComponent(id), { method: "DELETE" });
  } catch (e) {
    if (e.status === 401) return askToken("Cancelling needs the daemon's bearer token.");
    $("#run-status").append(errorBox(e));
    return;
  }
  render(false);
}

function summaryPanel(benchmark, summary) {
  const items = [];
  const add = (k, v) => { if (v !== undefined && v !== null && v !== "") items.push(el("dt", {}, k), el("dd", {}, v)); };
  if (summary.ceiling) {
    const c = summary.ceiling;
    add("Copy ceiling", num(c.gbps, 4) + " GB/s (" + (c.source || "?") + ")");
    add("cudaMemcpy D2D", num(c.memcpy_gbps, 4) + " GB/s");
    add("Copy kernel", num(c.copy_kernel_gbps, 4) + " GB/s");
  }
  if (isNum(summary.n)) add("Matrix", summary.n + " × " + summary.n + " floats");
  if (summary.baseline && isNum(summary.baseline.median_ms)) add("Baseline (stride 1)", num(summary.baseline.median_ms, 4) + " ms median" + (summary.baseline.note ? " — " + summary.baseline.note : ""));
  if (summary.peak) {
    const pk = summary.peak;
    if (isNum(pk.baseline_gbps)) add("Stride-1 shared-memory rate", num(pk.baseline_gbps, 4) + " GB/s, " + pct(pk.baseline_fraction_of_peak, 3) + " of " + num(pk.peak_gbps, 4) + " GB/s peak at " + num(pk.sm_clock_mhz, 4) + " MHz");
  }
  // The worker says which ratio the largest error is of (issue 13: cycles,
  // the clock taken out); the time ratio's error is shown beside it.
  if (isNum(summary.max_ratio_error)) {
    const basis = summary.max_ratio_error_basis === "cycles" ? "cycle ratio" : summary.max_ratio_error_basis ? summary.max_ratio_error_basis + " ratio" : "ratio";
    add(`Largest |${basis} − degree| / degree`, pct(summary.max_ratio_error, 3));
    if (summary.max_ratio_error_basis === "cycles" && isNum(summary.max_ratio_error_time)) add("Largest |time ratio − degree| / degree", pct(summary.max_ratio_error_time, 3));
  }
  if (isNum(summary.address_compacted_rows) && summary.address_compacted_rows) add("Rows with compacted addresses", String(summary.address_compacted_rows));
  // the deep checks (issue 32, docs/DEEP_CHECKS.md)
  if (benchmark === "known_answer" && isNum(summary.sm_count)) add("SMs covered", summary.sms_covered + " of " + summary.sm_count + " (the fewest of any kind) in " + num(summary.seconds, 3) + " s");
  if (benchmark === "memtest" && isNum(summary.share_of_memory)) {
    add("Memory tested", pct(summary.share_of_memory, 3) + " of the card's " + num(summary.total_bytes / 1e9, 4) + " GB (" + num(summary.bytes_tested / 1e9, 4) + " GB; " + num(summary.free_bytes / 1e9, 4) + " GB were free)");
    add("memcpy ceiling", num(summary.memcpy_gbps, 4) + " GB/s, measured in the same run");
    const ecc = (o) => (o ? ["volatile_corrected", "volatile_uncorrected", "remapped_rows_correctable", "remapped_rows_uncorrectable"].map((k) => k + " " + (isNum(o[k]) ? o[k] : "unread")).join(", ") : "unread");
    add("ECC counters", (summary.ecc_increase ? "ROSE during the test: " : "unchanged: ") + "before " + ecc(summary.ecc_before) + "; after " + ecc(summary.ecc_after));
  }
  if (benchmark === "soak" && summary.sustained_share) {
    const sh = summary.sustained_share;
    add("Sustained (last 30 s ÷ first 10 s)", ["gemm", "hbm"].filter((k) => isNum(sh[k])).map((k) => k + " " + pct(sh[k], 3)).join(", "));
    add("First slowdown", summary.first_slowdown_reason ? summary.first_slowdown_reason + " at " + num(summary.first_slowdown_s, 3) + " s" : "none (a power-capped GEMM, sw_power_cap, is not one)");
    add("Hottest", num(summary.max_temperature_c, 3) + " °C" + (isNum(summary.slowdown_temperature_c) ? " (NVML's slowdown threshold " + num(summary.slowdown_temperature_c, 3) + " °C)" : ""));
    add("Power-capped GEMM", summary.power_capped ? "yes: expected of a GEMM at full rate (a note)" : "no");
  }
  add("Prediction", summary.prediction);
  add("Method", summary.method);
  if (!items.length) return el("div");
  return el("section", { class: "summary" }, el("h2", {}, "How it was measured"), el("dl", {}, items));
}

// The card, software and state panel.  Fields the worker did not report are
// left out rather than shown blank.
function metaPanel(run) {
  const m = run.meta || {};
  const d = m.device || run.device || {};
  const groups = [];
  const group = (title, pairs) => {
    const items = pairs.filter(([, v]) => v !== undefined && v !== null && v !== "");
    if (items.length) groups.push(el("h3", {}, title), el("dl", {}, items.map(([k, v]) => [el("dt", {}, k), el("dd", {}, v)])));
  };
  const gib = (b) => (isNum(b) ? num(b / 2 ** 30, 4) + " GiB" : null);
  const mib = (b) => (isNum(b) ? num(b / 2 ** 20, 4) + " MiB" : null);
  const kib = (b) => (isNum(b) ? num(b / 1024, 4) + " KiB" : null);
  group("Card", [
    ["Name", d.name], ["GPU index", isNum(d.index) ? String(d.index) : null],
    ["UUID", d.uuid ? el("span", { class: "mono" }, d.uuid) : null], ["PCI bus", d.pci_bus_id],
    ["Compute capability", d.compute_capability], ["SMs", isNum(d.sm_count) ? String(d.sm_count) : null],
    ["Memory", gib(d.memory_bytes)], ["Bus width", isNum(d.bus_width_bits) ? d.bus_width_bits + " bits" : null],
    ["L2", mib(d.l2_bytes)], ["Shared memory / SM", kib(d.smem_per_sm_bytes)],
    ["Max SM clock", isNum(d.max_sm_clock_mhz) ? num(d.max_sm_clock_mhz) + " MHz" : null],
    ["Host", m.hostname || m.host || run.host],
    ["Origin", run.origin === "import" ? "imported (POST /runs/import)" : originText(run) || "measured on this node"],
  ]);
  const drv = m.driver || {};
  const cuda = m.cuda || {};
  const build = m.build || {};
  const server = m.server || {};
  group("Software", [
    ["NVIDIA driver", drv.nvidia_version || (m.driver ? "unknown" + (drv.reason ? " (" + drv.reason + ")" : "") : null)],
    ["CUDA driver API", cuda.driver_version], ["CUDA runtime", cuda.runtime_version ? cuda.runtime_version + (cuda.runtime_linkage ? " (" + cuda.runtime_linkage + ")" : "") : null],
    ["nvcc", build.nvcc_version], ["Built for", build.architectures],
    ["Method", isNum(run.method) ? "version " + run.method + " of " + run.benchmark : "unknown (gpubench 0.1.0: compared only with runs of its build)"],
    ["Worker", m.worker || (build.gpubench_version ? "gpubench " + build.gpubench_version + (build.git_commit ? " (" + build.git_commit + ")" : "") : null)],
    ["Server", server.gpubench_version ? "gpubench " + server.gpubench_version + (server.git_commit ? " (" + server.git_commit + ")" : "") : null],
  ]);
  const st = stateTable(m.state_before, m.state_after);
  if (st) groups.push(el("h3", {}, "Card state"), el("div", { class: "table-wrap" }, st));
  const flags = [];
  if (m.synthetic) flags.push(el("li", { class: "flag bad" }, "synthetic (test double)"));
  const clock = clockExplained(run);
  if (m.clock_dropped === true && clock && clock.kind === "note") flags.push(el("li", { class: "flag" }, "SM clock dropped during the run: at the power cap (see the note " + clock.code + ")"));
  else if (m.clock_dropped === true) flags.push(el("li", { class: "flag bad" }, "SM clock dropped during the run"));
  else if (m.clock_dropped === false) flags.push(el("li", { class: "flag ok" }, "SM clock held" + (isNum(m.clock_drop_tolerance) ? " (within " + pct(m.clock_drop_tolerance, 2) + ")" : "")));
  else if (m.clock_dropped_reason) flags.push(el("li", { class: "flag" }, "clock drop unknown: " + m.clock_dropped_reason));
  if (m.counters) flags.push(el("li", { class: "flag" }, m.counters.available ? "hardware counters read" : "no hardware counters" + (m.counters.reason ? ": " + m.counters.reason : "")));
  if (m.card_settings) flags.push(el("li", { class: "flag" }, m.card_settings));
  if (flags.length) groups.push(el("h3", {}, "Flags"), el("ul", { class: "flags" }, flags));
  groups.push(el("h3", {}, "Request"), el("dl", {}, Object.entries(run.params || {}).map(([k, v]) =>
    [el("dt", {}, k), el("dd", { class: "mono" }, Array.isArray(v) ? v.join(", ") : String(v))])),
    el("p", { class: "mono small" }, "run " + run.id));
  if (run.meta) groups.push(el("details", {}, el("summary", {}, "All metadata (JSON)"), el("pre", {}, JSON.stringify(run.meta, null, 2))));
  return el("aside", { class: "meta", "aria-label": "Card, software and state" }, el("h2", {}, "Card and software"), groups);
}

function stateTable(before, after) {
  if (!before && !after) return null;
  const b = before || {}, a = after || {};
  if (b.available === false && a.available === false) return el("p", { class: "note" }, "Card state not read: " + (b.reason || a.reason || "unknown"));
  const fields = [
    ["sm_clock_mhz", "SM clock", "MHz"], ["mem_clock_mhz", "Memory clock", "MHz"],
    ["temperature_c", "Temperature", "°C"], ["power_draw_w", "Power draw", "W"],
    ["power_limit_w", "Power limit", "W"], ["pstate", "P-state", ""],
    ["throttle_reasons", "Throttle reasons", ""], ["ecc_mode", "ECC", ""], ["persistence_mode", "Persistence", ""],
  ].filter(([f]) => f in b || f in a);
  // A list of throttle reasons may break after a comma or an underscore
  // (sw_<wbr>power_<wbr>cap) in the narrow panel; a number never.
  const words = (t) => t.split("_").flatMap((w, i) => (i ? ["_", el("wbr"), w] : [w]));
  const show = (v, unit) => (v === undefined || v === null ? "–" : Array.isArray(v) ? (v.length ? words(v.join(", ")) : "none") : isNum(v) ? num(v, 4) + (unit ? " " + unit : "") : String(v));
  return el("table", { class: "state" },
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, ""), el("th", { scope: "col" }, "before"), el("th", { scope: "col" }, "after"))),
    el("tbody", {}, fields.map(([f, label, unit]) => {
      const changed = isNum(b[f]) && isNum(a[f]) && f === "sm_clock_mhz" && a[f] < b[f];
      return el("tr", { class: changed ? "bad" : "" }, el("th", { scope: "row" }, label),
        ...[b[f], a[f]].map((v) => el("td", { class: Array.isArray(v) ? "text" : "num" }, show(v, unit))));
    })));
}
