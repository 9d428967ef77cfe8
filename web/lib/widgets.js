// widgets.js - the pieces more than one view draws: a run's status and
// validity badges, its origin, times, the "Copy as markdown" button, a
// chart's <figure>, the benchmark menu, the verdict words and run links,
// and a health run's checks against its card model's floors.
// Each builds elements from its arguments and what page.js has read; none
// keeps state of its own.

import { $, el, table } from "./dom.js";
import { TOKEN_KEY } from "./api.js";
import { isNum, num, localTime } from "./format.js";
import { benchmarks } from "./page.js";
import * as GBCharts from "./charts.js";

// "Copy as markdown": the daemon's report (GET /runs/ID.md, /compare.md)
// to the clipboard; where the clipboard is refused (no secure context, no
// permission) the text is shown selected instead, for Ctrl-C.
export function copyMarkdown(url) {
  const status = el("span", { class: "copy-status", role: "status" });
  const box = el("span", { class: "copy-markdown" });
  const button = el("button", { type: "button", class: "copy-md", onclick: async () => {
    status.textContent = "";
    let text;
    try {
      const token = sessionStorage.getItem(TOKEN_KEY);
      const r = await fetch(url, { headers: token ? { Authorization: "Bearer " + token } : {} });
      text = await r.text();
      if (!r.ok) throw new Error("HTTP " + r.status + ": " + text.slice(0, 200));
    } catch (e) {
      status.textContent = "could not get the markdown: " + e.message;
      return;
    }
    try {
      if (!navigator.clipboard || !window.isSecureContext) throw new Error("no clipboard");
      await navigator.clipboard.writeText(text);
      status.textContent = "copied";
    } catch (e) {
      const area = el("textarea", { class: "markdown-text", readonly: true, rows: 12, cols: 100, "aria-label": "the markdown, selected: copy it with Ctrl-C" });
      area.value = text;
      box.querySelector("textarea")?.remove();
      box.append(area);
      area.focus();
      area.select();
      status.textContent = "selected: copy it with Ctrl-C";
    }
  } }, "Copy as markdown");
  box.append(button, " ", status);
  return box;
}

export function timeEl(iso) {
  return el("time", { datetime: iso || undefined, title: iso ? iso + " (UTC)" : undefined }, localTime(iso));
}

export function statusBadge(status) {
  return el("span", { class: "badge status-" + status }, status);
}

// The run's verdict (issue 13): valid, invalid with its reason codes, or
// unknown (a run the worker did not watch: treated as valid).  Words first,
// the colour only helps; the reasons' sentences are in the title.
export function validityOf(run) {
  const v = (run && run.validity) || {};
  const reasons = Array.isArray(v.reasons) ? v.reasons : [];
  const state = v.valid === true ? "valid" : v.valid === false ? "invalid" : "unknown";
  // notes: what to know without the run being invalid (power_capped: the
  // power-bound GEMM rows ran at the card's power cap, as they are meant to).
  const notes = Array.isArray(v.notes) ? v.notes : [];
  return { state, reasons, note: v.note, notes };
}

export function validityBadge(run) {
  const { state, reasons, note } = validityOf(run);
  const codes = reasons.map((r) => r.code);
  const text = state === "invalid" ? "invalid: " + codes.join(", ") : state;
  const title = state === "invalid" ? reasons.map((r) => r.message).join("\n")
    : state === "valid" ? "the card was watched and nothing disturbed the run"
    : note || "not watched (a run from before the watch, or an import): treated as valid";
  return el("span", { class: "badge validity validity-" + state, title, dataset: { validity: state, codes: codes.join(",") } }, text);
}

