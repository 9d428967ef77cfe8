// compare.js - cards compared (?view=compare&benchmark=...): one series per
// card and parameter set, charted and tabled per row; with a baseline and
// a candidate, the candidate judged against the baseline row by row.

import { $, el } from "../lib/dom.js";
import { api } from "../lib/api.js";
import { isNum, num, pct, qs, uuidTag, spreadOf, fieldShow, signedPct } from "../lib/format.js";
import { state, current, ready, errorBox, navigate } from "../lib/page.js";
import * as GBCharts from "../lib/charts.js";
import { copyMarkdown, chartFigure, fillBenchmarkSelect, fitTables, layTables, VERDICT_WORDS, runLink, moreSamplesText } from "../lib/widgets.js";

// The compare menu's metrics: [menu text, axis and column title, field].
// Times are per unit of work (the answer's time_per), not per sample.
function compareMetrics(timePer) {
  const out = {};
  for (const f of state.resultFields || []) {
    if (!f.compare_menu) continue;
    const label = f.unit === "ms" && timePer ? f.label.replace("(ms)", `(ms per ${timePer})`) : f.label;
    const title = label + (f.unit === "share" ? " (%)" : "") + (f.unit === "x" ? " (log₂ scale)" : "");
    out[f.name] = [f.short_label, title, f];
  }
  return out;
}

export async function showCompare(q) {
  const gen = state.generation;
  const form = $("#compare-form");
  const out = $("#compare");
  try { await fillBenchmarkSelect(form.elements.benchmark, false); } catch (e) { out.replaceChildren(errorBox(e)); ready(); return; }
  const bench = q.get("benchmark") || form.elements.benchmark.options[0].value;
  form.elements.benchmark.value = bench;
  for (const k of ["host", "label"]) form.elements[k].value = q.get(k) || "";
  form.elements.latest.value = q.get("latest") || "";
  for (const k of ["baseline", "candidate", "margin"]) form.elements[k].value = q.get(k) || "";
  out.replaceChildren(el("p", { class: "note" }, "loading…"));
  if (q.get("baseline") && q.get("candidate")) return showVerdicts(q, out, gen, form.elements.metric);

  let data;
  try {
    data = await compareData(bench, q);
  } catch (e) {
    if (!current(gen)) return;
    out.replaceChildren(errorBox(e));
    ready();
    return;
  }
  if (!current(gen)) return;
  // The number of runs a card that was used, as the answer says it (the
  // daemon's default when the box is empty), never "all".
  if (isNum(data.latest)) form.elements.latest.placeholder = String(data.latest);

  // The metric menu offers what these rows have; the URL may choose one.
  const METRICS = compareMetrics(data.time_per);
  const has = (f) => data.series.some((s) => s.rows.some((r) => isNum(r[f])));
  const offered = Object.keys(METRICS).filter(has);
  const metricSel = form.elements.metric;
  metricSel.replaceChildren(...offered.map((m) => el("option", { value: m }, METRICS[m][0])));
  const preferred = ["gbps", "ratio", "median_ms"].find((m) => offered.includes(m));
  const metric = offered.includes(q.get("metric")) ? q.get("metric") : preferred;
  if (metric) metricSel.value = metric;

  if (!data.series.length) {
    out.replaceChildren(el("p", { class: "note" }, `No finished ${bench} runs${q.get("host") || q.get("label") ? " match" : " yet"}. `,
      el("a", { class: "nav", href: "?view=post&benchmark=" + encodeURIComponent(bench) }, "Post one.")));
    ready();
    return;
  }
  const keys = data.keys;
  const series = data.series.map((s, index) => ({ ...s, index, label: seriesLabel(s, data.series) }));
  // The same card with different parameters is two series: number them.
  const seen = new Map();
  for (const s of series) seen.set(s.label, (seen.get(s.label) || 0) + 1);
  const nth = new Map();
  for (const s of series) if (seen.get(s.label) > 1) { nth.set(s.label, (nth.get(s.label) || 0) + 1); s.label += " · set " + nth.get(s.label); }
  const value = (s, k, f) => { const r = s.rows.find((x) => x.key === k); return r && isNum(r[f]) ? r[f] : null; };
  // Each series keeps its look (colour and marker, seriesStyle) in the
  // chart, its table and the table of series.  A series without a value
  // of this metric (its runs all left out as invalid, or rows without the
  // field) is drawn nowhere and tabled only among the series, saying why.
  series.forEach((s, i) => { s.style = GBCharts.seriesStyle(i); });
  const shown = metric ? series.filter((s) => keys.some((k) => value(s, k, metric) !== null)) : series;
  const parts = [];
  if (data.series.some((s) => s.synthetic)) parts.push(el("p", { class: "warn synthetic", role: "note" }, el("strong", {}, "Synthetic: "), "some of these runs come from the worker's test double; their numbers were not measured."));
  if (data.excluded_invalid > 0) parts.push(el("p", { class: "note", id: "compare-excluded" }, `${data.excluded_invalid} invalid run(s) left out (contended, throttled, noisy…). `,
    el("a", { class: "nav", href: "?" + new URLSearchParams({ ...Object.fromEntries(q), include_invalid: "true" }) }, "Include them")));
  if (new Set(data.series.map((s) => s.comparability_key)).size > 1) parts.push(el("p", { class: "note" }, "The series were run with different parameters (see the table of series); compare with care."));

  let fig = null;
  if (metric) {
    const scale = metric === "share_of_ceiling" ? 100 : 1;
    const predicted = metric === "ratio" && data.key === "stride"
      ? keys.map((k) => { for (const s of series) { const v = value(s, k, "predicted_degree"); if (v !== null) return v; } return null; })
      : null;
    const many = shown.length > 8 ? "; hover or click a card in the legend to pick its line out" : "";
    fig = chartFigure(`${METRICS[metric][1]} of ${bench}, one series per card${many}`, (c) => GBCharts.compare(c, keys,
      shown.map((s) => ({ label: s.label, values: keys.map((k) => { const v = value(s, k, metric); return v === null ? null : v * scale; }) })),
      metric, METRICS[metric][1], predicted, (i) => shown[i].style));
    // Many series: a legend of many lines above the plot, so more height.
    if (many) fig.fig.classList.add("tall");
    parts.push(fig.fig);
  }
  parts.push(el("p", { class: "downloads" }, copyMarkdown("/compare.md" + qs({ benchmark: bench, host: q.get("host"), device: q.get("device"),
    label: q.get("label"), latest: q.get("latest"), runs: q.get("runs"), include_invalid: q.get("include_invalid") }))));
  parts.push(compareTables(data, metric ? shown : series, keys, metric || "median_ms", METRICS));
  parts.push(seriesTable(series, metric ? (s) => !shown.includes(s) : () => false, metric ? METRICS[metric][0] : ""));
  out.replaceChildren(...parts);
  layTables();
  if (fig) fig.draw();
  ready();
}

