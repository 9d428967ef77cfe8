// runs.js - the runs list (the page's default view): filters in the query
// string, one page of runs, paging by the daemon's cursor, the CSV and
// NDJSON downloads for the same filters; a list with live runs redraws
// itself every 2 s.

import { $, el, breakAtCommas } from "../lib/dom.js";
import { api } from "../lib/api.js";
import { isNum, qs, uuidTag } from "../lib/format.js";
import { state, benchmarks, devices, later, current, ready, errorBox, navigate } from "../lib/page.js";
import { timeEl, statusBadge, validityBadge, originTag, progressMessage, fillBenchmarkSelect, seeRealData } from "../lib/widgets.js";

const RUN_FILTERS = ["benchmark", "device", "host", "status", "valid", "label", "batch"];

async function fillStatusSelect(select) {
  await benchmarks();
  if (select.options.length > 1) return;
  for (const s of state.runStatuses) select.append(el("option", { value: s }, s));
}

export async function showRuns(q) {
  const gen = state.generation;
  const form = $("#filters");
  try {
    await fillBenchmarkSelect(form.elements.benchmark, true);
    await fillStatusSelect(form.elements.status);
  } catch (_) { /* the list below shows the error */ }
  devices().then((d) => {
    const list = $("#device-names");
    if (list.children.length) return;
    for (const name of new Set((d.devices || []).map((x) => x.name))) list.append(el("option", { value: name }));
  }).catch(() => {});
  for (const k of RUN_FILTERS) form.elements[k].value = q.get(k) || "";
  const batch = q.get("batch");
  $("#runs-batch").hidden = !batch;
  $("#runs-batch").textContent = batch ? "Showing the runs of batch " + batch + " (posted together)." : "";

  const filters = {};
  for (const k of RUN_FILTERS) filters[k] = q.get(k) || undefined;
  const cursor = q.get("cursor") || undefined;
  const limit = q.get("limit") || undefined;
  $("#dl-runs-csv").href = "/runs.csv" + qs(filters);
  $("#dl-runs-ndjson").href = "/runs.ndjson" + qs(filters);

  const body = $("#runs tbody");
  let page;
  try {
    page = await api("/runs" + qs({ ...filters, limit, cursor }));
  } catch (e) {
    if (!current(gen)) return;
    body.replaceChildren(el("tr", {}, el("td", { colspan: 9 }, errorBox(e))));
    ready();
    return;
  }
  if (!current(gen)) return;
  // Models with more than one card on this page: those rows name the card.
  const uuidsOf = new Map();
  for (const r of page.runs) if (r.device && r.device.uuid) uuidsOf.set(r.device.name, (uuidsOf.get(r.device.name) || new Set()).add(r.device.uuid));
  const sharedModel = new Set([...uuidsOf].filter(([, u]) => u.size > 1).map(([name]) => name));
  body.replaceChildren(...page.runs.map((r) => runRow(r, sharedModel)));
  if (!page.runs.length) {
    const any = RUN_FILTERS.some((k) => filters[k]);
    body.append(el("tr", {}, el("td", { colspan: 9, class: "note" },
      any ? "No run matches these filters." : el("p", {}, "No runs yet. ", el("a", { class: "nav", href: "?view=post" }, "Post the first one.")),
      any ? "" : seeRealData())));
  }
  const older = $("#runs-older");
  older.hidden = !page.next;
  if (page.next) {
    const next = new URL(page.next, location.href).searchParams.get("cursor");
    older.href = "/" + qs({ ...filters, limit, cursor: next });
  }
  const newest = $("#runs-newest");
  newest.hidden = !cursor;
  newest.href = "/" + qs({ ...filters, limit });
  ready();
  // A list with live runs keeps itself current.
  if (page.runs.some((r) => r.status === "queued" || r.status === "running")) later(() => showRuns(q), 2000);
}

// The parameters that differ from the benchmark's defaults, short: a
// [1, 32] run and a full sweep must not look alike.  Long lists keep their
// ends and say how many they hold.
function paramsText(r) {
  const bench = (state.benchmarks || []).find((b) => b.name === r.benchmark);
  const defaults = Object.fromEntries(((bench && bench.params) || []).map((p) => [p.name, p.default]));
  const short = (v) => (Array.isArray(v) ? (v.length > 6 ? [v[0], v[1], "…", v[v.length - 1]].join(",") + ` (${v.length})` : v.join(",")) : String(v));
  const parts = Object.entries(r.params || {})
    .filter(([k, v]) => !(k in defaults) || JSON.stringify(v) !== JSON.stringify(defaults[k]))
    .map(([k, v]) => k + "=" + short(v));
  return parts.length ? parts.join(" ") : "defaults";
}

function runRow(r, sharedModel) {
  const uuid = r.device && r.device.uuid;
  const card = r.device ? (r.device.name || "?") + (isNum(r.device.index) ? " #" + r.device.index : "") : "–";
  const cardTag = uuid && sharedModel.has(r.device.name) ? el("span", { class: "uuid-tag" }, " (" + uuidTag(uuid) + ")") : null;
  const synthetic = r.summary && r.summary.synthetic;
  return el("tr", { dataset: { id: r.id } },
    el("td", {}, timeEl(r.created_at)),
    el("td", {}, r.benchmark, synthetic ? el("span", { class: "tag", title: "made up by the worker's test double, not measured" }, "synthetic") : null),
    el("td", { class: "mono small params", title: JSON.stringify(r.params || {}) }, breakAtCommas(paramsText(r))),
    el("td", { class: "card", title: uuid }, card, cardTag),
    el("td", {}, r.host || "–", originTag(r)),
    el("td", {}, statusBadge(r.status), r.status === "failed" && r.error ? el("span", { class: "why" }, " " + r.error.code) : null,
      (r.status === "queued" || r.status === "running") && progressMessage(r) ? el("span", { class: "why progress-message" }, " " + progressMessage(r)) : null),
    el("td", { class: "validity-cell" }, r.status === "done" ? validityBadge(r) : "–"),
    el("td", {}, r.label || ""),
    el("td", {}, el("a", { class: "nav mono", href: "?run=" + encodeURIComponent(r.id), "aria-label": "run " + r.id }, r.id.slice(0, 8) + "…" + r.id.slice(-4))));
}

function applyFilters() {
  const f = {};
  for (const k of RUN_FILTERS) f[k] = $("#filters").elements[k].value.trim();
  navigate("/" + qs(f), true);
}

// The filter form's listeners; app.js calls this once.
export function initRuns() {
  $("#filters").addEventListener("submit", (e) => {
    e.preventDefault();
    applyFilters();
  });
  $("#filters").addEventListener("change", (e) => {
    if (e.target.tagName === "SELECT") applyFilters();
  });
}
