// run_verdicts.js - a finished run's verdicts on its page: its
// card's history and its fleet, the card's recent medians per row against
// the history's band, and the alerts the run opened or settled.  Every
// verdict is in words, the colour and the point shape only help, and every
// chart has a table with its numbers.

import { $, el, table } from "../lib/dom.js";
import { api } from "../lib/api.js";
import { isNum, num, pct, signedPct, rowKey, rowKeyText, median, workUnits, workUnitName } from "../lib/format.js";
import { state, later, current, errorBox, benchmarks } from "../lib/page.js";
import * as GBCharts from "../lib/charts.js";
import { chartFigure, VERDICT_WORDS, runLink, fleetWords, moreSamplesText, tooFewCardsText } from "../lib/widgets.js";
import { alertsTable } from "./alerts.js";

// The panel under a finished run's rows; null for a run not finished.
export function runVerdictsPanel(run) {
  if (run.status !== "done") return null;
  const box = el("section", { id: "run-verdicts", class: "verdicts-panel", "aria-labelledby": "run-verdicts-title" },
    el("h2", { id: "run-verdicts-title" }, "Verdicts"));
  const v = run.verdicts;
  if (!v) {
    box.append(el("p", { class: "note", id: "verdicts-none" }, "Not judged: only runs that end on this daemon are judged (an imported run, or one from before verdicts were kept, is not)."));
    return box;
  }
  if (!v.judged) {
    box.append(el("p", { class: "note", id: "verdicts-none" }, "Not judged: " + (v.reason || "this run judges nothing.")));
    return box;
  }
  if (v.confirms) box.append(el("p", { id: "verdicts-confirms" }, "This run was queued to confirm what run ", runLink(v.confirms), " found."));
  box.append(historyPart(run, v), fleetPart(v), el("div", { id: "run-alerts" }));
  return box;
}

function historyPart(run, v) {
  const part = el("div", { id: "verdicts-history" }, el("h3", {}, "Against this card's own history"));
  const h = v.history;
  if (!h) {
    part.append(el("p", { class: "note" }, "No history: this is the card's first valid run of this benchmark and these parameters."));
    return part;
  }
  part.append(el("p", { class: "verdict verdict-" + h.verdict, id: "history-verdict", dataset: { verdict: h.verdict } },
    el("strong", {}, "Verdict: " + VERDICT_WORDS[h.verdict]),
    h.verdict !== "same" && h.verdict_rows && h.verdict_rows.length ? " (rows " + h.verdict_rows.map(rowKeyText).join(", ") + ")" : "",
    h.too_few_runs
      ? ` — the card has ${h.runs.length} valid run(s) of this key, ${h.runs_needed} needed: a short history cannot tell a slow card from its ordinary run-to-run swing, so nothing is judged and no alert raised.`
      : ` — this run against the card's last ${h.runs.length} valid run(s), margin ±${pct(v.margin, 2)}.`));
  const body = h.rows.map((r) => el("tr", { dataset: { key: rowKeyText(r.key), verdict: r.verdict } },
    el("th", { scope: "row" }, rowKeyText(r.key)),
    el("td", { class: "verdict verdict-" + r.verdict, dataset: { field: "verdict", value: r.verdict } }, VERDICT_WORDS[r.verdict]),
    el("td", { class: "num", dataset: { field: "shift", value: String(r.shift) } }, signedPct(r.shift)),
    el("td", { class: "num" }, signedPct(r.ci_low) + " … " + signedPct(r.ci_high)),
    // in cycles where the clocks are known: a clock held down is slower in
    // time and the same in cycles
    el("td", { class: "num", dataset: { field: "cycles", value: r.cycles ? r.cycles.verdict : "" } },
      r.cycles ? `${signedPct(r.cycles.shift)} (${VERDICT_WORDS[r.cycles.verdict]})` : "clock unknown"),
    el("td", { class: "num" }, `${r.n_baseline} / ${r.n_candidate}`),
    el("td", { class: "num", dataset: { field: "more_samples", value: isNum(r.more_samples) ? String(r.more_samples) : "" } },
      moreSamplesText(r))));
  part.append(table("verdicts history-verdicts", "Each row: this run's shift from its card's history (+ is slower), the 95% interval, the verdict in words, in cycles where the clocks are known, and for an inconclusive row roughly how many more samples a group would decide it",
    ["row", "Verdict", "Shift", "95% interval", "In cycles", "Samples (history / this run)", "More samples to decide"], body));
  const trend = el("div", { id: "card-history" }, el("p", { class: "note" }, "loading the card's recent runs…"));
  part.append(trend);
  later(() => cardHistory(run, h, v.margin, trend), 0);
  return part;
}

