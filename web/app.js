// app.js - the gpubench page's entry module: it routes the URL to a view
// and wires what belongs to the whole page (internal links, the back
// button, downloads that need the token, errors that escape).  Plain
// JavaScript as ES modules, no build step, no inline script or style (the
// page runs under a Content-Security-Policy); all data comes from the
// daemon's JSON API.  The shared library is lib/ (dom, api, format, page,
// widgets, charts); each view is a module of views/ and imports what it
// uses: nothing is shared through globals but Chart.js's (see
// lib/charts.js).
// The view lives in the query string, so a link shows a colleague the same
// thing: ?run=ID, ?view=compare&benchmark=..., ?view=fleet&benchmark=...,
// ?view=nodes&state=...&label=..., ?view=alerts, ?view=post,
// ?view=coverage&max_age=...&host=..., ?view=card&uuid=...&host=..., else the runs list.

import { $, $$, el } from "./lib/dom.js";
import { TOKEN_KEY, onNewToken } from "./lib/api.js";
import { state, devices, notice, pageError, onRender, render, navigate } from "./lib/page.js";
import * as GBCharts from "./lib/charts.js";
import { showRuns, initRuns } from "./views/runs.js";
import { showRun } from "./views/run.js";
import { showCompare, initCompare } from "./views/compare.js";
import { showFleet, initFleet } from "./views/fleet.js";
import { showNodes, initNodes } from "./views/nodes.js";
import { showAlerts } from "./views/alerts.js";
import { showCoverage, initCoverage } from "./views/coverage.js";
import { showCard } from "./views/card.js";
import { showChanges, initChanges } from "./views/changes.js";
import { showPost, initPost } from "./views/post.js";

const VIEWS = { runs: showRuns, run: showRun, compare: showCompare, post: showPost, fleet: showFleet, nodes: showNodes, alerts: showAlerts, coverage: showCoverage, card: showCard, changes: showChanges };

// A token entered in the token bar: what was read without it is read again.
onNewToken(() => {
  state.benchmarks = null;
  state.devices = null;
  render(false);
});

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

window.addEventListener("error", (e) => pageError(e.message || "script error"));
window.addEventListener("unhandledrejection", (e) => pageError(String(e.reason && e.reason.message || e.reason)));

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

onRender((moveFocus) => {
  state.generation++;
  state.timers.forEach(clearTimeout);
  state.timers = [];
  GBCharts.destroyAll();
  document.documentElement.dataset.state = "loading";
  const q = new URLSearchParams(location.search);
  const view = q.get("run") ? "run" : q.get("view") || "runs";
  for (const v of $$(".view")) v.hidden = v.id !== "view-" + view;
  for (const a of $$("header nav a")) {
    if (a.id === "nav-" + view || (view === "run" && a.id === "nav-runs") || (view === "card" && a.id === "nav-coverage")) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  const show = VIEWS[view] || showRuns;
  const done = show(q);
  // After a click, move focus to the new view's heading, as a page load would.
  if (moveFocus) Promise.resolve(done).then(() => { const h = $(".view:not([hidden]) h1"); if (h) h.focus({ preventScroll: true }); window.scrollTo(0, 0); });
});

initRuns();
initCompare();
initFleet();
initNodes();
initCoverage();
initPost();
initChanges();

function start() {
  if (!GBCharts.available()) {
    // The daemon's own words for why (GET /vendor/chart.js's 404: the
    // path it tried and the system's reason), never a guess.
    notice("no-chartjs", el("strong", {}, "Charts are off: "), "Chart.js did not load; every number is still in the tables.");
    fetch("/vendor/chart.js").then((r) => (r.ok ? null : r.json())).then((e) => {
      const why = e && e.error && e.error.message, box = $("#no-chartjs");
      if (why && box) {
        box.replaceChildren(el("strong", {}, "Charts are off: "), why + ". Every number is still in the tables.");
        box.dataset.reason = "daemon";
      }
    }).catch(() => {});
  }
  devices().then((d) => { if (d.host) $("#node").textContent = "node " + d.host; }).catch(() => {});
  render(false);
}

// A module runs once the document is parsed, after the classic Chart.js
// script; DOMContentLoaded comes after every module has run, as before.
document.addEventListener("DOMContentLoaded", start);