// What a verdict's shift can be charted in (the Metric menu of a
// baseline/candidate comparison): the time, which the verdict judges, or
// the SM busy cycles (the clock taken out) where both groups' rows have
// their clock.  [menu text, the row's shift object].
const SHIFT_MEASURES = {
  time: ["time shift (the verdict's)", (r) => r],
  cycles: ["cycle shift (clock taken out)", (r) => r.cycles || null],
};

// A candidate judged against a baseline (GET /compare?baseline=&candidate=):
// each row's shift with its interval against the ±margin band, and the
// verdict in words in the table.
async function showVerdicts(q, out, gen, metricSel) {
  let data;
  const params = { baseline: q.get("baseline"), candidate: q.get("candidate"), margin: q.get("margin"),
    benchmark: q.get("benchmark"), since: q.get("since"), until: q.get("until"), include_invalid: q.get("include_invalid") };
  try {
    data = await api("/compare" + qs(params));
  } catch (e) {
    if (!current(gen)) return;
    out.replaceChildren(errorBox(e));
    ready();
    return;
  }
  if (!current(gen)) return;
  const offered = ["time"].concat((data.rows || []).some((r) => r.cycles) ? ["cycles"] : []);
  metricSel.replaceChildren(...offered.map((m) => el("option", { value: m }, SHIFT_MEASURES[m][0])));
  const measure = offered.includes(q.get("metric")) ? q.get("metric") : "time";
  metricSel.value = measure;
  const parts = [];
  const side = (g) => `${g.selector}: ${g.n_runs} run(s)` + (g.excluded_invalid ? `, ${g.excluded_invalid} invalid left out` : "") +
    (g.excluded_other_key ? `, ${g.excluded_other_key} with other parameters left out` : "") +
    ((g.left_out || []).length ? ` (left out: ${g.left_out.map((x) => `${x.run_id.slice(0, 8)} ${x.reason.split(" ")[0] === "invalid" ? "invalid" : "other parameters"}`).join(", ")})` : "");
  parts.push(el("p", { class: "note", id: "verdict-groups" }, "Baseline " + side(data.baseline) + "; candidate " + side(data.candidate) + "."));
  if (!data.comparable) {
    parts.push(el("div", { class: "error", id: "verdict-incomparable", role: "note" },
      el("p", {}, data.reason || "Not comparable: the two groups differ in"),
      data.differences.length ? el("ul", {}, data.differences.map((d) => el("li", {}, el("code", {}, d.field), ": baseline ",
        el("code", {}, JSON.stringify(d.baseline)), ", candidate ", el("code", {}, JSON.stringify(d.candidate))))) : null));
    out.replaceChildren(...parts);
    ready();
    return;
  }
  const keys = data.rows.map((r) => r.key);
  const words = VERDICT_WORDS;
  parts.push(el("p", { class: "verdict verdict-" + data.verdict, id: "verdict-summary" }, el("strong", {}, "Verdict: " + words[data.verdict]),
    data.verdict_rows && data.verdict_rows.length && data.verdict !== "same" ? ` (${data.key} ${data.verdict_rows.join(", ")})` : "",
    ` — margin ±${pct(data.margin, 2)}, ${data.method}.`));
  parts.push(el("p", { class: "downloads" }, copyMarkdown("/compare.md" + qs(params))));
  const fig = chartFigure(`Shift of ${data.benchmark} ${measure === "cycles" ? "in SM busy cycles " : ""}from the baseline per ${data.key}, with 95% intervals and the ±margin band`,
    (c) => GBCharts.shift(c, keys, data.rows.map(SHIFT_MEASURES[measure][1]), data.margin, data.key));
  parts.push(fig.fig);
  const sign = (v) => signedPct(v, 2);
  const head = el("tr", {}, [data.key, "Verdict", "Shift", "95% interval", "In cycles", "Samples (baseline / candidate)", "More samples to decide"]
    .map((h) => el("th", { scope: "col" }, h)));
  const body = data.rows.map((r) => el("tr", { dataset: { key: String(r.key), verdict: r.verdict } },
    el("th", { scope: "row" }, String(r.key)),
    el("td", { class: "verdict verdict-" + r.verdict, dataset: { field: "verdict", value: r.verdict } }, words[r.verdict]),
    el("td", { class: "num", dataset: { field: "shift", value: String(r.shift) } }, sign(r.shift)),
    el("td", { class: "num" }, sign(r.ci_low) + " … " + sign(r.ci_high)),
    el("td", { class: "num" }, r.cycles ? `${sign(r.cycles.shift)} (${words[r.cycles.verdict]})` : "clock unknown"),
    el("td", { class: "num" }, `${r.n_baseline} / ${r.n_candidate}`),
    el("td", { class: "num", dataset: { field: "more_samples", value: isNum(r.more_samples) ? String(r.more_samples) : "" } }, moreSamplesText(r))));
  parts.push(el("div", { class: "table-wrap" }, el("table", { class: "rows verdicts" },
    el("caption", {}, "Each row: the candidate's shift from the baseline (+ is slower), its 95% interval and the verdict in words"),
    el("thead", {}, head), el("tbody", {}, body))));
  out.replaceChildren(...parts);
  fig.draw();
  ready();
}

