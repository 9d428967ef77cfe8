// coverage.js - the coverage matrix (?view=coverage&max_age=24h&host=NAME):
// every card this daemon knows (rows) against every health benchmark
// (columns), each cell its state in words (fresh, stale, never, failing)
// with the colour only helping, and a link to the run that checked it.
// One GET /coverage answer draws it all: a hub of thousands of cards is
// one table, no request per card.  A card's name links to its card page
// (card.js).  The URL keeps the window and the host, so a link shows a
// colleague the same matrix.

import { $, el, table } from "../lib/dom.js";
import { num, shortCard } from "../lib/format.js";
import { state, ready, loadInto, navigate } from "../lib/page.js";

// The states in the order the totals show them, and what each means.
export const COVERAGE_STATES = {
  failing: "its newest valid run missed a floor",
  stale: "its newest valid run is older than the window",
  never: "no valid run of this benchmark on this card",
  fresh: "a valid run within the window",
};

export function cardUrl(card) {
  const q = new URLSearchParams({ view: "card", uuid: card.uuid });
  if (card.host) q.set("host", card.host);
  return "/?" + q.toString();
}

export function cardStateBadge(s, reason) {
  return el("span", { class: "badge card-" + s, dataset: { field: "card-state", value: s }, title: reason || undefined }, s);
}

// "3h": an age in its largest whole unit, as the daemon's reasons say it.
export function ageText(s) {
  if (typeof s !== "number") return "";
  if (s >= 2 * 86400) return Math.floor(s / 86400) + "d";
  if (s >= 2 * 3600) return Math.floor(s / 3600) + "h";
  if (s >= 2 * 60) return Math.floor(s / 60) + "m";
  return s + "s";
}

// One cell: the state in words, linked to its run when there is one.
export function coverageCell(c) {
  if (!c) return el("td", { class: "cov-cell cov-none", title: "not run on a node of this size" }, "–");
  const words = c.state + (c.age_s !== null && c.age_s !== undefined ? " · " + ageText(c.age_s) : "");
  const title = COVERAGE_STATES[c.state] + (c.at ? "; run finished " + c.at : "");
  return el("td", { class: "cov-cell cov-" + c.state, dataset: { benchmark: c.benchmark, state: c.state }, title },
    c.run_id ? el("a", { class: "nav", href: "?run=" + encodeURIComponent(c.run_id) }, words) : words);
}

function coverageUrl(maxAge, host) {
  const q = new URLSearchParams({ view: "coverage" });
  if (maxAge) q.set("max_age", maxAge);
  if (host) q.set("host", host);
  return "/?" + q.toString();
}

function totalsLine(totals) {
  const parts = Object.keys(COVERAGE_STATES).filter((s) => s in totals).map((s) =>
    el("span", { class: "cov-total", dataset: { state: s, count: String(totals[s]) } }, num(totals[s]), " ", s));
  return el("p", { id: "coverage-totals" }, "Cells: ", parts.flatMap((p, i) => (i ? [", ", p] : [p])), ".");
}

export async function showCoverage(q) {
  const gen = state.generation;
  const out = $("#coverage");
  const form = $("#coverage-form");
  const maxAge = q.get("max_age") || "";
  const host = q.get("host") || "";
  form.elements.max_age.value = maxAge;
  form.elements.host.value = host;
  const query = new URLSearchParams();
  if (maxAge) query.set("max_age", maxAge);
  if (host) query.set("host", host);
  const data = await loadInto("/coverage" + (query.toString() ? "?" + query.toString() : ""), out, gen);
  if (!data) return;
  const names = data.benchmarks || [];
  const cards = data.cards || [];
  const parts = [totalsLine(data.totals || {})];
  if (!cards.length) {
    parts.push(el("p", { class: "note", id: "coverage-empty" }, "No card known", host ? " on " + host : "",
      ": this daemon has no GPU and no runs from peers or imports yet."));
  } else {
    const rows = cards.map((c) => {
      const byName = {};
      for (const cell of c.cells || []) byName[cell.benchmark] = cell;
      return el("tr", { dataset: { uuid: c.uuid, host: c.host, state: c.state || "" } },
        el("th", { scope: "row" },
          el("a", { class: "nav card-link", href: cardUrl(c), title: c.uuid }, "GPU " + (c.index ?? "?") + " · " + shortCard(c.uuid)),
          el("span", { class: "note small" }, " ", c.name || "?", " @ ", c.host, c.own ? " (this node)" : "")),
        el("td", { class: "badge-cell" }, cardStateBadge(c.state || "unknown", c.reason)),
        names.map((n) => coverageCell(byName[n])));
    });
    parts.push(table("coverage", "Each card's newest valid run of each health benchmark, within " +
      ageText(data.max_age_s) + " or not (the state in words; a cell links to its run)", ["Card", "State", ...names], rows));
  }
  out.replaceChildren(...parts);
  ready();
}

// The form's listener; app.js calls this once.
export function initCoverage() {
  const form = $("#coverage-form");
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    navigate(coverageUrl(form.elements.max_age.value.trim(), form.elements.host.value.trim()), true);
  });
}