// Where a run came from, in words, or null for a run measured here: the
// host column names the machine that measured it, this says which node
// handed it to us ("import": POST /runs/import; otherwise the peer's URL).
export function originText(r) {
  if (!r.origin) return null;
  if (r.origin === "import") return "imported";
  return "from " + (typeof r.origin === "string" ? r.origin.replace(/^https?:\/\//, "") : JSON.stringify(r.origin));
}

export function originTag(r) {
  const t = originText(r);
  return t ? el("span", { class: "tag origin", title: "not measured by this node: " + (typeof r.origin === "string" ? r.origin : JSON.stringify(r.origin)) }, t) : null;
}

// Why the worker is not measuring yet ("waiting for a quiet card: pid ..."),
// from its progress lines; null when it said nothing.
export function progressMessage(run) {
  const m = run.progress && run.progress.message;
  return typeof m === "string" && m ? m : null;
}

// A <figure> holding a chart's canvas; its table is the accessible twin.
export function chartFigure(caption, draw) {
  const canvas = el("canvas", { role: "img", "aria-label": caption + ". The table below has the same numbers." });
  const fig = el("figure", { class: "chart", dataset: { chart: "pending" } }, el("div", { class: "chart-box" }, canvas), el("figcaption", {}, caption));
  return { fig, draw: () => chartOrNote(fig, () => draw(canvas)) };
}

export function chartOrNote(fig, draw) {
  if (!GBCharts.available()) {
    fig.dataset.chart = "unavailable";
    $(".chart-box", fig).replaceWith(el("p", { class: "note" }, "No chart: Chart.js is not installed on this node (install the Debian package libjs-chart.js). The table has every number."));
    return;
  }
  try {
    draw();
  } catch (e) {
    fig.dataset.chart = "failed";
    fig.append(el("p", { class: "error" }, "The chart failed: " + e.message));
    throw e;
  }
}

export async function fillBenchmarkSelect(select, withAny) {
  const list = await benchmarks();
  if (select.options.length > (withAny ? 1 : 0)) return;
  for (const b of list) select.append(el("option", { value: b.name }, b.name));
}

// How to see real numbers without a GPU: the H200 runs that come with
// gpubench, imported as they were exported (GET /runs.ndjson).
export function seeRealData() {
  const cmd = (f) => el("code", { class: "cmd" }, "curl -H 'Content-Type: application/x-ndjson' --data-binary @examples/" + f + " " + location.origin + "/runs/import");
  return el("p", { class: "note see-real-data" }, "No GPU here? See real data: import the H200 runs that come with gpubench, from the source tree: ",
    cmd("h200_daemon_trust/trust_runs.ndjson"), " and ", cmd("h200_daemon_health/health_runs.ndjson"),
    " (add ", el("code", {}, "-H 'Authorization: Bearer TOKEN'"), " where this daemon asks for a token).");
}

export const VERDICT_WORDS = { same: "same", faster: "faster", slower: "slower", inconclusive: "inconclusive", within_spread: "within the card's own run-to-run spread", too_few_runs: "too few runs to judge" };

export function runLink(id, text) {
  return id ? el("a", { class: "nav mono", href: "?run=" + encodeURIComponent(id) }, text || id.slice(-6)) : "–";
}

// Checks against the floors (issue 24), as a run has them (GET /runs/ID's
// checks) and as a card has its latest (GET /cards/UUID's, with the
// benchmark, the fleet's learned median and the run): one table for both,
// whose columns are these, each shown where some check has its field.  The
// result is in words; the badge's colour only repeats them.
const CHECK_COLUMNS = [
  ["Value", () => true, (c) => el("td", { class: "num", dataset: { field: "value", value: String(c.value) } }, num(c.value), " ", c.unit || "")],
  // a ceiling's check (issue 32: a count that must stay 0, a temperature
  // under NVML's slowdown threshold) shows "≤ ceiling" in this column
  ["Floor", () => true, (c) => isNum(c.ceiling)
    ? el("td", { class: "num", dataset: { field: "ceiling", value: String(c.ceiling) }, title: c.source || undefined }, "≤ ", num(c.ceiling), " ", c.unit || "")
    : el("td", { class: "num", dataset: { field: "floor", value: String(c.floor) }, title: c.source || undefined },
      isNum(c.floor) ? [num(c.floor), " ", c.unit || ""] : "–")],
  ["Learned (fleet median)", (c) => "learned" in c, (c) => el("td", { class: "num", title: c.learned ? "over " + c.learned.n_cards + " cards of its model" : "too few cards of its model have a valid run" },
    c.learned && isNum(c.learned.value) ? [num(c.learned.value), " ", c.unit || ""] : "–")],
  ["Result", () => true, (c) => el("td", { class: "badge-cell", dataset: { field: "pass" } }, c.pass === false
    ? [el("span", { class: "badge card-degraded" }, isNum(c.ceiling) ? (c.exact ? "wrong" : "over the ceiling") : "below the floor"), c.message ? el("span", { class: "small check-message" }, " " + c.message) : ""]
    : c.pass === true ? el("span", { class: "badge card-healthy" }, "pass") : "not judged")],
  ["Source of the floor", () => true, (c) => el("td", { class: "note small" }, c.source || "–")],
  ["Run", (c) => "run_id" in c, (c) => el("td", {}, runLink(c.run_id))],
];

export function checksTable(cls, caption, checks) {
  const cols = CHECK_COLUMNS.filter(([, has]) => checks.some(has));
  return table(cls, caption, ["Row", ...cols.map(([h]) => h)], checks.map((c) => el("tr", { dataset: { row: String(c.row), pass: String(c.pass) } },
    el("th", { scope: "row" }, (c.benchmark ? c.benchmark + " · " : "") + c.row), cols.map(([, , cell]) => cell(c)))));
}

// What more samples would do for a verdict row: roughly how many a group
// would decide it, or why none would (issue 21: the shift sits at the
// margin, or the interval is too wide), or nothing for a decided row.
export function moreSamplesText(r) {
  if (isNum(r.more_samples)) return "≈" + r.more_samples + " a group";
  return r.undecidable || "–";
}

// A fleet group's (or a run's fleet part's) too_few_cards in words.
export function tooFewCardsText(cards, needed) {
  return `Too few cards: ${cards} of this model and these parameters, ${needed} needed; nothing is judged and nobody flagged.`;
}

// A fleet cell's judgement in words: outlier, within, or not judged.
export function fleetWords(cell) {
  if (cell.outlier) return { cls: "verdict-slower", text: isNum(cell.z) && cell.z < 0 ? "outlier (fast)" : "outlier" };
  if (isNum(cell.z)) return { cls: "verdict-same", text: "within the fleet" };
  return { cls: "note", text: "not judged" };
}

// Tables that fit their box (issue 26).  Numbers never wrap, so a table
// of many columns (a run's 16 row fields, 27 cards on a compare, 33
// strides in the fleet) can be wider than the page, and a column behind a
// scroll bar is a column nobody reads.  fitTables holds the columns and
// build(cols, part, parts), which makes one table (in its .table-wrap) of
// some of them, repeating whatever heads its rows; layTables() then lays
// each such set out in as few tables as fit their box (a single column a
// table that still does not fit scrolls).  A view calls layTables() once
// its elements are in the page (before ready(), so that what a test
// measures is laid out); the page calls it again when the window resizes.
const sets = new Set();

export function fitTables(columns, build) {
  const holder = el("div", { class: "table-set" }, build(columns, 0, 1));
  sets.add({ holder, columns, build, shown: false });
  return holder;
}

function lay({ holder, columns, build }) {
  let last = 0;
  for (let parts = 1; parts <= Math.max(1, columns.length); parts++) {
    const per = Math.max(1, Math.ceil(columns.length / parts));
    if (per === last) continue;
    last = per;
    const n = Math.max(1, Math.ceil(columns.length / per));
    const tables = [];
    for (let i = 0; i < n; i++) tables.push(build(columns.slice(i * per, (i + 1) * per), i, n));
    holder.replaceChildren(...tables);
    if (tables.every((w) => w.scrollWidth <= w.clientWidth + 1)) return;
  }
}

export function layTables() {
  for (const set of sets) {
    // Not in the page: not yet (kept), or no longer (dropped).
    if (!set.holder.isConnected) { if (set.shown) sets.delete(set); continue; }
    set.shown = true;
    lay(set);
  }
}

let resizing = null;
window.addEventListener("resize", () => {
  clearTimeout(resizing);
  resizing = setTimeout(layTables, 150);
});
