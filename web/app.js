// The gpubench page: runs with filters and paging, one run (chart, rows,
// metadata, live progress), cards compared, and a form to post a run.
// Plain JavaScript, no build step, no inline script or style (the page runs
// under a Content-Security-Policy); all data comes from the daemon's JSON API.
// The view lives in the query string, so a link shows a colleague the same
// thing: ?run=ID, ?view=compare&benchmark=..., ?view=fleet&benchmark=...,
// ?view=alerts, ?view=post, else the runs list.
"use strict";

const $ = (sel, root) => (root || document).querySelector(sel);
const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));

// ---------------------------------------------------------------- helpers

// Builds an element.  Attributes only; never a "style" string, which the
// Content-Security-Policy forbids.
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "dataset") Object.assign(e.dataset, v);
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// "Copy as markdown": the daemon's report (GET /runs/ID.md, /compare.md)
// to the clipboard; where the clipboard is refused (no secure context, no
// permission) the text is shown selected instead, for Ctrl-C.
function copyMarkdown(url) {
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

class ApiError extends Error {
  constructor(status, body) {
    const err = (body && body.error) || {};
    super(err.message || "HTTP " + status);
    this.status = status;
    this.code = err.code;
    this.field = err.field;
  }
}

const TOKEN_KEY = "gpubench.token";

// One request to the daemon.  A token kept for this tab goes with every
// request (a daemon started with --auth-reads wants it for reads too); the
// daemon asks for one with a 401.
async function api(path, opts = {}) {
  const headers = { Accept: "application/json" };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = "Bearer " + token;
  if (opts.body !== undefined) headers["Content-Type"] = "application/json";
  const r = await fetch(path, {
    method: opts.method || "GET",
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  let body = null;
  try { body = await r.json(); } catch (_) { /* not JSON: the status says enough */ }
  if (!r.ok) {
    const e = new ApiError(r.status, body);
    // A read refused for want of a token: ask once, at the top of the page.
    if (r.status === 401 && (opts.method || "GET") === "GET") tokenBar(token ? "The daemon refused this token." : "This daemon wants a bearer token to show its runs.");
    throw e;
  }
  return body;
}

// The token prompt for reads: a small form at the top of the page.  The
// token stays in sessionStorage: this tab only, gone when it closes.
function tokenBar(message) {
  let bar = $("#token-bar");
  if (!bar) {
    const input = el("input", { id: "token-bar-input", type: "password", autocomplete: "off", size: 28 });
    bar = el("form", { id: "token-bar", class: "notice token-bar" },
      el("span", { id: "token-bar-msg" }), " ",
      el("label", { for: "token-bar-input" }, "Bearer token"), " ", input, " ",
      el("button", { type: "submit" }, "Use token"),
      el("span", { class: "note" }, " kept for this tab only"));
    bar.addEventListener("submit", (e) => {
      e.preventDefault();
      const v = input.value.trim();
      if (v) sessionStorage.setItem(TOKEN_KEY, v); else sessionStorage.removeItem(TOKEN_KEY);
      bar.remove();
      state.benchmarks = null;
      state.devices = null;
      render(false);
    });
    $("#notices").append(bar);
  }
  $("#token-bar-msg").textContent = message;
}

// Download links cannot carry a bearer header; where a token is set, the
// file is fetched with it and handed to the browser as a blob instead.
document.addEventListener("click", async (e) => {
  const a = e.target.closest("a[download]");
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (!a || !token || a.dataset.blob) return;
  e.preventDefault();
  const r = await fetch(a.href, { headers: { Authorization: "Bearer " + token } });
  if (!r.ok) { pageError("download " + a.getAttribute("href") + ": HTTP " + r.status); return; }
  const url = URL.createObjectURL(await r.blob());
  const tmp = el("a", { href: url, download: a.getAttribute("href").split("?")[0].split("/").pop(), dataset: { blob: "1" }, hidden: true });
  document.body.append(tmp);
  tmp.click();
  tmp.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
});

function isNum(v) {
  return typeof v === "number" && Number.isFinite(v);
}

// Significant digits, without exponent noise for everyday magnitudes.
function num(v, digits = 4) {
  if (!isNum(v)) return "–";
  if (Number.isInteger(v) && Math.abs(v) < 1e15) return v.toLocaleString("en-US");
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e9)) return v.toExponential(digits - 1);
  return Number(v.toPrecision(digits)).toLocaleString("en-US", { maximumFractionDigits: 6 });
}

function pct(v, digits = 3) {
  return isNum(v) ? num(v * 100, digits) + " %" : "–";
}

function localTime(iso) {
  if (!iso) return "–";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const p = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

function timeEl(iso) {
  return el("time", { datetime: iso || undefined, title: iso ? iso + " (UTC)" : undefined }, localTime(iso));
}

function duration(a, b) {
  if (!a || !b) return null;
  const s = (new Date(b) - new Date(a)) / 1000;
  if (!isNum(s)) return null;
  return s < 1 ? num(s * 1000, 3) + " ms" : s < 120 ? num(s, 3) + " s" : num(s / 60, 3) + " min";
}

function statusBadge(status) {
  return el("span", { class: "badge status-" + status }, status);
}

// The run's verdict (issue 13): valid, invalid with its reason codes, or
// unknown (a run the worker did not watch: treated as valid).  Words first,
// the colour only helps; the reasons' sentences are in the title.
function validityOf(run) {
  const v = (run && run.validity) || {};
  const reasons = Array.isArray(v.reasons) ? v.reasons : [];
  const state = v.valid === true ? "valid" : v.valid === false ? "invalid" : "unknown";
  // notes: what to know without the run being invalid (power_capped: the
  // power-bound GEMM rows ran at the card's power cap, as they are meant to).
  const notes = Array.isArray(v.notes) ? v.notes : [];
  return { state, reasons, note: v.note, notes };
}

function validityBadge(run) {
  const { state, reasons, note } = validityOf(run);
  const codes = reasons.map((r) => r.code);
  const text = state === "invalid" ? "invalid: " + codes.join(", ") : state;
  const title = state === "invalid" ? reasons.map((r) => r.message).join("\n")
    : state === "valid" ? "the card was watched and nothing disturbed the run"
    : note || "not watched (a run from before the watch, or an import): treated as valid";
  return el("span", { class: "badge validity validity-" + state, title, dataset: { validity: state, codes: codes.join(",") } }, text);
}

function qs(obj) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(obj)) if (v !== undefined && v !== null && v !== "") q.set(k, v);
  const s = q.toString();
  return s ? "?" + s : "";
}

