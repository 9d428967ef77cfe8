// The gpubench page: the node's GPUs, the runs with filters and paging,
// and one run's rows and metadata.  Plain JavaScript, no build step; all
// data comes from the daemon's JSON API.  The view lives in the URL
// (?run=ID, ?benchmark=...), so a link shows a colleague the same thing.
"use strict";

const $ = (sel) => document.querySelector(sel);

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(c ?? ""));
  return e;
}

async function api(path) {
  const r = await fetch(path, { headers: { Accept: "application/json" } });
  const body = await r.json();
  if (!r.ok) throw new Error(body.error ? body.error.message : r.statusText);
  return body;
}

function fmt(v, digits = 3) {
  if (typeof v !== "number") return v === null || v === undefined ? "" : String(v);
  return Number.isInteger(v) ? String(v) : v.toPrecision(digits);
}

async function showDevices() {
  const box = $("#devices");
  try {
    const d = await api("/devices");
    $("#host").textContent = d.host || "";
    if (!d.devices.length) {
      box.replaceChildren(el("p", { class: "note" }, "No GPU: " + d.reason));
      return;
    }
    const t = el("table", {}, el("tr", {}, ...["#", "Card", "UUID", "Worker", "Queue"].map((h) => el("th", {}, h))));
    for (const g of d.devices) {
      t.append(el("tr", {}, el("td", { class: "num" }, String(g.index)), el("td", {}, g.name),
        el("td", { class: "mono" }, g.uuid), el("td", {}, g.worker.state + (g.worker.healthy ? "" : " (unhealthy)")),
        el("td", { class: "num" }, String(g.queue_depth))));
    }
    box.replaceChildren(t);
  } catch (e) {
    box.replaceChildren(el("p", { class: "error" }, String(e.message)));
  }
}

function runsQuery(cursor) {
  const q = new URLSearchParams();
  for (const [k, v] of new FormData($("#filters"))) if (v) q.set(k, v);
  if (cursor) q.set("cursor", cursor);
  return q;
}

async function showRuns(append) {
  const body = $("#runs tbody");
  const cursor = append ? $("#more").dataset.cursor : null;
  const q = runsQuery(cursor);
  if (!append) history.replaceState(null, "", q.toString() ? "?" + q : "/");
  try {
    const page = await api("/runs?" + q);
    if (!append) body.replaceChildren();
    for (const r of page.runs) {
      const link = el("a", { href: "?run=" + r.id, class: "mono" }, r.id.slice(0, 13) + "…");
      body.append(el("tr", {}, el("td", {}, r.created_at), el("td", {}, r.benchmark),
        el("td", {}, r.device.name || ""), el("td", { class: "status-" + r.status }, r.status),
        el("td", {}, r.label || ""), el("td", {}, link)));
    }
    if (!page.runs.length && !append) body.append(el("tr", {}, el("td", { colspan: "6", class: "note" }, "No runs yet.")));
    const more = $("#more");
    more.hidden = !page.next;
    if (page.next) more.dataset.cursor = new URL(page.next, location.href).searchParams.get("cursor");
  } catch (e) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: "6", class: "error" }, e.message)));
  }
}

const ROW_FIELDS = ["stride", "variant", "pattern", "predicted_degree", "median_ms", "min_ms", "max_ms",
  "ratio", "gbps", "share_of_ceiling", "verified", "bank_conflicts", "wavefronts"];

function rowsTable(rows) {
  const cols = ROW_FIELDS.filter((f) => rows.some((r) => f in r));
  const t = el("table", {}, el("tr", {}, ...cols.map((c) => el("th", {}, c))));
  for (const r of rows) t.append(el("tr", {}, ...cols.map((c) => el("td", { class: typeof r[c] === "number" ? "num" : "" }, fmt(r[c], 4)))));
  return t;
}

async function showRun(id) {
  $("#runs-view").hidden = true;
  $("#devices-view").hidden = true;
  $("#run-view").hidden = false;
  const box = $("#run");
  try {
    const r = await api("/runs/" + encodeURIComponent(id));
    const parts = [el("h2", {}, r.benchmark + " on " + (r.device.name || "?")),
      el("p", {}, "Status: ", el("span", { class: "status-" + r.status }, r.status),
        r.queue_position ? " (position " + r.queue_position + " in the queue)" : "",
        r.progress && r.status === "running" ? " (" + r.progress.done + " of " + r.progress.total + ")" : ""),
      el("p", { class: "mono" }, "params " + JSON.stringify(r.params))];
    if (r.error) parts.push(el("p", { class: "error" }, r.error.code + ": " + r.error.message));
    if (r.meta && r.meta.synthetic) parts.push(el("p", { class: "error" }, "Synthetic result from a test double: nothing here was measured."));
    if (r.results) parts.push(rowsTable(r.results.rows));
    if (r.meta) parts.push(el("details", {}, el("summary", {}, "Card, driver and software"), el("pre", {}, JSON.stringify(r.meta, null, 2))));
    box.replaceChildren(...parts);
    if (r.status === "queued" || r.status === "running") setTimeout(() => showRun(id), 1000);
  } catch (e) {
    box.replaceChildren(el("p", { class: "error" }, e.message));
  }
}

async function init() {
  const q = new URLSearchParams(location.search);
  if (q.get("run")) return showRun(q.get("run"));
  try {
    const b = await api("/benchmarks");
    const sel = $("#filters select[name=benchmark]");
    for (const x of b.benchmarks) sel.append(el("option", {}, x.name));
  } catch (e) { /* the list shows the error */ }
  for (const [k, v] of q) { const f = $("#filters [name=" + k + "]"); if (f) f.value = v; }
  $("#filters").addEventListener("change", () => showRuns(false));
  $("#filters").addEventListener("submit", (e) => { e.preventDefault(); showRuns(false); });
  $("#more").addEventListener("click", () => showRuns(true));
  showDevices();
  showRuns(false);
}

init();