function seriesLabel(s, all) {
  const name = s.card.name || "?";
  const same = all.filter((x) => (x.card.name || "?") === name);
  let label = name;
  if (new Set(all.map((x) => x.card.host)).size > 1 && s.card.host) label += " @ " + s.card.host;
  if (same.length > 1 && s.card.uuid) label += " (" + uuidTag(s.card.uuid) + ")";
  return label;
}

// A series' swatch: its colour and its marker, as on the chart.
function swatch(s) {
  return el("span", { class: "mark mark-" + s.style.colourIndex, "aria-hidden": "true", title: s.style.shape }, s.style.glyph);
}

// The numbers per key, one column per series.  Numbers never wrap, so
// many series would make one table wider than any screen: fitTables splits
// them into as many tables as fit, every one with the key column.
function compareTables(data, series, keys, metric, METRICS) {
  const [, title, field] = METRICS[metric];
  const fmtV = fieldShow(field);
  const hasPred = series.some((s) => s.rows.some((r) => isNum(r.predicted_degree)));
  const caption = title + " per " + data.key + " (± is half the spread (max − min) / median over the samples and runs)";
  return fitTables(series, (part, i, n) => {
    const head = el("tr", {}, el("th", { scope: "col" }, data.key), hasPred ? el("th", { scope: "col" }, "Predicted degree") : null,
      part.map((s) => el("th", { scope: "col", dataset: { series: String(s.index) } }, swatch(s), s.label)));
    const body = keys.map((k) => {
      const pred = series.map((s) => s.rows.find((r) => r.key === k)).find((r) => r && isNum(r.predicted_degree));
      return el("tr", { dataset: { key: String(k) } }, el("th", { scope: "row" }, String(k)),
        hasPred ? el("td", { class: "num" }, pred ? num(pred.predicted_degree) : "–") : null,
        part.map((s) => {
          const r = s.rows.find((x) => x.key === k);
          const at = { series: String(s.index), value: "" };
          if (!r || !isNum(r[metric])) return el("td", { class: "num", dataset: at }, "–");
          const sp = spreadOf(r);
          at.value = String(r[metric]);
          return el("td", { class: "num", dataset: at, title: `${num(r.n)} run(s); median ${num(r.median_ms, 4)} ms per ${data.time_per}, min ${num(r.min_ms, 4)}, max ${num(r.max_ms, 4)}` },
            fmtV(r[metric]), sp !== null ? el("span", { class: "spread" }, " ±" + pct(sp / 2, 2)) : null);
        }));
    });
    const from = series.indexOf(part[0]);
    const which = n > 1 ? ` — series ${from + 1} to ${from + part.length} of ${series.length}` : "";
    return el("div", { class: "table-wrap" }, el("table", { class: "rows compare" },
      el("caption", {}, caption + which), el("thead", {}, head), el("tbody", {}, body)));
  });
}