// The card's last valid runs (the history) and this one: each row's median
// as a share off the history's median, against the ±margin band.
async function cardHistory(run, h, margin, box) {
  const gen = state.generation;
  let past, changes;
  try {
    past = await Promise.all(h.runs.map((id) => api("/runs/" + encodeURIComponent(id))));
    changes = run.device && run.device.uuid ? await api("/cards/" + encodeURIComponent(run.device.uuid) + "/changes") : { changes: [] };
    await benchmarks();
  } catch (e) {
    if (current(gen)) box.replaceChildren(errorBox(e));
    return;
  }
  if (!current(gen)) return;
  past.sort((a, b) => (a.id < b.id ? -1 : 1));
  const all = past.concat([run]);
  const own = (run.results && run.results.rows) || []; // null in a run marked damaged
  const key = rowKey(own);
  const keyOf = (r, i) => (key ? r[key] : i);
  const keys = own.map(keyOf);
  const medianOf = (x, k) => {
    const rows = (x.results && x.results.rows) || [];
    const r = rows.find((row, i) => JSON.stringify(keyOf(row, i)) === JSON.stringify(k));
    // per unit of work: runs of one card may have calibrated other work
    return r && isNum(r.median_ms) ? r.median_ms / workUnits(state.benchmarks, x, r) : null;
  };
  const per = "ms per " + workUnitName(state.benchmarks, run.benchmark);
  const base = keys.map((k) => median(past.map((x) => medianOf(x, k))));
  const series = keys.map((k, j) => ({ label: (key || "row") + " " + rowKeyText(k),
    values: all.map((x) => { const m = medianOf(x, k); return isNum(m) && isNum(base[j]) ? m / base[j] - 1 : null; }) }));
  const labels = all.map((x, i) => (i === all.length - 1 ? "this run" : x.id.slice(-6)));
  // the card's steps whose first run after is among these runs
  const ids = all.map((x) => x.id);
  const steps = (changes.changes || []).filter((c) => c.kind === "step" && c.benchmark === run.benchmark && ids.includes(c.run_id));
  const marks = steps.map((c) => ({ index: ids.indexOf(c.run_id), text: "step " + rowKeyText(c.row) + " " + signedPct(c.shift) }));
  const fig = chartFigure(`This card's medians per ${key || "row"} over its last ${past.length} valid run(s) and this one, as a share off the history's median, with the ±margin band`,
    (c) => GBCharts.history(c, labels, series, margin, marks));
  const body = keys.map((k, j) => el("tr", { dataset: { key: rowKeyText(k) } },
    el("th", { scope: "row" }, rowKeyText(k)),
    el("td", { class: "num", dataset: { field: "history_median", value: String(base[j]) } }, num(base[j], 4)),
    all.map((x, i) => {
      const m = medianOf(x, k);
      return el("td", { class: "num", dataset: { field: i === all.length - 1 ? "this_run" : "run", value: String(m) }, title: x.id },
        num(m, 4), isNum(m) && isNum(base[j]) ? el("span", { class: "spread" }, " " + signedPct(m / base[j] - 1)) : null);
    })));
  const heads = [key || "row", `History median (${per})`].concat(all.map((x, i) => (i === all.length - 1 ? "This run" : el("span", {}, "Run ", runLink(x.id)))));
  fig.fig.dataset.changes = String(marks.length);
  box.replaceChildren(fig.fig, table("card-history", `Median time (${per}) per row of each run` + ", oldest first, and its share off the history's median; the band is ±" + pct(margin, 2), heads, body));
  fig.draw();
}

function fleetPart(v) {
  const f = v.fleet || { rows: [], cards: 0 };
  const part = el("div", { id: "verdicts-fleet" }, el("h3", {}, "Against the fleet"));
  const judged = f.rows.some((r) => isNum(r.z) || r.outlier);
  part.append(el("p", { id: "fleet-verdict", class: f.outlier_rows && f.outlier_rows.length ? "verdict verdict-slower" : "verdict verdict-same" },
    f.too_few_cards ? tooFewCardsText(f.cards, f.cards_needed)
      : !judged ? `Not judged: no row is measured on ${f.cards_needed || "enough"} cards of this model and these parameters.`
      : f.outlier_rows.length ? `Outlier among ${f.cards} cards in row(s) ${f.outlier_rows.map(rowKeyText).join(", ")}.`
        : `Within the fleet of ${f.cards} cards on every row.`));
  if (!f.rows.length) return part;
  const body = f.rows.map((r) => {
    const w = fleetWords(r);
    return el("tr", { dataset: { key: rowKeyText(r.key), outlier: String(!!r.outlier) } },
      el("th", { scope: "row" }, rowKeyText(r.key)),
      el("td", { class: "num", dataset: { field: "value_ms", value: String(r.value_ms) } }, num(r.value_ms, 4)),
      el("td", { class: "num" }, num(r.median_ms, 4)), el("td", { class: "num" }, num(r.mad_ms, 3)),
      el("td", { class: "num", dataset: { field: "z", value: String(r.z) } }, isNum(r.z) ? num(r.z, 3) : "–"),
      el("td", { class: w.cls, dataset: { field: "outlier", value: String(!!r.outlier) } }, w.text));
  });
  part.append(table("verdicts fleet-verdicts", "Each row: this card's median against the latest valid run of every other card of its model (robust z; an outlier past |z| > 3.5 and the margin)",
    ["row", `This card (ms per ${f.time_per || "sample"})`, `Fleet median (ms per ${f.time_per || "sample"})`, `MAD (ms per ${f.time_per || "sample"})`, "z", "Judgement"], body));
  return part;
}

// The alerts this run opened, confirmed or cleared: filled after the page.
export async function runAlerts(run) {
  const gen = state.generation;
  const box = $("#run-alerts");
  if (!box) return;
  let list;
  try {
    list = (await api("/alerts")).alerts;
  } catch (e) {
    if (current(gen)) box.replaceChildren(errorBox(e));
    return;
  }
  if (!current(gen)) return;
  const mine = list.filter((a) => [a.runs.detected, a.runs.confirmed, a.runs.cleared].includes(run.id));
  if (!mine.length) {
    box.replaceChildren(el("p", { class: "note", id: "run-alerts-none" }, "No alert names this run."));
    return;
  }
  box.replaceChildren(el("h3", {}, "Alerts"), alertsTable(mine, run.id, false));
}
