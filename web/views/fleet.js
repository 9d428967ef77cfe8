// fleet.js - the fleet view (?view=fleet&benchmark=...): per card model and
// parameters, each card's latest valid median per row against the others'
// (robust z), outliers first, charted and tabled.

import { $, el, table } from "../lib/dom.js";
import { isNum, num, qs, shortCard, rowKeyText } from "../lib/format.js";
import { state, ready, errorBox, loadInto, navigate } from "../lib/page.js";
import * as GBCharts from "../lib/charts.js";
import { chartFigure, fillBenchmarkSelect, runLink, fleetWords, fitTables, layTables, tooFewCardsText } from "../lib/widgets.js";

export async function showFleet(q) {
  const gen = state.generation;
  const form = $("#fleet-form");
  const out = $("#fleet");
  try { await fillBenchmarkSelect(form.elements.benchmark, false); } catch (e) { out.replaceChildren(errorBox(e)); ready(); return; }
  const bench = q.get("benchmark") || form.elements.benchmark.options[0].value;
  form.elements.benchmark.value = bench;
  out.replaceChildren(el("p", { class: "note" }, "loading…"));
  const data = await loadInto("/fleet" + qs({ benchmark: bench }), out, gen);
  if (!data) return;
  if (!data.groups.length) {
    out.replaceChildren(el("p", { class: "note", id: "fleet-empty" }, "No valid run of " + bench + " yet."));
    ready();
    return;
  }
  const figs = [];
  out.replaceChildren(...data.groups.map((g, i) => fleetGroup(g, i, data, figs)));
  layTables();
  figs.forEach((f) => f.draw());
  ready();
}