function errorBox(e) {
  return el("p", { class: "error", role: "alert" }, e instanceof ApiError && e.code ? e.code + ": " + e.message : String(e.message || e));
}

// The row key of a benchmark's rows ("stride" or "variant").
function rowKey(rows) {
  for (const k of ["stride", "variant", "pattern", "key", "label"]) if (rows.some((r) => k in r)) return k;
  return null;
}

// (max - min) / median, as the worker reports it; computed where absent.
function spreadOf(r) {
  if (isNum(r.spread)) return r.spread;
  if (isNum(r.max_ms) && isNum(r.min_ms) && isNum(r.median_ms) && r.median_ms > 0) return (r.max_ms - r.min_ms) / r.median_ms;
  return null;
}

// ---------------------------------------------------------------- page state

const state = {
  benchmarks: null, // from /benchmarks
  runStatuses: [], // from /benchmarks too: the status filter's choices
  resultFields: null, // from /benchmarks too: the result-row fields
  devices: null, // from /devices
  generation: 0, // bumped on every render; stale timers and fetches stop
  timers: [],
};

async function benchmarks() {
  if (!state.benchmarks) {
    const body = await api("/benchmarks");
    state.runStatuses = body.run_statuses || [];
    state.resultFields = body.result_fields || [];
    state.benchmarks = body.benchmarks;
  }
  return state.benchmarks;
}

async function devices() {
  if (!state.devices) state.devices = await api("/devices");
  return state.devices;
}

function later(fn, ms) {
  const gen = state.generation;
  state.timers.push(setTimeout(() => { if (gen === state.generation) fn(); }, ms));
}

function current(gen) {
  return gen === state.generation;
}

function ready() {
  document.documentElement.dataset.state = "ready";
}

// Tells a reader what is missing rather than leaving an empty box.
function notice(id, ...content) {
  if ($("#" + id)) return;
  $("#notices").append(el("p", { id, class: "notice" }, ...content));
}

// Errors that escape: shown on the page (and counted on <html>, where a
// test reads them) instead of only in a console nobody opens.
function pageError(msg) {
  const box = $("#page-errors");
  box.hidden = false;
  box.append(el("p", {}, "Page error: " + msg));
  const n = Number(document.documentElement.dataset.errors || 0) + 1;
  document.documentElement.dataset.errors = String(n);
}
window.addEventListener("error", (e) => pageError(e.message || "script error"));
window.addEventListener("unhandledrejection", (e) => pageError(String(e.reason && e.reason.message || e.reason)));

// ---------------------------------------------------------------- routing

function navigate(url, replace) {
  history[replace ? "replaceState" : "pushState"](null, "", url);
  render(true);
}

// Internal links (class "nav") change the view without reloading; a
// modified click (new tab) is left to the browser.
document.addEventListener("click", (e) => {
  const a = e.target.closest("a.nav");
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || url.pathname !== "/") return;
  e.preventDefault();
  navigate(url.pathname + url.search);
});
window.addEventListener("popstate", () => render(true));

