// changes.js - change points and drift (README "Change points and
// drift"): the fleet's "Changes" view (?view=changes&host=&model=&since=,
// GET /changes, newest first) and the card page's part (GET
// /cards/UUID/changes): its changes in a table, and its runs of the newest
// step's benchmark charted over time with each step a vertical line
// labelled with its shift.

import { $, el, table } from "../lib/dom.js";
import { api } from "../lib/api.js";
import { isNum, qs, signedPct, shortCard, rowKey, rowKeyText, median, workUnits } from "../lib/format.js";
import { state, ready, errorBox, loadInto, benchmarks, current, navigate } from "../lib/page.js";
import * as GBCharts from "../lib/charts.js";
import { chartFigure, timeEl, runLink } from "../lib/widgets.js";

const CHART_RUNS = 30; // the card's runs charted around its newest step

// A change's size in words: a step's shift, a drift's slope a month, each
// with its 95% interval.
function sizeText(c) {
  const v = c.kind === "step" ? c.shift : c.per_month;
  return signedPct(v) + (c.kind === "step" ? "" : " a month") + " (" + signedPct(c.ci_low) + " … " + signedPct(c.ci_high) + ")";
}

export function changesTable(list, withCard) {
  const heads = ["When (local time)", "Kind", "Benchmark and row", "Size (95% interval)", "Levels (ms per unit)", "First run after"];
  if (withCard) heads.splice(1, 0, "Card");
  return table("changes", "Change points (a step in a card's level) and drifts (a steady slope over 30 days), newest first", heads,
    list.map((c) => el("tr", { dataset: { id: String(c.id), kind: c.kind, run: c.run_id } },
      el("th", { scope: "row" }, timeEl(c.at)),
      withCard ? el("td", { title: c.card.device_uuid }, el("a", { class: "nav", href: "?view=card&uuid=" + encodeURIComponent(c.card.device_uuid) + "&host=" + encodeURIComponent(c.card.host) },
        (c.card.device_name || "?") + " (" + shortCard(c.card.device_uuid) + ")"), " @ " + c.card.host) : null,
      el("td", {}, c.kind === "step" ? "step" : "drift"),
      el("td", {}, c.benchmark + " · row " + rowKeyText(c.row)),
      el("td", { class: "num", dataset: { field: "size", value: String(c.kind === "step" ? c.shift : c.per_month) } }, sizeText(c)),
      el("td", { class: "num" }, c.kind === "step" ? Number(c.level_before.toPrecision(4)) + " → " + Number(c.level_after.toPrecision(4)) : "–"),
      el("td", {}, c.kind === "step" ? runLink(c.run_id) : ["found by ", runLink(c.found_by)]))));
}

export async function showChanges(q) {
  const gen = state.generation;
  const out = $("#changes");
  const form = $("#changes-form");
  const filters = { host: q.get("host") || "", model: q.get("model") || "", since: q.get("since") || "" };
  for (const [k, v] of Object.entries(filters)) form.elements[k].value = v;
  out.replaceChildren(el("p", { class: "note" }, "loading…"));
  const data = await loadInto("/changes" + qs(filters), out, gen);
  if (!data) return;
  out.replaceChildren(data.changes.length ? changesTable(data.changes, true)
    : el("p", { class: "note", id: "changes-none" }, "No change point or drift found", filters.since ? " since " + filters.since : "", "."));
  ready();
}

// The card's runs of its newest step's benchmark (at most CHART_RUNS,
// oldest first), each row's median per unit as a share off their median,
// with every step among them a vertical line.
async function stepChart(uuid, host, steps, box) {
  const gen = state.generation;
  const bench = steps[0].benchmark;
  let runs;
  try {
    const list = await api("/runs" + qs({ device: uuid, host, benchmark: bench, status: "done", limit: String(CHART_RUNS) }));
    runs = await Promise.all((list.runs || []).map((r) => api("/runs/" + encodeURIComponent(r.id))));
    await benchmarks();
  } catch (e) {
    if (current(gen)) box.replaceChildren(errorBox(e));
    return;
  }
  if (!current(gen)) return;
  runs.sort((a, b) => (a.id < b.id ? -1 : 1));
  const rowsOf = (x) => (x.results && x.results.rows) || [];
  const key = rowKey(rowsOf(runs[runs.length - 1] || {}));
  const keys = [...new Set(runs.flatMap((x) => rowsOf(x).map((r) => JSON.stringify(key ? r[key] : null))))];
  const medianOf = (x, k) => {
    const r = rowsOf(x).find((row) => JSON.stringify(key ? row[key] : null) === k);
    return r && isNum(r.median_ms) ? r.median_ms / workUnits(state.benchmarks, x, r) : null;
  };
  const series = keys.map((k) => {
    const base = median(runs.map((x) => medianOf(x, k)));
    return { label: (key || "row") + " " + rowKeyText(JSON.parse(k)), values: runs.map((x) => { const m = medianOf(x, k); return isNum(m) && isNum(base) ? m / base - 1 : null; }) };
  });
  const ids = runs.map((x) => x.id);
  const marks = steps.filter((c) => c.benchmark === bench && ids.includes(c.run_id))
    .map((c) => ({ index: ids.indexOf(c.run_id), text: "step " + rowKeyText(c.row) + " " + signedPct(c.shift) }));
  const fig = chartFigure(`This card's ${bench} runs (the newest ${runs.length}, oldest first): each row's median per unit as a share off their median; a vertical line marks each step with its shift`,
    (c) => GBCharts.history(c, runs.map((x) => x.id.slice(-6)), series, 0.01, marks, "run, oldest first"));
  fig.fig.id = "card-changes-chart";
  fig.fig.dataset.changes = String(marks.length);
  box.replaceChildren(fig.fig);
  fig.draw();
}

// The card page's part: its changes, and the chart of its newest step.
export function cardChangesPart(got, uuid, host) {
  const h = el("h2", {}, "Changes");
  if (got.error) return [h, errorBox(got.error)];
  const list = got.body.changes || [];
  if (!list.length) return [h, el("p", { class: "note", id: "card-changes-none" }, "No change point or drift found in this card's runs.")];
  const steps = list.filter((c) => c.kind === "step");
  const box = el("div", { id: "card-changes-trend" });
  if (steps.length) stepChart(uuid, host, steps, box);
  return [h, box, changesTable(list, false)];
}

export function initChanges() {
  $("#changes-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const f = $("#changes-form").elements;
    navigate("/" + qs({ view: "changes", host: f.host.value, model: f.model.value, since: f.since.value }), true);
  });
}