function fleetGroup(g, gi, data, figs) {
  const params = Object.entries(g.key.params || {}).map(([k, v]) => k + "=" + (Array.isArray(v) ? v.join(",") : v)).join(" ");
  const keys = g.rows.map((r) => r.key);
  const outliers = g.cards.filter((c) => c.outlier).length;
  // Each method's cards are a group of their own (README, Comparability).
  const method = "method " + (typeof g.key.method === "number" ? g.key.method : String(g.key.method).replace(/^unknown: /, "unknown, "));
  const parts = [el("h2", { id: "fleet-group-" + gi }, (g.key.card_model || "unknown model") + " ", el("span", { class: "sub mono small" }, method + " " + params)),
    g.too_few_cards
      ? el("p", { class: "verdict verdict-inconclusive", dataset: { outliers: "0", tooFewCards: "true" } }, tooFewCardsText(g.n_cards, g.cards_needed))
      : el("p", { class: outliers ? "verdict verdict-slower" : "verdict verdict-same", dataset: { outliers: String(outliers) } },
        `${g.cards.length} card(s); ${outliers ? outliers + " outlier(s), listed first" : "no outlier"}.`)];
  if (g.method_note) parts.push(el("p", { class: "note method-note" }, g.method_note + "."));
  if (!g.too_few_cards) {
    const fig = chartFigure(`Robust z of each card's median per row (${data.outlier_z} and −${data.outlier_z} dashed); outliers are labelled and drawn as triangles`,
      (c) => GBCharts.fleet(c, keys, g.cards.map((card) => ({ label: shortCard(card.device_uuid) + " @ " + card.host, outlier: card.outlier,
        z: keys.map((k) => { const cell = card.rows.find((r) => JSON.stringify(r.key) === JSON.stringify(k)); return cell && isNum(cell.z) ? cell.z : null; }) })), data.outlier_z));
    figs.push(fig);
    parts.push(fig.fig);
  }
  // A cell per card and row; numbers never wrap, so a benchmark with many
  // rows (smem_stride's 33 strides) is split into as many tables as fit
  // (fitTables), every one with the card's columns.
  parts.push(fitTables(keys, (part, i, n) => {
    const head = ["Card", "Host", "Judgement"].concat(part.map((k) => "row " + rowKeyText(k) + " (ms, z)"));
    const body = g.cards.map((card) => el("tr", { dataset: { uuid: card.device_uuid, outlier: String(card.outlier) }, class: card.outlier ? "bad" : "" },
      el("th", { scope: "row", title: card.device_uuid }, shortCard(card.device_uuid), " ", runLink(card.run_id, "run")),
      el("td", {}, card.host),
      el("td", { dataset: { field: "outlier", value: String(card.outlier) } }, card.outlier ? "outlier" : g.too_few_cards ? "not judged" : "within the fleet"),
      part.map((k) => {
        const cell = card.rows.find((r) => JSON.stringify(r.key) === JSON.stringify(k));
        if (!cell) return el("td", { class: "num" }, "–");
        const w = fleetWords(cell);
        return el("td", { class: "num " + (cell.outlier ? "verdict-slower" : ""), dataset: { key: rowKeyText(k), z: String(cell.z), value: String(cell.value_ms) }, title: w.text },
          num(cell.value_ms, 4), el("span", { class: "spread" }, " z " + (isNum(cell.z) ? num(cell.z, 3) : "–")), cell.outlier ? " (outlier)" : "");
      })));
    return table("fleet-cards", `Each card's latest valid median per row (ms per ${g.time_per}) and its z; outliers first` + (n > 1 ? ` (rows, part ${i + 1} of ${n})` : ""), head, body);
  }));
  // known_answer (issue 32): every good card of a model computes the same
  // exact answers, so a card off the majority's hash computes differently
  if (Array.isArray(g.result_hashes) && g.result_hashes.length) {
    const off = g.cards.filter((c) => (c.hash_differs || []).length);
    parts.push(el("p", { id: "fleet-hashes-" + gi, class: off.length ? "verdict verdict-slower" : "verdict verdict-same", dataset: { differ: String(off.length) } },
      off.length ? `${off.length} card(s) computed a result hash other than the model's majority: ` + off.map((c) => shortCard(c.device_uuid) + " @ " + c.host + " (" + c.hash_differs.join(", ") + ")").join("; ") + "."
        : "Every card computed the model's majority result hash for every kind."));
    parts.push(table("fleet-hashes", "The result hash of each kind: the one most cards share, and how many cards do not",
      ["Kind", "Majority hash", "Cards", "Differ"], g.result_hashes.map((h) => el("tr", { dataset: { key: rowKeyText(h.key) }, class: h.differ ? "bad" : "" },
        el("th", { scope: "row" }, rowKeyText(h.key)), el("td", { class: "mono" }, h.majority || "none (no majority)"),
        el("td", { class: "num" }, String(h.cards)), el("td", { class: "num" }, String(h.differ))))));
  }
  parts.push(table("fleet-rows", "The fleet per row: median and MAD (median absolute deviation) of the cards' medians",
    ["row", "Cards", `Median (ms per ${g.time_per})`, `MAD (ms per ${g.time_per})`],
    g.rows.map((r) => el("tr", { dataset: { key: rowKeyText(r.key) } }, el("th", { scope: "row" }, rowKeyText(r.key)),
      el("td", { class: "num" }, String(r.cards)), el("td", { class: "num" }, num(r.median_ms, 4)), el("td", { class: "num" }, num(r.mad_ms, 3))))));
  return el("section", { class: "fleet-group", "aria-labelledby": "fleet-group-" + gi }, parts);
}

// The benchmark menu's listeners; app.js calls this once.
export function initFleet() {
  $("#fleet-form").addEventListener("submit", (e) => {
    e.preventDefault();
    navigate("/" + qs({ view: "fleet", benchmark: $("#fleet-form").elements.benchmark.value }), true);
  });
  $("#fleet-form").addEventListener("change", () => {
    navigate("/" + qs({ view: "fleet", benchmark: $("#fleet-form").elements.benchmark.value }), true);
  });
}
