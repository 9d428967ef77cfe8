// card.js - one card's page (?view=card&uuid=UUID&host=NAME): its state and
// the reason, its health benchmarks' and deep checks' coverage cells (coverage.js), its
// latest checks against its model's floors with the fleet's learned
// median beside them (GET /cards/UUID), its canaries (GET /canaries, for
// this daemon's own cards: the node that runs them is the one that knows),
// its newest events from the watch (GET /cards/UUID/events), its recent
// runs and its alerts.  The reads are made side by side and each part
// shows what it got: a daemon that does not judge floors still shows the
// rest, saying so.

import { $, el, table } from "../lib/dom.js";
import { api } from "../lib/api.js";
import { shortCard } from "../lib/format.js";
import { state, ready, current, errorBox } from "../lib/page.js";
import { timeEl, runLink, statusBadge, validityBadge, checksTable } from "../lib/widgets.js";
import { alertsTable } from "./alerts.js";
import { ageText, cardStateBadge, coverageCell, COVERAGE_STATES } from "./coverage.js";

const HISTORY = 20;
const EVENTS = 5; // the newest few; the route pages the rest

// A read that never throws: {body} or {error}.
async function read(path) {
  try {
    return { body: await api(path) };
  } catch (error) {
    return { error };
  }
}

function checksPart(got) {
  const h = el("h2", {}, "Checks against the floors");
  if (got.error) {
    return [h, el("p", { class: "note", id: "card-checks-none" }, "No floors read for this card (",
      got.error.message || String(got.error), ").")];
  }
  const checks = Array.isArray(got.body.checks) ? got.body.checks : [];
  if (!checks.length) return [h, el("p", { class: "note", id: "card-checks-none" }, "No check judged yet: no valid health run of a model with floors.")];
  return [h, checksTable("card-checks", "Each row's latest value against its model's floor (and the fleet's median where enough cards have runs)", checks)];
}

// Each canary of the card: its period, its last run with how it went and
// a link, when it is next due, and how often and why it was held back.
function canariesPart(got, uuid) {
  const h = el("h2", {}, "Canaries");
  if (got.error) return [h, errorBox(got.error)];
  const mine = (got.body.cards || []).find((c) => c.uuid === uuid);
  const list = (mine && mine.canaries) || [];
  if (!list.length) {
    return [h, el("p", { class: "note", id: "card-canaries-none" }, "No canary on this card",
      got.body.reason ? ": " + got.body.reason : " (the daemon's --canary sets them)", ".")];
  }
  return [h, table("card-canaries", "Checks this daemon runs on the card once a period, after it has been quiet for " + ageText(got.body.idle_s),
    ["Canary", "Last run", "Next due", "Deferred"], list.map((c) => {
      const last = c.last_run;
      const d = c.deferred;
      return el("tr", { dataset: { benchmark: c.benchmark } },
        el("th", { scope: "row" }, c.benchmark + " every " + ageText(c.period_s)),
        el("td", { dataset: { field: "last", run: last ? last.id : "" } }, last ? [runLink(last.id), " ", statusBadge(last.outcome),
          last.runs > 1 ? ` ${last.runs} runs, ${last.failed} failed, ${last.invalid} invalid` : "",
          last.finished_at ? [" · ", timeEl(last.finished_at)] : ""] : "never ran"),
        el("td", { dataset: { field: "next" } }, c.due ? "due now" : c.next_due_at ? timeEl(c.next_due_at) : "–"),
        el("td", { dataset: { field: "deferred", count: String(d.count) } }, d.count ? [String(d.count) + (d.count === 1 ? " time" : " times"),
          d.reason ? [d.now ? ", now: " : ", last: ", el("span", { class: "reason" }, d.reason)] : "", d.at ? [" · ", timeEl(d.at)] : ""] : "never"));
    }))];
}

// The open critical events a peer reported of the card (GET /cards/UUID's
// peer_faults): on a hub, what the card's node's watch found.
function peerFaultsPart(info) {
  const reported = (info && info.peer_faults) || [];
  if (!reported.length) return [];
  const from = (url) => /^https?:\/\//.test(url || "") ? el("a", { href: url }, url) : (url || "?");
  return [table("card-peer-faults", "Open critical events its node's watch found, as the peers report them (GET /card_faults), newest first",
    ["When (local time)", "Subject", "What", "Reported by", "Hops"], reported.map((f) => el("tr", { dataset: { subject: f.subject } },
      el("th", { scope: "row" }, timeEl(f.at)), el("td", {}, f.subject), el("td", { class: "text" }, f.message),
      el("td", { dataset: { field: "source" } }, from(f.source)), el("td", {}, String(f.hops)))))];
}