// left(s): whether series s is left out of the chart and the numbers (no
// value of the metric named metricName).
function seriesTable(series, left, metricName) {
  const head = el("tr", {}, ["Series", "Card", "Host", "Driver", "CUDA", "Parameters", "Runs"].map((h) => el("th", { scope: "col" }, h)));
  const body = series.map((s) => el("tr", { dataset: { series: String(s.index), left: String(left(s)) } },
    el("th", { scope: "row" }, swatch(s), s.label,
      left(s) ? el("span", { class: "why" }, ` (no ${metricName}: not charted)`) : null),
    el("td", { title: s.card.uuid }, s.card.name || "–"), el("td", {}, s.card.host || "–"),
    el("td", {}, s.driver || "–"), el("td", {}, s.cuda || "–"),
    el("td", { class: "mono small params" }, Object.entries(s.params || {}).map(([k, v]) => k + "=" + (Array.isArray(v) ? v.join(",") : v)).join(" ")),
    el("td", {}, s.runs.map((id, j) => [j ? ", " : "", runLink(id)]),
      s.excluded_invalid ? el("span", { class: "why" }, ` (${s.excluded_invalid} invalid left out)`) : null)));
  return el("div", { class: "table-wrap" }, el("table", { class: "series" }, el("caption", {}, "The series: which card, software and runs each one is"), el("thead", {}, head), el("tbody", {}, body)));
}

// GET /compare: one series per card (and per comparable parameter set),
// rows aligned by key.
async function compareData(bench, q) {
  const params = { benchmark: bench, host: q.get("host"), device: q.get("device"), label: q.get("label"), latest: q.get("latest"), runs: q.get("runs"), include_invalid: q.get("include_invalid") };
  const d = await api("/compare" + qs(params));
  for (const s of d.series) for (const r of s.rows) if (!("key" in r) && d.key in r) r.key = r[d.key];
  return d;
}

function compareNavigate(benchmarkChanged) {
  const f = $("#compare-form").elements;
  navigate("/" + qs({
    view: "compare", benchmark: f.benchmark.value, metric: benchmarkChanged ? "" : f.metric.value,
    latest: f.latest.value, host: f.host.value.trim(), label: f.label.value.trim(),
    baseline: f.baseline.value.trim(), candidate: f.candidate.value.trim(), margin: f.margin.value.trim(),
  }), true);
}

// The compare form's listeners; app.js calls this once.
export function initCompare() {
  $("#compare-form").addEventListener("submit", (e) => {
    e.preventDefault();
    compareNavigate(false);
  });
  $("#compare-form").addEventListener("change", (e) => {
    if (e.target.tagName === "SELECT") compareNavigate(e.target.name === "benchmark");
  });
}
