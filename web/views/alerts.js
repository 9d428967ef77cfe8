// alerts.js - the alerts list (?view=alerts) with acknowledgement, and the
// alerts table a run's page shows for the alerts that name it.

import { $, el, table } from "../lib/dom.js";
import { api, tokenBar, TOKEN_KEY } from "../lib/api.js";
import { isNum, num, signedPct, shortCard, rowKeyText } from "../lib/format.js";
import { state, ready, loadInto, render } from "../lib/page.js";
import { timeEl, runLink } from "../lib/widgets.js";

const ALERT_STATES = {
  detected: "detected (awaiting its confirming run)", confirmed: "confirmed",
  acknowledged: "acknowledged", cleared: "cleared",
};

// Each alert kind in words, as GET /alerts names them (history, fleet,
// floor, card_event). A card event's alert has no run or benchmark: the
// watch found it.
const KIND_TEXT = {
  history: "slower than its history", fleet: "fleet outlier",
  floor: "below its model's floor", card_event: "card event",
};

export function alertsTable(list, here, withAck) {
  const role = (a) => (a.runs.detected === here ? "found here" : a.runs.confirmed === here ? "confirmed here" : a.runs.cleared === here ? "cleared here" : "");
  const body = list.map((a) => el("tr", { id: "alert-" + a.id, dataset: { id: String(a.id), state: a.state, kind: a.kind } },
    el("th", { scope: "row" }, "#" + a.id, here ? el("span", { class: "why" }, " " + role(a)) : null),
    el("td", { class: "badge-cell" }, el("span", { class: "badge alert-" + a.state, dataset: { field: "state", value: a.state } }, ALERT_STATES[a.state] || a.state)),
    // a wrong result (issue 32: a known_answer mismatch, a memtest error)
    // was confirmed when found and clears only on a passing run and an ack
    el("td", {}, a.verdict === "wrong_result" ? "wrong result (confirmed when found; cleared by a passing run and an acknowledgement)" : KIND_TEXT[a.kind] || a.kind),
    el("td", { title: a.card.device_uuid }, (a.card.device_name || "?") + " (" + shortCard(a.card.device_uuid) + ") @ " + a.card.host),
    el("td", {}, a.benchmark === null ? "watch · " + rowKeyText(a.row) : a.benchmark + " · row " + rowKeyText(a.row)),
    el("td", { class: "num" }, signedPct(a.shift), isNum(a.z) ? el("span", { class: "spread" }, " z " + num(a.z, 3)) : null),
    a.runs.detected === null ? el("td", {}, "found by the card's watch (GET /cards/UUID/events)") : el("td", {}, "found by ", runLink(a.runs.detected),
      a.runs.confirmed ? [", confirmed by ", runLink(a.runs.confirmed)] : a.state === "detected" ? ", confirming run queued" : a.verdict === "wrong_result" ? ", confirmed at once" : "",
      a.runs.cleared ? [", cleared by ", runLink(a.runs.cleared)] : ""),
    el("td", {}, a.reason || "–"),
    el("td", {}, timeEl(a.detected_at)),
    withAck ? el("td", {}, ackForm(a)) : null));
  const heads = ["Alert", "State", "Kind", "Card", "Benchmark and row", "Shift", "Runs", "Reason", "Detected (local time)"];
  if (withAck) heads.push("Acknowledge");
  return table("alerts", "Alerts, open ones first: the state and the runs in words", heads, body);
}

function ackForm(a) {
  if (a.state !== "detected" && a.state !== "confirmed") return "–";
  const id = "ack-reason-" + a.id;
  const input = el("input", { id, name: "reason", size: 18, required: true, autocomplete: "off" });
  const err = el("span", { class: "error", role: "alert", hidden: true });
  const form = el("form", { class: "ack", dataset: { id: String(a.id) } },
    el("label", { for: id, class: "visually-hidden" }, "Reason for acknowledging alert " + a.id), input, " ",
    el("button", { type: "submit" }, "Acknowledge"), err);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const reason = input.value.trim();
    if (!reason) {
      err.hidden = false;
      err.textContent = " Say why (the reason is kept with the alert).";
      input.setAttribute("aria-invalid", "true");
      input.focus();
      return;
    }
    try {
      await api("/alerts/" + a.id + "/ack", { method: "POST", body: { reason } });
      render(false);
    } catch (ex) {
      err.hidden = false;
      if (ex.status === 401 || ex.status === 403) {
        err.textContent = " Acknowledging needs the write token (as posting a run does).";
        tokenBar(sessionStorage.getItem(TOKEN_KEY) ? "The daemon refused this token for acknowledging." : "Acknowledging an alert needs the daemon's write token.");
      } else {
        err.textContent = " " + (ex.code ? ex.code + ": " : "") + ex.message;
      }
    }
  });
  return form;
}

export async function showAlerts() {
  const gen = state.generation;
  const out = $("#alerts");
  const body = await loadInto("/alerts", out, gen);
  if (!body) return;
  const list = body.alerts;
  const open = list.filter((a) => a.state !== "cleared").length;
  out.replaceChildren(el("p", { id: "alerts-count" }, `${open} open alert(s), ${list.length - open} cleared.`),
    list.length ? alertsTable(list, null, true) : el("p", { class: "note" }, "No alerts."));
  ready();
}