// The card's newest events from the watch, with a link to them all; a
// card of another node (not own) is watched there, not here: what its node
// reported through the peers instead.
function eventsPart(got, uuid, info, own) {
  const all = "/cards/" + encodeURIComponent(uuid) + "/events";
  const h = el("h2", {}, "Events");
  const link = el("p", { class: "downloads" }, el("a", { id: "card-events-all", href: all, type: "application/json" }, "All its events (JSON, newest first)"));
  const reported = peerFaultsPart(info);
  if (got.error) return [h, errorBox(got.error), ...reported];
  const events = got.body.events || [];
  if (!events.length) {
    const none = own ? "No event: the watch has seen nothing change on this card."
      : "No event recorded here: this daemon does not watch this card, its node does" +
        (reported.length ? "; what its node reports open:" : ", and reports no open critical event.");
    return [h, el("p", { class: "note", id: "card-events-none" }, none), ...reported, link];
  }
  return [h, table("card-events", `The card's newest events from the watch between runs (at most ${EVENTS}), newest first`,
    ["When (local time)", "Kind", "Subject", "Critical", "What", "Gone"], events.map((e) => el("tr", { dataset: { id: String(e.id), kind: e.kind } },
      el("th", { scope: "row" }, timeEl(e.at)), el("td", {}, e.kind), el("td", {}, e.subject),
      el("td", { class: e.critical ? "bad" : "" }, e.critical ? "critical" : "no"), el("td", { class: "text" }, e.message),
      el("td", {}, e.gone_at ? timeEl(e.gone_at) : "–")))), ...reported, link];
}

function historyPart(got) {
  const h = el("h2", {}, "Recent runs");
  if (got.error) return [h, errorBox(got.error)];
  const runs = got.body.runs || [];
  if (!runs.length) return [h, el("p", { class: "note", id: "card-history-none" }, "No run on this card yet.")];
  return [h, table("card-history", "The card's newest runs, newest first", ["Run", "Benchmark", "Status", "Valid", "Finished (local time)"],
    runs.map((r) => el("tr", { dataset: { id: r.id } },
      el("th", { scope: "row" }, runLink(r.id)), el("td", {}, r.benchmark), el("td", { class: "badge-cell" }, statusBadge(r.status)),
      el("td", { class: "badge-cell" }, validityBadge(r)), el("td", {}, r.finished_at ? timeEl(r.finished_at) : "–"))))];
}

function alertsPart(got, uuid) {
  const h = el("h2", {}, "Alerts");
  if (got.error) return [h, errorBox(got.error)];
  const list = (got.body.alerts || []).filter((a) => a.card && a.card.device_uuid === uuid);
  if (!list.length) return [h, el("p", { class: "note", id: "card-alerts-none" }, "No alert on this card.")];
  return [h, alertsTable(list, null, false)];
}

export async function showCard(q) {
  const gen = state.generation;
  const out = $("#card");
  const uuid = q.get("uuid") || "";
  const host = q.get("host") || "";
  $("#card-title").textContent = "Card " + shortCard(uuid);
  if (!uuid) {
    out.replaceChildren(el("p", { class: "error", role: "alert" }, "No card named: the link needs ?uuid=GPU-..."));
    ready();
    return;
  }
  const runs = new URLSearchParams({ device: uuid, limit: String(HISTORY) });
  if (host) runs.set("host", host);
  const [cov, cardInfo, history, alerts, canaries, events] = await Promise.all([
    read("/coverage" + (host ? "?host=" + encodeURIComponent(host) : "")),
    read("/cards/" + encodeURIComponent(uuid)),
    read("/runs?" + runs.toString()),
    read("/alerts"),
    read("/canaries"),
    read("/cards/" + encodeURIComponent(uuid) + "/events?limit=" + EVENTS),
  ]);
  if (!current(gen)) return;
  const parts = [];
  const card = cov.body && (cov.body.cards || []).find((c) => c.uuid === uuid);
  if (cov.error) parts.push(errorBox(cov.error));
  else if (!card) parts.push(el("p", { class: "note", id: "card-unknown" }, "This daemon knows no card ", uuid, host ? " on " + host : "", "."));
  else {
    const info = cardInfo.body || {};
    const st = info.state || card.state || "unknown";
    const reason = info.reason !== undefined ? info.reason : card.reason;
    parts.push(el("p", { id: "card-summary" }, cardStateBadge(st, reason), " ", card.name || "?", " (", el("span", { class: "mono" }, uuid), "), GPU ",
      String(card.index ?? "?"), " of ", card.host, card.own ? " (this node)" : "", reason ? [": ", el("span", { id: "card-reason" }, reason)] : "."));
    parts.push(table("coverage card-coverage", "When each health benchmark last checked the card (window " + ageText(cov.body.max_age_s) + ")",
      ["Benchmark", "State"], (cov.body.benchmarks || []).map((n) => {
        const cell = (card.cells || []).find((c) => c.benchmark === n);
        return el("tr", {}, el("th", { scope: "row" }, n), coverageCell(cell));
      })));
    // the deep checks (issue 32): their own, longer window; never the card's state
    if ((cov.body.deep_benchmarks || []).length) {
      parts.push(table("coverage card-deep-coverage", "When each deep check (health_deep) last checked the card (window " + ageText(cov.body.deep_max_age_s) + "; a wrong result degrades the card, an old one does not)",
        ["Deep check", "State"], cov.body.deep_benchmarks.map((n) => {
          const cell = (card.deep_cells || []).find((c) => c.benchmark === n);
          return el("tr", { dataset: { benchmark: n } }, el("th", { scope: "row" }, n), coverageCell(cell));
        })));
    }
    parts.push(el("p", { class: "note small" }, Object.entries(COVERAGE_STATES).map(([k, v]) => k + ": " + v).join("; "), "."));
  }
  parts.push(...checksPart(cardInfo));
  if (card && card.own) parts.push(...canariesPart(canaries, uuid));
  parts.push(...eventsPart(events, uuid, cardInfo.body, !!(card && card.own)), ...historyPart(history), ...alertsPart(alerts, uuid));
  out.replaceChildren(...parts);
  ready();
}