function render(moveFocus) {
  state.generation++;
  state.timers.forEach(clearTimeout);
  state.timers = [];
  GBCharts.destroyAll();
  document.documentElement.dataset.state = "loading";
  const q = new URLSearchParams(location.search);
  const view = q.get("run") ? "run" : q.get("view") || "runs";
  for (const v of $$(".view")) v.hidden = v.id !== "view-" + view;
  for (const a of $$("header nav a")) {
    if (a.id === "nav-" + view || (view === "run" && a.id === "nav-runs")) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  // fleet and alerts are verdicts.js's, loaded after this file
  const show = { runs: showRuns, run: showRun, compare: showCompare, post: showPost, fleet: showFleet, alerts: showAlerts }[view] || showRuns;
  const done = show(q);
  // After a click, move focus to the new view's heading, as a page load would.
  if (moveFocus) Promise.resolve(done).then(() => { const h = $(".view:not([hidden]) h1"); if (h) h.focus({ preventScroll: true }); window.scrollTo(0, 0); });
}

// ---------------------------------------------------------------- runs list

const RUN_FILTERS = ["benchmark", "device", "host", "status", "valid", "label", "batch"];

async function fillBenchmarkSelect(select, withAny) {
  const list = await benchmarks();
  if (select.options.length > (withAny ? 1 : 0)) return;
  for (const b of list) select.append(el("option", { value: b.name }, b.name));
}

async function fillStatusSelect(select) {
  await benchmarks();
  if (select.options.length > 1) return;
  for (const s of state.runStatuses) select.append(el("option", { value: s }, s));
}

// How to see real numbers without a GPU: the H200 runs that come with
// gpubench, imported as they were exported (GET /runs.ndjson).
function seeRealData() {
  const cmd = (f) => el("code", { class: "cmd" }, "curl --data-binary @examples/" + f + " " + location.origin + "/runs/import");
  return el("p", { class: "note see-real-data" }, "No GPU here? See real data: import the H200 runs that come with gpubench, from the source tree: ",
    cmd("h200_daemon_trust/trust_runs.ndjson"), " and ", cmd("h200x2_daemon_health/health_runs.ndjson"),
    " (add ", el("code", {}, "-H 'Authorization: Bearer TOKEN'"), " where this daemon asks for a token).");
}

async function showRuns(q) {
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

// A card's UUID shortened to what tells two cards of one model apart
// (the runs list and the compare page say it the same way).
function uuidTag(uuid) {
  return uuid.replace(/^GPU-/, "").slice(0, 8) + "…" + uuid.slice(-4);
}

// Where a run came from, in words, or null for a run measured here: the
// host column names the machine that measured it, this says which node
// handed it to us ("import": POST /runs/import; otherwise the peer's URL).
function originText(r) {
  if (!r.origin) return null;
  if (r.origin === "import") return "imported";
  return "from " + (typeof r.origin === "string" ? r.origin.replace(/^https?:\/\//, "") : JSON.stringify(r.origin));
}

function originTag(r) {
  const t = originText(r);
  return t ? el("span", { class: "tag origin", title: "not measured by this node: " + (typeof r.origin === "string" ? r.origin : JSON.stringify(r.origin)) }, t) : null;
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

// Text that may break after its commas (<wbr>), so a long list wraps in a
// narrow column between numbers, never inside one.
function breakAtCommas(text) {
  return text.split(",").flatMap((part, i) => (i ? [",", el("wbr"), part] : [part]));
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

$("#filters").addEventListener("submit", (e) => {
  e.preventDefault();
  applyFilters();
});
$("#filters").addEventListener("change", (e) => {
  if (e.target.tagName === "SELECT") applyFilters();
});

function applyFilters() {
  const f = {};
  for (const k of RUN_FILTERS) f[k] = $("#filters").elements[k].value.trim();
  navigate("/" + qs(f), true);
}

// ---------------------------------------------------------------- one run

// The result-row fields come from GET /benchmarks (the server's one table,
// common/result_fields.c): a row table's columns, a compare menu's metrics
// and how each value is shown follow from a field's type, unit and digits.
function fieldShow(f) {
  const d = f.digits || undefined;
  if (f.type === "boolean") return (v) => (v === true ? "yes" : v === false ? "NO" : "–");
  if (f.type === "number[]") return (v) => (Array.isArray(v) ? String(v.length) : "–");
  if (f.unit === "x") return (v) => (isNum(v) ? num(v, d) + "×" : "–");
  if (f.unit === "share") return (v) => pct(v, d);
  return (v) => num(v, d);
}

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

function rowsTable(rows, key, caption, benchmark) {
  const withSpread = rows.map((r) => ({ ...r, spread: spreadOf(r) }));
  const cols = rowColumns().filter(([f]) => withSpread.some((r) => r[f] !== undefined && (f !== "spread" || r.spread !== null)));
  const header = (f, h) => (f === "ratio" && RATIO_HEADER[benchmark]) || h;
  const head = el("tr", {}, el("th", { scope: "col" }, key || "row"), cols.map(([f, h]) => el("th", { scope: "col" }, header(f, h))));
  const body = withSpread.map((r, i) => el("tr", { dataset: { key: key ? String(r[key]) : String(i) } },
    el("th", { scope: "row" }, key ? String(r[key]) : String(i + 1)),
    cols.map(([f, , show]) => {
      const v = r[f];
      // data-value keeps the exact number for whoever reads the DOM (tests).
      const attrs = { dataset: { field: f }, class: typeof v === "number" || Array.isArray(v) ? "num" : "" };
      if (typeof v === "number" || typeof v === "boolean") attrs.dataset.value = String(v);
      if (Array.isArray(v)) { attrs.dataset.value = String(v.length); attrs.title = v.map((x) => num(x, 4)).join(", ") + " ms"; }
      if (f === "verified" && v === false) attrs.class = "bad";
      return el("td", attrs, show(v));
    })));
  return el("div", { class: "table-wrap" }, el("table", { class: "rows" }, el("caption", {}, caption), el("thead", {}, head), el("tbody", {}, body)));
}

// A <figure> holding a chart's canvas; its table is the accessible twin.
function chartFigure(caption, draw) {
  const canvas = el("canvas", { role: "img", "aria-label": caption + ". The table below has the same numbers." });
  const fig = el("figure", { class: "chart", dataset: { chart: "pending" } }, el("div", { class: "chart-box" }, canvas), el("figcaption", {}, caption));
  return { fig, draw: () => chartOrNote(fig, () => draw(canvas)) };
}

function chartOrNote(fig, draw) {
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

function runChart(run) {
  const rows = (run.results && run.results.rows) || [];
  if (!rows.length) return null;
  const summary = run.results.summary || {};
  const dev = (run.device && run.device.name) || "this card";
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

async function showRun(q) {
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
  const warnings = [];
  if (meta.synthetic || summary.synthetic) warnings.push(el("p", { class: "warn synthetic", role: "note" }, el("strong", {}, "Synthetic: "), "these numbers were made up by the worker's test double. Nothing here was measured on a GPU."));
  if (meta.clock_dropped === true) warnings.push(el("p", { class: "warn" }, el("strong", {}, "Clock dropped: "), "the SM clock fell during the measurement (see the card's state below); times may be inflated."));
  if (summary.ceiling_suspect) warnings.push(el("p", { class: "warn" }, el("strong", {}, "Ceiling suspect: "), "a variant ran faster than the copy ceiling (" + (summary.over_ceiling || []).join(", ") + "), so the ceiling is wrong, not the variant fast."));
  if (rows.some((r) => r.verified === false)) warnings.push(el("p", { class: "warn" }, el("strong", {}, "Unverified output: "), "a variant did not write the right result; its time means nothing."));
  if (run.error) warnings.push(el("p", { class: "error", role: "alert" }, el("strong", {}, "Failed: "), run.error.code + ": " + run.error.message));
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
  else if (run.status === "done") results.append(el("p", { class: "note" }, "This run has no rows."));
  if (summary.matrix && Array.isArray(summary.matrix.devices)) {
    results.append(matrixFigure(summary.matrix, "gbps", "GB/s", "Peer bandwidth, GB/s from each GPU (row) to each (column); darker is faster, every cell holds its number"));
    if (Array.isArray(summary.matrix.latency_us)) results.append(matrixFigure(summary.matrix, "latency_us", "µs", "Peer latency, µs from each GPU (row) to each (column)"));
  }
  results.append(summaryPanel(run.benchmark, summary));
  const verdicts = runVerdictsPanel(run); // verdicts.js
  if (verdicts) results.append(verdicts);

  box.replaceChildren(el("div", { class: "run-grid" }, el("div", { class: "run-main" }, parts, results), metaPanel(run)));
  if (fig) fig.draw();
  if (verdicts && run.verdicts && run.verdicts.judged) runAlerts(run);
}

// The verdict with each reason's sentence: what makes this run trustworthy
// or not.
function validityPanel(run) {
  const { state, reasons } = validityOf(run);
  const box = el("div", { id: "run-validity", class: "validity-panel validity-" + state, role: state === "invalid" ? "note" : undefined },
    el("strong", {}, "Validity: "), validityBadge(run));
  if (state === "invalid") box.append(el("ul", {}, reasons.map((r) => el("li", { dataset: { code: r.code } }, el("strong", {}, r.code), ": " + r.message))));
  else if (state === "unknown") box.append(" ", el("span", { class: "note" }, "this run was not watched (made before the watch, or imported); it counts as valid."));
  const { notes } = validityOf(run);
  if (notes.length) box.append(el("ul", { class: "validity-notes" }, notes.map((n) => el("li", { class: "note", dataset: { note: n.code } }, el("strong", {}, "note " + n.code), ": " + n.message + (isNum(n.enforced_power_limit_w) ? ` (enforced power limit ${n.enforced_power_limit_w} W)` : "")))));
  return box;
}

// Why the worker is not measuring yet ("waiting for a quiet card: pid ..."),
// from its progress lines; null when it said nothing.
function progressMessage(run) {
  const m = run.progress && run.progress.message;
  return typeof m === "string" && m ? m : null;
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
    ["Worker", m.worker || (build.gpubench_version ? "gpubench " + build.gpubench_version + (build.git_commit ? " (" + build.git_commit + ")" : "") : null)],
    ["Server", server.gpubench_version ? "gpubench " + server.gpubench_version + (server.git_commit ? " (" + server.git_commit + ")" : "") : null],
  ]);
  const st = stateTable(m.state_before, m.state_after);
  if (st) groups.push(el("h3", {}, "Card state"), el("div", { class: "table-wrap" }, st));
  const flags = [];
  if (m.synthetic) flags.push(el("li", { class: "flag bad" }, "synthetic (test double)"));
  if (m.clock_dropped === true) flags.push(el("li", { class: "flag bad" }, "SM clock dropped during the run"));
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
  const show = (v, unit) => (v === undefined || v === null ? "–" : Array.isArray(v) ? (v.length ? v.join(", ") : "none") : isNum(v) ? num(v, 4) + (unit ? " " + unit : "") : String(v));
  return el("table", { class: "state" },
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, ""), el("th", { scope: "col" }, "before"), el("th", { scope: "col" }, "after"))),
    el("tbody", {}, fields.map(([f, label, unit]) => {
      const changed = isNum(b[f]) && isNum(a[f]) && f === "sm_clock_mhz" && a[f] < b[f];
      return el("tr", { class: changed ? "bad" : "" }, el("th", { scope: "row" }, label),
        el("td", { class: "num" }, show(b[f], unit)), el("td", { class: "num" }, show(a[f], unit)));
    })));
}

// ---------------------------------------------------------------- compare

// The compare menu's metrics: [menu text, axis and column title, field].
function compareMetrics() {
  const out = {};
  for (const f of state.resultFields || []) {
    if (!f.compare_menu) continue;
    const title = f.label + (f.unit === "share" ? " (%)" : "") + (f.unit === "x" ? " (log₂ scale)" : "");
    out[f.name] = [f.short_label, title, f];
  }
  return out;
}

async function showCompare(q) {
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
  if (q.get("baseline") && q.get("candidate")) return showVerdicts(q, out, gen);

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

  // The metric menu offers what these rows have; the URL may choose one.
  const METRICS = compareMetrics();
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
  const series = data.series.map((s) => ({ ...s, label: seriesLabel(s, data.series) }));
  // The same card with different parameters is two series: number them.
  const seen = new Map();
  for (const s of series) seen.set(s.label, (seen.get(s.label) || 0) + 1);
  const nth = new Map();
  for (const s of series) if (seen.get(s.label) > 1) { nth.set(s.label, (nth.get(s.label) || 0) + 1); s.label += " · set " + nth.get(s.label); }
  const value = (s, k, f) => { const r = s.rows.find((x) => x.key === k); return r && isNum(r[f]) ? r[f] : null; };
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
    fig = chartFigure(`${METRICS[metric][1]} of ${bench}, one series per card`, (c) => GBCharts.compare(c, keys,
      series.map((s) => ({ label: s.label, values: keys.map((k) => { const v = value(s, k, metric); return v === null ? null : v * scale; }) })),
      metric, METRICS[metric][1], predicted));
    parts.push(fig.fig);
  }
  parts.push(el("p", { class: "downloads" }, copyMarkdown("/compare.md" + qs({ benchmark: bench, host: q.get("host"), device: q.get("device"),
    label: q.get("label"), latest: q.get("latest"), runs: q.get("runs"), include_invalid: q.get("include_invalid") }))));
  parts.push(compareTable(data, series, keys, metric || "median_ms", METRICS));
  parts.push(seriesTable(series));
  out.replaceChildren(...parts);
  if (fig) fig.draw();
  ready();
}

// A candidate judged against a baseline (GET /compare?baseline=&candidate=):
// each row's shift with its interval against the ±margin band, and the
// verdict in words in the table.
async function showVerdicts(q, out, gen) {
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
  const parts = [];
  const side = (g) => `${g.selector}: ${g.n_runs} run(s)` + (g.excluded_invalid ? `, ${g.excluded_invalid} invalid left out` : "") +
    (g.excluded_other_key ? `, ${g.excluded_other_key} with other parameters left out` : "");
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
  const words = { same: "same", faster: "faster", slower: "slower", inconclusive: "inconclusive" };
  parts.push(el("p", { class: "verdict verdict-" + data.verdict, id: "verdict-summary" }, el("strong", {}, "Verdict: " + words[data.verdict]),
    data.verdict_rows && data.verdict_rows.length && data.verdict !== "same" ? ` (${data.key} ${data.verdict_rows.join(", ")})` : "",
    ` — margin ±${pct(data.margin, 2)}, ${data.method}.`));
  parts.push(el("p", { class: "downloads" }, copyMarkdown("/compare.md" + qs(params))));
  const fig = chartFigure(`Shift of ${data.benchmark} from the baseline per ${data.key}, with 95% intervals and the ±margin band`,
    (c) => GBCharts.shift(c, keys, data.rows, data.margin, data.key));
  parts.push(fig.fig);
  const sign = (v) => (isNum(v) ? (v > 0 ? "+" : "") + pct(v, 2) : "–");
  const head = el("tr", {}, [data.key, "Verdict", "Shift", "95% interval", "In cycles", "Samples (baseline / candidate)", "More samples to decide"]
    .map((h) => el("th", { scope: "col" }, h)));
  const body = data.rows.map((r) => el("tr", { dataset: { key: String(r.key), verdict: r.verdict } },
    el("th", { scope: "row" }, String(r.key)),
    el("td", { class: "verdict verdict-" + r.verdict, dataset: { field: "verdict", value: r.verdict } }, words[r.verdict]),
    el("td", { class: "num", dataset: { field: "shift", value: String(r.shift) } }, sign(r.shift)),
    el("td", { class: "num" }, sign(r.ci_low) + " … " + sign(r.ci_high)),
    el("td", { class: "num" }, r.cycles ? `${sign(r.cycles.shift)} (${words[r.cycles.verdict]})` : "clock unknown"),
    el("td", { class: "num" }, `${r.n_baseline} / ${r.n_candidate}`),
    el("td", { class: "num" }, isNum(r.more_samples) ? "≈" + r.more_samples + " a group" : "–")));
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

function compareTable(data, series, keys, metric, METRICS) {
  const [, title, field] = METRICS[metric];
  const fmtV = fieldShow(field);
  const hasPred = series.some((s) => s.rows.some((r) => isNum(r.predicted_degree)));
  const head = el("tr", {}, el("th", { scope: "col" }, data.key), hasPred ? el("th", { scope: "col" }, "Predicted degree") : null,
    series.map((s) => el("th", { scope: "col" }, s.label)));
  const body = keys.map((k) => {
    const pred = series.map((s) => s.rows.find((r) => r.key === k)).find((r) => r && isNum(r.predicted_degree));
    return el("tr", { dataset: { key: String(k) } }, el("th", { scope: "row" }, String(k)),
      hasPred ? el("td", { class: "num" }, pred ? num(pred.predicted_degree) : "–") : null,
      series.map((s) => {
        const r = s.rows.find((x) => x.key === k);
        if (!r || !isNum(r[metric])) return el("td", { class: "num", dataset: { value: "" } }, "–");
        const sp = spreadOf(r);
        return el("td", { class: "num", dataset: { value: isNum(r[metric]) ? String(r[metric]) : "" }, title: `${num(r.n)} run(s); median ${num(r.median_ms, 4)} ms, min ${num(r.min_ms, 4)}, max ${num(r.max_ms, 4)}` },
          fmtV(r[metric]), sp !== null ? el("span", { class: "spread" }, " ±" + pct(sp / 2, 2)) : null);
      }));
  });
  return el("div", { class: "table-wrap" }, el("table", { class: "rows compare" },
    el("caption", {}, title + " per " + data.key + " (± is half the spread (max − min) / median over the samples and runs)"),
    el("thead", {}, head), el("tbody", {}, body)));
}

function seriesTable(series) {
  const head = el("tr", {}, ["Series", "Card", "Host", "Driver", "CUDA", "Parameters", "Runs"].map((h) => el("th", { scope: "col" }, h)));
  const body = series.map((s, i) => el("tr", {},
    el("th", { scope: "row" }, el("span", { class: "swatch swatch-" + (i % 8), "aria-hidden": "true" }), s.label),
    el("td", { title: s.card.uuid }, s.card.name || "–"), el("td", {}, s.card.host || "–"),
    el("td", {}, s.driver || "–"), el("td", {}, s.cuda || "–"),
    el("td", { class: "mono small" }, Object.entries(s.params || {}).map(([k, v]) => k + "=" + (Array.isArray(v) ? v.join(",") : v)).join(" ")),
    el("td", {}, s.runs.map((id, j) => [j ? ", " : "", el("a", { class: "nav mono", href: "?run=" + encodeURIComponent(id) }, id.slice(-6))]),
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

$("#compare-form").addEventListener("submit", (e) => {
  e.preventDefault();
  compareNavigate(false);
});
$("#compare-form").addEventListener("change", (e) => {
  if (e.target.tagName === "SELECT") compareNavigate(e.target.name === "benchmark");
});

function compareNavigate(benchmarkChanged) {
  const f = $("#compare-form").elements;
  navigate("/" + qs({
    view: "compare", benchmark: f.benchmark.value, metric: benchmarkChanged ? "" : f.metric.value,
    latest: f.latest.value, host: f.host.value.trim(), label: f.label.value.trim(),
    baseline: f.baseline.value.trim(), candidate: f.candidate.value.trim(), margin: f.margin.value.trim(),
  }), true);
}

// ---------------------------------------------------------------- post a run

async function showPost(q) {
  const gen = state.generation;
  const form = $("#post-form");
  const sel = form.elements.benchmark;
  let list;
  try {
    list = await benchmarks();
  } catch (e) {
    $("#post-params").replaceChildren(errorBox(e));
    ready();
    return;
  }
  if (!current(gen)) return;
  if (!sel.options.length) for (const b of list) sel.append(el("option", { value: b.name }, b.name));
  const want = q.get("benchmark");
  if (want && list.some((b) => b.name === want)) sel.value = want;
  buildParams(list.find((b) => b.name === sel.value));
  form.elements.token.value = sessionStorage.getItem(TOKEN_KEY) || "";
  $("#post-error").hidden = true;
  await showDevicesForPost();
  ready();
}

async function showDevicesForPost() {
  const box = $("#devices");
  const sel = $("#post-device");
  let d;
  try {
    state.devices = null; // fresh: worker state and queue depth change
    d = await devices();
  } catch (e) {
    box.replaceChildren(errorBox(e));
    return;
  }
  const keep = sel.value;
  sel.replaceChildren(...[el("option", { value: "" }, "the first free GPU (daemon's choice)"),
    d.devices.length > 1 ? el("option", { value: "all" }, `every GPU (${d.devices.length} runs)`) : null,
    ...d.devices.map((g) => el("option", { value: String(g.index) }, `#${g.index} ${g.name}`))].filter(Boolean));
  if (keep && $$("option", sel).some((o) => o.value === keep)) sel.value = keep;
  if (d.host) $("#node").textContent = "node " + d.host;
  // No GPU: said at the top of the form, and no button that can only fail.
  const noGpu = $("#post-no-gpu");
  noGpu.hidden = d.devices.length > 0;
  $("#post-submit").hidden = !noGpu.hidden;
  if (!d.devices.length) {
    noGpu.replaceChildren(el("strong", {}, "No GPU on this node: "), (d.reason || "no reason given") + ". A run posted here would be refused, so this form has no button; the parameters below are still the API's.", seeRealData());
    box.replaceChildren(el("p", { class: "warn" }, "No GPU on this node: " + (d.reason || "no reason given") + "."));
    return;
  }
  box.replaceChildren(el("div", { class: "table-wrap" }, el("table", {},
    el("thead", {}, el("tr", {}, ["#", "Card", "UUID", "Worker", "Queued"].map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, d.devices.map((g) => el("tr", {},
      el("td", { class: "num" }, String(g.index)),
      el("td", {}, g.name, g.synthetic ? el("span", { class: "tag" }, "test double") : null),
      el("td", { class: "mono small" }, g.uuid),
      el("td", {}, g.worker ? g.worker.state + (g.worker.healthy === false ? " (unhealthy)" : "") : "–"),
      el("td", { class: "num" }, isNum(g.queue_depth) ? String(g.queue_depth) : "–")))))));
}

// One input per parameter, from the daemon's own description of it, so the
// form never disagrees with the API about names, defaults or bounds.
function buildParams(bench) {
  const box = $("#post-params");
  $("#post-benchmark-help").textContent = bench ? bench.description : "";
  const inputs = (bench ? bench.params : []).map((p) => {
    const id = "param-" + p.name;
    const helpId = id + "-help";
    const bounds = [];
    if (p.min !== undefined) bounds.push("≥ " + p.min);
    if (p.max !== undefined) bounds.push("≤ " + p.max);
    if (p.multiple_of) bounds.push("a multiple of " + p.multiple_of);
    if (p.power_of_two) bounds.push("0 or a power of two");
    if (p.min_items !== undefined) bounds.push(p.min_items === p.max_items ? `exactly ${p.min_items} items` : `${p.min_items}–${p.max_items} items`);
    const help = el("p", { class: "help", id: helpId }, p.help || "", bounds.length ? " (" + bounds.join(", ") + ")" : "");
    let control;
    if (Array.isArray(p.choices) && p.type.startsWith("array")) {
      const def = new Set(p.default || []);
      control = el("fieldset", { class: "choices", dataset: { param: p.name, kind: "choices" }, "aria-describedby": helpId },
        el("legend", {}, p.name),
        p.choices.map((c) => el("label", {}, el("input", { type: "checkbox", value: c, checked: def.has(c) }), " " + c)));
      return el("div", { class: "field" }, control, help);
    }
    if (p.type.startsWith("array")) {
      control = el("input", { id, dataset: { param: p.name, kind: p.type.includes("string") ? "strings" : "numbers" }, value: (p.default || []).join(", "), "aria-describedby": helpId, autocomplete: "off", spellcheck: "false", class: "wide" });
    } else if (p.type === "integer" || p.type === "number") {
      control = el("input", { id, type: "number", dataset: { param: p.name, kind: p.type }, value: p.default, min: p.min, max: p.max, step: p.type === "integer" ? p.multiple_of || 1 : "any", "aria-describedby": helpId });
    } else if (Array.isArray(p.choices)) {
      control = el("select", { id, dataset: { param: p.name, kind: "string" }, "aria-describedby": helpId }, p.choices.map((c) => el("option", { value: c, selected: c === p.default }, c)));
    } else {
      control = el("input", { id, dataset: { param: p.name, kind: "string" }, value: p.default ?? "", "aria-describedby": helpId });
    }
    return el("div", { class: "field" }, el("label", { for: id }, p.name), control, help);
  });
  box.replaceChildren(el("legend", {}, "Parameters (defaults from the daemon)"), ...inputs);
}

// Reads the form into the POST body; a value that cannot be read is
// reported on its field before anything is sent.
function readParams() {
  const params = {};
  for (const c of $$("[data-param]", $("#post-params"))) {
    const name = c.dataset.param;
    const kind = c.dataset.kind;
    if (kind === "choices") {
      params[name] = $$("input:checked", c).map((i) => i.value);
    } else if (kind === "numbers") {
      const parts = c.value.split(/[\s,]+/).filter(Boolean);
      const vals = parts.map(Number);
      const bad = parts.findIndex((s, i) => !Number.isFinite(vals[i]));
      if (bad >= 0) throw Object.assign(new Error(`"${parts[bad]}" is not a number`), { field: "params." + name });
      params[name] = vals;
    } else if (kind === "strings") {
      params[name] = c.value.split(/[\s,]+/).filter(Boolean);
    } else if (kind === "integer" || kind === "number") {
      if (c.value.trim() === "") continue; // the daemon's default
      const v = Number(c.value);
      if (!Number.isFinite(v)) throw Object.assign(new Error("not a number"), { field: "params." + name });
      params[name] = v;
    } else if (c.value !== "") {
      params[name] = c.value;
    }
  }
  return params;
}

function markField(field, message) {
  for (const x of $$("[aria-invalid]", $("#post-form"))) x.removeAttribute("aria-invalid");
  const box = $("#post-error");
  box.hidden = false;
  box.textContent = message;
  if (!field) return;
  // "params.strides[3]" → the strides input; "label" → the label input.
  const m = /^params\.([A-Za-z0-9_]+)/.exec(field);
  const target = m ? $(`[data-param="${m[1]}"]`) : $(`#post-form [name="${field.replace(/\[.*$/, "")}"]`);
  if (target) {
    target.setAttribute("aria-invalid", "true");
    (target.matches("fieldset") ? $("input", target) : target).focus();
  }
}

function askToken(message) {
  if (new URLSearchParams(location.search).get("view") !== "post") navigate("/?view=post");
  const t = $("#post-token");
  t.setAttribute("aria-invalid", "true");
  const box = $("#post-error");
  box.hidden = false;
  box.textContent = message + " Enter it below; it is kept for this tab only.";
  t.focus();
}

$("#post-benchmark").addEventListener("change", () => {
  navigate("/" + qs({ view: "post", benchmark: $("#post-benchmark").value }), true);
});

$("#post-token").addEventListener("change", (e) => {
  const v = e.target.value.trim();
  if (v) sessionStorage.setItem(TOKEN_KEY, v); else sessionStorage.removeItem(TOKEN_KEY);
});

$("#post-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const form = e.target;
  const token = form.elements.token.value.trim();
  if (token) sessionStorage.setItem(TOKEN_KEY, token); else sessionStorage.removeItem(TOKEN_KEY);
  const body = { benchmark: form.elements.benchmark.value };
  try {
    body.params = readParams();
  } catch (err) {
    markField(err.field, err.message);
    return;
  }
  const dev = form.elements.device.value;
  if (dev === "all") body.device = "all"; else if (dev !== "") body.device = Number(dev);
  const label = form.elements.label.value.trim();
  if (label) body.label = label;
  if (form.elements.timeout_s.value) body.timeout_s = Number(form.elements.timeout_s.value);
  const button = $("#post-submit");
  if (button.hidden) return; // no GPU here: see showDevicesForPost
  button.disabled = true;
  try {
    const r = await api("/runs", { method: "POST", body });
    // "device": "all" answers with a batch of runs; one run answers itself.
    if (r.batch && Array.isArray(r.runs)) navigate("/?batch=" + encodeURIComponent(r.batch));
    else navigate("/?run=" + encodeURIComponent(r.id));
  } catch (err) {
    if (err.status === 401) askToken(sessionStorage.getItem(TOKEN_KEY) ? "The daemon refused this token." : "This daemon needs a bearer token to post runs.");
    else markField(err.field, (err.code ? err.code + ": " : "") + err.message);
  } finally {
    button.disabled = false;
  }
});

// ---------------------------------------------------------------- start

function start() {
  if (!GBCharts.available()) {
    notice("no-chartjs", el("strong", {}, "Charts are off: "), "Chart.js is not installed on this node. Install the Debian package ",
      el("code", {}, "libjs-chart.js"), " (or start gpubenchd with ", el("code", {}, "--chartjs PATH"), "); every number is still in the tables.");
  }
  devices().then((d) => { if (d.host) $("#node").textContent = "node " + d.host; }).catch(() => {});
  render(false);
}

// After every script of the page (verdicts.js adds views) has run.
document.addEventListener("DOMContentLoaded", start);
