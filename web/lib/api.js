// api.js - the daemon's JSON API, as every view reads and writes it.
// A token kept for this tab (sessionStorage, gone when the tab closes) goes
// with every request; a read refused with a 401 shows the token bar at the
// top of the page, and a token entered there is announced through the hook
// onNewToken sets (the page forgets what it read and draws the view again).

import { $, el } from "./dom.js";

export const TOKEN_KEY = "gpubench.token";

export class ApiError extends Error {
  constructor(status, body) {
    const err = (body && body.error) || {};
    super(err.message || "HTTP " + status);
    this.status = status;
    this.code = err.code;
    this.field = err.field;
  }
}

let newToken = () => {};

// fn runs after a token is entered in the token bar.
export function onNewToken(fn) {
  newToken = fn;
}

// One request to the daemon.  A token kept for this tab goes with every
// request (a daemon started with --auth-reads wants it for reads too); the
// daemon asks for one with a 401.
export async function api(path, opts = {}) {
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
export function tokenBar(message) {
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
      newToken();
    });
    $("#notices").append(bar);
  }
  $("#token-bar-msg").textContent = message;
}
