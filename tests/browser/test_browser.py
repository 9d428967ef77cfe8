#!/usr/bin/env python3
"""The web page in headless Chromium against a real gpubenchd.

The daemon runs with the worker's TEST DOUBLE (synthetic numbers), runs are
posted through the HTTP API, and the page is opened over the DevTools
protocol (cdp.py, stdlib only).  Checked: charts were drawn (the page marks
a <figure> data-chart="drawn" from a Chart.js hook, and the canvas has ink),
the rows and runs shown are the API's, a run updates while it is queued or
running, the post form posts and shows its errors, the view is in the URL,
keyboard focus works, there is nothing in the console (the page holds
itself to a Content-Security-Policy, so an inline script or style would
show up here), and without Chart.js the tables stay and the page says what
to install.  Screenshots: browser-*.png in GPUBENCH_SCREENSHOTS, or in a
new temporary folder (never the source tree), named at the start.

Exit 0 passed, 1 failed, 77 skipped (no chromium).
"""
import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "api"))
sys.path.insert(0, HERE)

import cdp  # noqa: E402
import harness  # noqa: E402

WEB = os.environ.get("GPUBENCH_WEB", os.path.join(HERE, "..", "..", "web"))
SHOTS = os.environ.get("GPUBENCH_SCREENSHOTS") or tempfile.mkdtemp(prefix="gpubench-browser-shots-")

# Counts the painted pixels of the first chart's canvas: a chart that
# Chart.js set up but never drew is blank.
CANVAS_INK = """(() => { const c = document.querySelector('figure.chart canvas');
  if (!c || !c.width) return 0;
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n; })()"""

# The rows table as the page shows it: key and every data-value cell (a
# table too wide for its box is split by columns: its parts are joined).
TABLE_ROWS = """(() => { const rows = new Map();
  for (const tr of document.querySelectorAll('table.rows tbody tr')) {
    const o = rows.get(tr.dataset.key) || {key: tr.dataset.key};
    for (const td of tr.querySelectorAll('td[data-field]')) o[td.dataset.field] = td.dataset.value;
    rows.set(tr.dataset.key, o);
  }
  return Array.from(rows.values()); })()"""

READY = "document.documentElement?.dataset.state === 'ready'"


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


EXAMPLES = os.path.join(HERE, "..", "..", "examples")


def uuid7(ms, seq):
    """A UUIDv7 string for an imported run (time-ordered like the daemon's)."""
    rand = int.from_bytes(os.urandom(8), "big")
    h = "%012x7%03x%016x" % (ms, seq & 0xFFF, (rand & 0x3FFFFFFFFFFFFFFF) | 0x8000000000000000)
    return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


# The daemons' exports in examples/ hold their checks' test_fault and
# test_hang runs, which only a daemon that offers them imports.
EXAMPLE_ARGS = ["--test-benchmarks"]


def import_examples(d):
    """The real H200 runs under examples/, imported through POST
    /runs/import: a daemon's own export (examples/*/runs.ndjson) as it is,
    and the worker's output files (result + meta) made into finished runs.
    Returns {benchmark: run id} of those imported, {} where there are none."""
    lines, ids = [], {}
    for sub in sorted(os.listdir(EXAMPLES)) if os.path.isdir(EXAMPLES) else []:
        export = os.path.join(EXAMPLES, sub, "runs.ndjson")
        if os.path.isfile(export):
            with open(export) as f:
                for line in f:
                    if line.strip():
                        run = json.loads(line)
                        lines.append(json.dumps(run))
                        key = run["benchmark"] if run["status"] == "done" else "failed"
                        ids.setdefault(key, run["id"])
    names = sorted(f for f in os.listdir(EXAMPLES) if f.endswith(".json")) if os.path.isdir(EXAMPLES) else []
    ms = int(time.time() * 1000) - 60000
    for i, name in enumerate(names):
        with open(os.path.join(EXAMPLES, name)) as f:
            ex = json.load(f)
        if "result" not in ex or "meta" not in ex:
            continue
        rows = ex["result"]["rows"]
        if rows and "stride" in rows[0]:
            bench, params = "smem_stride", {"strides": [r["stride"] for r in rows]}
        elif rows and rows[0].get("variant") in ("copy", "tile32", "tile33", "tile32_swizzle"):
            bench, params = "transpose", {"n": ex["result"]["summary"].get("n"), "variants": [r["variant"] for r in rows]}
        elif rows and "words" in rows[0]:
            bench, params = "smem_pattern", {"words": rows[0]["words"]}
        else:
            continue
        params["samples"] = len(rows[0].get("samples", []))
        m = ex["meta"]
        dev = m["device"]
        run = {"id": uuid7(ms + i, i), "benchmark": bench, "params": params, "label": "h200-example",
               "batch": None, "host": m.get("hostname") or "h200-host",
               "device": {"index": dev.get("index"), "uuid": dev.get("uuid"), "name": dev.get("name")},
               "status": "done", "created_at": m["started_at"], "started_at": m["started_at"],
               "finished_at": m["finished_at"], "results": ex["result"], "meta": m}
        lines.append(json.dumps(run))
        ids.setdefault(bench, run["id"])
    if lines:
        r = d.post("/runs/import", "\n".join(lines) + "\n")
        check(r.status == 200, "import of examples/: %r" % r)
    return ids


def post_run(d, body, wait=10):
    r = d.post("/runs?wait=%d" % wait, body)
    check(r.status in (200, 202), "POST /runs %s -> %r" % (body, r))
    return r.json()


def open_page(b, d, query, what):
    b.goto("%s://127.0.0.1:%d/%s" % ("https" if d.tls else "http", d.port, query))
    # A fresh load starts in "loading"; wait for the page to say it is done.
    b.wait_for("location.search === %s && %s" % (json.dumps(query), READY), what=what)


def assert_rows_match(b, api_rows, key):
    shown = b.eval(TABLE_ROWS)
    check(len(shown) == len(api_rows), "page shows %d rows, API has %d" % (len(shown), len(api_rows)))
    for s, a in zip(shown, api_rows):
        check(s["key"] == str(a[key]), "row key %s != API %s" % (s["key"], a[key]))
        for f in ("median_ms", "min_ms", "max_ms", "ratio", "predicted_degree", "gbps", "share_of_ceiling"):
            if isinstance(a.get(f), (int, float)):
                check(f in s and float(s[f]) == float(a[f]),
                      "row %s field %s: page %s, API %s" % (a[key], f, s.get(f), a[f]))
        if "samples" in a:
            check(int(s["samples"]) == len(a["samples"]), "row %s: sample count differs" % a[key])


def assert_chart(b, what):
    b.wait_for("document.querySelector('figure.chart') && document.querySelector('figure.chart').dataset.chart === 'drawn'",
               what=what + ": chart drawn")
    ink = b.eval(CANVAS_INK)
    check(ink > 2000, "%s: the chart canvas is nearly blank (%d painted pixels)" % (what, ink))


def assert_clean(b, allowed=()):
    problems = [p for p in b.problems() if not any(a in p for a in allowed)]
    check(not problems, "console problems:\n  " + "\n  ".join(problems))
    errs = b.eval("document.documentElement.dataset.errors || ''")
    check(not errs, "page recorded %s script errors: %s" % (errs, b.eval("document.getElementById('page-errors').innerText")))


def shot(b, name):
    path = os.path.join(SHOTS, "browser-%s.png" % name)
    b.screenshot(path)
    print("  screenshot", path)


def test_pages(d, b):
    # Runs through the API: a batch over both GPUs, each benchmark once.
    batch = post_run(d, {"benchmark": "smem_stride", "device": "all", "label": "sweep"})
    check(len(batch["runs"]) == 2, "device all on 2 GPUs made %d runs" % len(batch["runs"]))
    tr = post_run(d, {"benchmark": "transpose", "device": 0})
    post_run(d, {"benchmark": "smem_pattern", "device": 1, "label": "broadcast"})
    for r in batch["runs"] + [tr]:
        d.wait_status(r["id"], ("done",))
    stride_id = batch["runs"][0]["id"]
    real = import_examples(d)
    print("imported real runs from examples/:", real or "none")

    print("runs list")
    open_page(b, d, "", "runs list")
    api_ids = [r["id"] for r in d.get("/runs").json()["runs"]]
    shown = b.eval("Array.from(document.querySelectorAll('#runs tbody tr')).map(tr => tr.dataset.id)")
    check(shown == api_ids, "runs list %s != API %s" % (shown, api_ids))
    shot(b, "runs")

    print("runs list filtered by the URL")
    open_page(b, d, "?benchmark=smem_stride&label=sweep", "filtered list")
    api_ids = [r["id"] for r in d.get("/runs?benchmark=smem_stride&label=sweep").json()["runs"]]
    shown = b.eval("Array.from(document.querySelectorAll('#runs tbody tr')).map(tr => tr.dataset.id)")
    check(shown == api_ids and len(shown) == 2, "filtered list %s != API %s" % (shown, api_ids))
    check(b.eval("document.querySelector('#filters [name=benchmark]').value") == "smem_stride", "filter form not restored from URL")
    check("benchmark=smem_stride" in b.eval("document.getElementById('dl-runs-csv').getAttribute('href')"), "CSV link lacks the filters")

    print("paging")
    open_page(b, d, "?limit=2", "first page")
    b.wait_for("!document.getElementById('runs-older').hidden", what="an Older link")
    b.eval("document.getElementById('runs-older').click()")
    b.wait_for("location.search.includes('cursor=') && " + READY, what="second page")
    second = b.eval("Array.from(document.querySelectorAll('#runs tbody tr')).map(tr => tr.dataset.id)")
    nxt = d.get("/runs?limit=2").json()["next"]
    check(second == [r["id"] for r in d.get(nxt).json()["runs"]], "second page differs from the API's next page")

    print("keyboard: the first Tab reaches the skip link, Enter on a run link opens it")
    open_page(b, d, "", "runs list again")
    b.key("Tab", keycode=9)
    check(b.eval("document.activeElement.className") == "skip", "first Tab did not focus the skip link")
    b.eval("document.querySelector('#runs tbody a').focus()")
    b.key("Enter", keycode=13)
    b.wait_for("location.search.startsWith('?run=') && " + READY, what="run opened with Enter")

    print("smem_stride run")
    run = d.get("/runs/" + stride_id).json()
    open_page(b, d, "?run=" + stride_id, "stride run")
    assert_chart(b, "stride run")
    assert_rows_match(b, run["results"]["rows"], "stride")
    check(b.eval("!!document.querySelector('.warn.synthetic')"), "no synthetic warning on a test-double run")
    check(b.eval("document.querySelector('.meta').innerText.includes(%s)" % json.dumps(run["device"]["uuid"])),
          "metadata panel lacks the card's UUID")
    check(b.eval("document.querySelector('#run a[href$=\".csv\"]').getAttribute('href')") == "/runs/%s.csv" % stride_id,
          "run CSV link")
    shot(b, "run-smem_stride")

    print("transpose run")
    run = d.get("/runs/" + tr["id"]).json()
    open_page(b, d, "?run=" + tr["id"], "transpose run")
    assert_chart(b, "transpose run")
    assert_rows_match(b, run["results"]["rows"], "variant")
    shot(b, "run-transpose")

    print("compare")
    open_page(b, d, "?view=compare&benchmark=smem_stride", "compare")
    assert_chart(b, "compare")
    api_cmp = d.get("/compare?benchmark=smem_stride").json()
    check(len({s["card"]["uuid"] for s in api_cmp["series"]}) >= 2, "compare: fewer than 2 cards in the API")
    # One series per card (and comparable parameter set): the runs each
    # series links to are the API's, and every cell is the API's ratio.
    shown_runs = b.eval("Array.from(document.querySelectorAll('table.series tbody tr')).map(tr => "
                        "Array.from(tr.querySelectorAll('a')).map(a => a.getAttribute('href').slice(5)))")
    check(shown_runs == [s["runs"] for s in api_cmp["series"]], "compare series %s != API %s" % (shown_runs, [s["runs"] for s in api_cmp["series"]]))
    # The table may be split by columns to fit: each part repeats the keys,
    # and each cell says its series (the API's index).  A series without a
    # ratio is no column of it.
    keys = b.eval("Array.from(new Set(Array.from(document.querySelectorAll('table.compare tbody tr')).map(tr => tr.dataset.key)))")
    check(keys == [str(k) for k in api_cmp["keys"]], "compare keys %s, API %s" % (keys, api_cmp["keys"]))
    cells = b.eval("Object.fromEntries(Array.from(document.querySelectorAll('table.compare td[data-series]')).map(td => "
                   "[td.dataset.series + '/' + td.closest('tr').dataset.key, td.dataset.value]))")
    for i, s in enumerate(api_cmp["series"]):
        ratios = {str(x["key"]): x["ratio"] for x in s["rows"] if isinstance(x.get("ratio"), (int, float))}
        for k in api_cmp["keys"]:
            got = cells.get("%d/%s" % (i, k))
            if not ratios:
                check(got is None, "series %d has no ratio but a column in the compare table" % i)
                continue
            check(got is not None, "compare table lacks series %d at %s" % (i, k))
            want = ratios.get(str(k))
            check((float(got) if got else None) == want, "compare series %d row %s: page %s, API %s" % (i, k, got, want))
    shot(b, "compare")

    print("compare: a candidate judged against a baseline")
    base, cand = batch["runs"][0]["id"], batch["runs"][1]["id"]
    vq = "baseline=runs:%s&candidate=runs:%s&margin=0.02" % (base, cand)
    open_page(b, d, "?view=compare&benchmark=smem_stride&" + vq, "verdicts")
    assert_chart(b, "verdicts")
    api_v = d.get("/compare?benchmark=smem_stride&" + vq).json()
    check(api_v["comparable"], "verdicts: the two fake cards are not comparable: %s" % api_v.get("differences"))
    shown = b.eval("Array.from(document.querySelectorAll('table.verdicts tbody tr')).map(tr => "
                   "[tr.dataset.key, tr.querySelector('td[data-field=verdict]').textContent])")
    check(shown == [[str(r["key"]), r["verdict"]] for r in api_v["rows"]],
          "verdict rows %s != API %s" % (shown, [(r["key"], r["verdict"]) for r in api_v["rows"]]))
    check(("Verdict: " + api_v["verdict"]) in b.eval("document.getElementById('verdict-summary').textContent"),
          "the run-level verdict is not said in words")
    check(b.eval("document.querySelector('#compare-form [name=margin]').value") == "0.02", "margin not restored from the URL")
    check(b.eval("document.querySelector('#compare-form [name=baseline]').value") == "runs:" + base,
          "baseline not restored from the URL")
    labels = b.eval("Chart.getChart(document.querySelector('figure.chart canvas')).data.datasets.map(d => d.label)")
    check("+margin" in labels and "no change" in labels and "95% interval" in labels,
          "the shift chart lacks its band, zero line or intervals: %s" % labels)
    shot(b, "compare-verdicts")

    # Real numbers from an H200, where the examples are there: the same
    # checks, and the screenshots show what a person will see.
    for bench, run_id in real.items():
        print("real %s run from examples/" % bench)
        run = d.get("/runs/" + run_id).json()
        open_page(b, d, "?run=" + run_id, "real " + bench)
        if bench == "failed":
            check(run["error"]["code"] in b.eval("document.querySelector('#run .error').textContent"),
                  "a failed run's page does not say why")
        else:
            assert_chart(b, "real " + bench)
            assert_rows_match(b, run["results"]["rows"], "stride" if bench == "smem_stride" else "variant")
            check(not b.eval("!!document.querySelector('.warn.synthetic')"), "a measured run is marked synthetic")
        shot(b, "real-" + bench)
    if real:
        open_page(b, d, "?view=compare&benchmark=transpose&label=daemon-check", "compare transpose")
        assert_chart(b, "compare transpose")
        shot(b, "compare-transpose")

    print("post form: an error names its field, a good run is posted and shown")
    open_page(b, d, "?view=post&benchmark=smem_stride", "post form")
    check(b.eval("document.querySelector('[data-param=strides]').value") == "1, 2, 4, 8, 16, 32, 33",
          "strides default not taken from /benchmarks")
    b.eval("document.querySelector('[data-param=strides]').value = '1, 2, 5000'")
    b.eval("document.querySelector('#post-form button[type=submit]').click()")
    b.wait_for("!document.getElementById('post-error').hidden", what="post error shown")
    msg = b.eval("document.getElementById('post-error').textContent")
    check("out_of_bounds" in msg, "post error: %r" % msg)
    check(b.eval("document.querySelector('[data-param=strides]').getAttribute('aria-invalid')") == "true",
          "strides field not marked invalid")
    shot(b, "post-error")
    # Chromium logs the refused POST (400) as a console error: expected here.
    check(all("400" in p for p in b.problems()), "unexpected console output: %s" % b.problems())
    b.events.clear()
    b.eval("document.querySelector('[data-param=strides]').value = '1, 2, 32, 33'")
    b.eval("document.getElementById('post-device').value = '1'")
    b.eval("document.getElementById('post-label').value = 'from-browser'")
    b.eval("document.querySelector('#post-form button[type=submit]').click()")
    b.wait_for("location.search.startsWith('?run=') && " + READY, what="the posted run's page")
    posted = d.get("/runs?label=from-browser").json()["runs"]
    check(len(posted) == 1 and posted[0]["params"]["strides"] == [1, 2, 32, 33] and posted[0]["device"]["index"] == 1,
          "posted run: %s" % posted)
    check(b.eval("location.search") == "?run=" + posted[0]["id"], "page did not open the posted run")
    assert_chart(b, "posted run")
    assert_clean(b)


def test_live(d, b):
    """A queued run shows its position, a running one its progress, and the
    page follows it to the end without a reload."""
    d.set_mode("normal")
    strides = list(range(1, 41))
    first = d.post("/runs", {"benchmark": "smem_stride", "device": 0, "params": {"strides": strides}}).json()
    second = d.post("/runs", {"benchmark": "smem_stride", "device": 0, "params": {"strides": [1, 2, 3, 4, 5, 6]}}).json()
    open_page(b, d, "?run=" + second["id"], "queued run")
    check(b.eval("document.querySelector('#run-status .badge').textContent") == "queued", "second run not shown queued")
    check("position 1" in b.eval("document.getElementById('run-status').textContent"), "no queue position")
    shot(b, "run-queued")
    b.goto("http://127.0.0.1:%d/?run=%s" % (d.port, first["id"]))
    b.wait_for("!!document.querySelector('#run-status progress')", timeout=10, what="a progress bar")
    shot(b, "run-running")
    assert_chart(b, "live run after it ended")
    check(b.eval("document.querySelector('#run-status .badge').textContent") == "done", "run page never showed done")
    assert_rows_match(b, d.get("/runs/" + first["id"]).json()["results"]["rows"], "stride")
    d.wait_status(second["id"], ("done",))
    assert_clean(b)


def test_no_chartjs(d, b):
    """Without Chart.js: tables, and a notice naming the package."""
    r = post_run(d, {"benchmark": "smem_stride", "device": 0})
    open_page(b, d, "?run=" + r["id"], "run without Chart.js")
    check(b.eval("document.querySelector('figure.chart').dataset.chart") == "unavailable", "chart not marked unavailable")
    check("libjs-chart.js" in b.eval("document.getElementById('notices').innerText"), "no notice naming libjs-chart.js")
    assert_rows_match(b, d.get("/runs/" + r["id"]).json()["results"]["rows"], "stride")
    shot(b, "no-chartjs")
    # The only complaint allowed is the missing script itself.
    assert_clean(b, allowed=("/vendor/chart.js", "404"))


CHART_DATA = "Chart.getChart(document.querySelector('figure.chart canvas')).data.datasets[0].data"


def test_validity(d, b):
    """The validity badge (list and run), the valid filter, and the stride
    chart in clock cycles by default with the time ratio one click away."""
    ids = {}
    for mode in ("skewed", "contended", "nowatch"):
        d.set_mode(mode)
        ids[mode] = post_run(d, {"benchmark": "smem_stride", "device": 0, "label": "val",
                                 "params": {"strides": [1, 2, 32, 33]}})["id"]
    d.set_mode("normal")

    print("runs list: a badge a run")
    open_page(b, d, "?label=val", "runs with badges")
    badges = b.eval("Object.fromEntries(Array.from(document.querySelectorAll('#runs tbody tr')).map(tr => "
                    "[tr.dataset.id, [tr.querySelector('.validity').dataset.validity, tr.querySelector('.validity').textContent]]))")
    check(badges[ids["skewed"]] == ["valid", "valid"], "skewed run badge: %s" % badges[ids["skewed"]])
    check(badges[ids["contended"]] == ["invalid", "invalid: contended"], "contended badge: %s" % badges[ids["contended"]])
    check(badges[ids["nowatch"]] == ["unknown", "unknown"], "unwatched badge: %s" % badges[ids["nowatch"]])
    shot(b, "runs-validity")

    print("runs list: the valid filter")
    open_page(b, d, "?label=val&valid=false", "invalid runs only")
    shown = b.eval("Array.from(document.querySelectorAll('#runs tbody tr')).map(tr => tr.dataset.id)")
    check(shown == [ids["contended"]], "valid=false list: %s" % shown)
    check(b.eval("document.querySelector('#filters [name=valid]').value") == "false", "valid filter not restored from URL")
    check("valid=false" in b.eval("document.getElementById('dl-runs-csv').getAttribute('href')"), "CSV link lacks valid=false")
    b.eval("const s = document.querySelector('#filters [name=valid]'); s.value = 'true'; "
           "s.dispatchEvent(new Event('change', {bubbles: true}))")
    b.wait_for("location.search.includes('valid=true') && " + READY, what="the list after choosing valid")
    shown = b.eval("Array.from(document.querySelectorAll('#runs tbody tr')).map(tr => tr.dataset.id)")
    check(sorted(shown) == sorted([ids["skewed"], ids["nowatch"]]), "valid=true list: %s" % shown)

    print("run page: the reasons of an invalid run")
    open_page(b, d, "?run=" + ids["contended"], "contended run")
    check(b.eval("document.querySelector('#run-validity .validity').dataset.validity") == "invalid", "no invalid badge on the run")
    reason = b.eval("document.querySelector('#run-validity li[data-code=contended]').textContent")
    check("4242" in reason and "python3" in reason, "contended reason: %r" % reason)
    shot(b, "run-contended")

    print("run page: the chart in cycles, time one click away")
    run = d.get("/runs/" + ids["skewed"]).json()
    rows = run["results"]["rows"]
    open_page(b, d, "?run=" + ids["skewed"], "skewed run")
    assert_chart(b, "skewed run")
    check(b.eval("document.querySelector('figure.chart').dataset.measure") == "cycles", "chart not in cycles by default")
    check(b.eval(CHART_DATA) == [r["ratio_cycles"] for r in rows], "charted %s, not ratio_cycles" % b.eval(CHART_DATA))
    check("cycles" in b.eval("document.querySelector('figure.chart figcaption').textContent"), "caption does not say cycles")
    assert_rows_match(b, rows, "stride")
    table = b.eval(TABLE_ROWS)
    check([float(t["ratio_cycles"]) for t in table] == [r["ratio_cycles"] for r in rows], "table lacks the cycle ratios")
    check([float(t["ratio"]) for t in table] == [r["ratio"] for r in rows], "table lacks the time ratios")
    shot(b, "run-cycles")
    b.eval("document.querySelector('.measure-toggle button[data-measure=time]').click()")
    b.wait_for("document.querySelector('figure.chart').dataset.measure === 'time' && "
               "document.querySelector('figure.chart').dataset.chart === 'drawn'", what="the time chart")
    check(b.eval(CHART_DATA) == [r["ratio"] for r in rows], "charted %s, not the time ratio" % b.eval(CHART_DATA))
    check(b.eval("document.querySelector('.measure-toggle button[data-measure=time]').getAttribute('aria-pressed')") == "true",
          "the time button is not marked pressed")
    shot(b, "run-time")
    assert_clean(b)


def test_waiting(d, b):
    """A run waiting for a quiet card says why on its page and in the list
    (progress.message), and the message goes once it measures; the summary
    names the ratio its largest error is of (cycles on the H200 runs)."""
    d.set_mode("quiet_wait")
    run = d.post("/runs", {"benchmark": "smem_stride", "device": 0, "params": {"strides": [1, 2, 32]}}).json()
    open_page(b, d, "?run=" + run["id"], "waiting run")
    b.wait_for("(document.getElementById('run-progress-message') || {}).textContent === "
               "'waiting for a quiet card: pid 4242 python3; utilisation 87%'", timeout=10,
               what="the waiting message on the run")
    check(not b.eval("!!document.querySelector('#run-status progress')"), "a 0-of-0 progress bar beside the message")
    shot(b, "run-waiting")
    d.set_mode("normal")  # read by the worker at a job's start: this one waits on
    open_page(b, d, "", "runs list while it waits")
    text = b.eval("document.querySelector('#runs tbody tr[data-id=\"%s\"]').textContent" % run["id"])
    check("waiting for a quiet card" in text, "list row lacks the message: %r" % text)
    d.wait_status(run["id"], ("done",))
    open_page(b, d, "?run=" + run["id"], "the run once done")
    check(not b.eval("!!document.getElementById('run-progress-message')"), "message still shown on a done run")

    import_examples(d)
    cycles = None
    for r in d.get("/runs?label=h200-example&benchmark=smem_stride").json()["runs"]:
        full = d.get("/runs/" + r["id"]).json()
        if (full.get("results") or {}).get("summary", {}).get("max_ratio_error_basis") == "cycles":
            cycles = full
            break
    check(cycles is not None, "no imported H200 run with max_ratio_error_basis cycles")
    open_page(b, d, "?run=" + cycles["id"], "an H200 run in cycles")
    labels = b.eval("Array.from(document.querySelectorAll('section.summary dt')).map(dt => dt.textContent)")
    check("Largest |cycle ratio − degree| / degree" in labels, "summary labels: %s" % labels)
    check("Largest |time ratio − degree| / degree" in labels, "no time-ratio error beside it: %s" % labels)
    assert_clean(b)


CHART_SERIES = "Chart.getChart(document.querySelector('figure.chart canvas')).data.datasets.map(d => d.data)"
HEAT_CELLS = """Array.from(document.querySelectorAll('figure.heatmap[data-field=gbps] td.heat')).map(td =>
  ({src: td.dataset.src, dst: td.dataset.dst, value: td.dataset.value, text: td.textContent,
    bg: getComputedStyle(td).backgroundColor}))"""


def test_peaks(d, b):
    """Issue 16: bars against the peak (hbm_bandwidth), the p2p matrix as a
    heat map with numbers in its cells, gmem_stride drawn like smem_stride.
    Needs the new benchmarks' specs (the worker branch); skipped loudly
    without them."""
    names = [x["name"] for x in d.get("/benchmarks").json()["benchmarks"]]
    missing = [n for n in ("hbm_bandwidth", "p2p_bandwidth", "gmem_stride") if n not in names]
    if missing:
        print("SKIPPED peaks: GET /benchmarks does not list %s yet (their specs come with the "
              "worker branch of issue 16)" % ", ".join(missing))
        return

    print("run page: measured against the peak, as bars")
    hbm = post_run(d, {"benchmark": "hbm_bandwidth", "device": 0})
    rows = hbm["results"]["rows"]
    open_page(b, d, "?run=" + hbm["id"], "hbm run")
    assert_chart(b, "hbm run")
    series = b.eval(CHART_SERIES)
    check(series[0] == [r["value"] for r in rows], "bars are %s, not the values" % series[0])
    check(series[1] == [r["peak"] for r in rows], "peak marks are %s, not the peaks" % series[1])
    table = b.eval(TABLE_ROWS)
    check([float(t["value"]) for t in table] == [r["value"] for r in rows], "table lacks the values")
    check([float(t["share_of_peak"]) for t in table] == [r["share_of_peak"] for r in rows],
          "table lacks the shares of peak")
    shot(b, "run-peaks")

    print("run page: the p2p matrix as a heat map with its numbers")
    p2p = post_run(d, {"benchmark": "p2p_bandwidth", "device": 0})
    m = p2p["results"]["summary"]["matrix"]
    open_page(b, d, "?run=" + p2p["id"], "p2p run")
    cells = b.eval(HEAT_CELLS)
    want = [(i, j, m["gbps"][i][j]) for i in range(len(m["devices"]))
            for j in range(len(m["devices"])) if m["gbps"][i][j] is not None]
    check(len(cells) == len(want), "heat map has %d cells, matrix %d" % (len(cells), len(want)))
    for c, (i, j, v) in zip(cells, want):
        check((int(c["src"]), int(c["dst"]), float(c["value"])) == (i, j, v), "cell %s != %s" % (c, (i, j, v)))
        check(("%g" % v)[:3] in c["text"].replace(",", ""), "cell %s,%s does not show its number: %r" % (i, j, c["text"]))
        check(c["bg"] not in ("", "rgba(0, 0, 0, 0)"), "cell %s,%s is not shaded" % (i, j))
    if len({c["value"] for c in cells}) > 1:
        check(len({c["bg"] for c in cells}) > 1, "different values, same shade")
    check(b.eval("document.querySelectorAll('figure.heatmap[data-field=latency_us]').length") == 1,
          "no latency matrix")
    shot(b, "run-p2p")

    print("run page: gmem_stride drawn like smem_stride")
    gmem = post_run(d, {"benchmark": "gmem_stride", "device": 0})
    rows = gmem["results"]["rows"]
    open_page(b, d, "?run=" + gmem["id"], "gmem run")
    assert_chart(b, "gmem run")
    series = b.eval(CHART_SERIES)
    base = [r for r in rows if r["stride"] == 1][0]["predicted_sectors"]
    check(series[0] == [r["ratio"] for r in rows], "gmem chart is %s, not the time ratios" % series[0])
    check(series[1] == [r["predicted_sectors"] / base for r in rows],
          "gmem predicted series is %s" % series[1])
    check("sectors" in b.eval("document.querySelector('figure.chart figcaption').textContent"),
          "the gmem caption does not name the sectors")
    shot(b, "run-gmem")

    print("run page: GEMM rows at the power cap: valid, with the power_capped note")
    cp = post_run(d, {"benchmark": "compute_peak", "device": 0})
    notes = cp["validity"].get("notes") or []
    check([n["code"] for n in notes] == ["power_capped"], "the run has notes %s" % notes)
    open_page(b, d, "?run=" + cp["id"], "compute_peak run")
    check(b.eval("document.querySelector('#run-validity .validity').dataset.validity") == "valid",
          "a power-capped compute_peak run is not shown valid")
    text = b.eval("(document.querySelector('#run-validity li[data-note=power_capped]') || {}).textContent || ''")
    check("power_capped" in text and "%g W" % notes[0]["enforced_power_limit_w"] in text,
          "the run page does not show the power_capped note with its limit: %r" % text)
    shot(b, "run-power-capped")
    assert_clean(b)


# Replaces the clipboard with one that keeps what it is given (ok) or
# refuses it, so both paths of "Copy as markdown" are seen in headless
# Chromium whatever its clipboard permission.
FAKE_CLIPBOARD = """(() => { window.__copied = null;
  Object.defineProperty(navigator, 'clipboard', {configurable: true, value: {writeText: (t) =>
    %s ? (window.__copied = t, Promise.resolve()) : Promise.reject(new Error('denied'))}}); return 1; })()"""


def copy_markdown_case(b, box_selector, want, what):
    """Clicks the copy button in box_selector twice: the clipboard takes
    the daemon's markdown, then, refused, the text is shown selected."""
    b.eval(FAKE_CLIPBOARD % "true")
    b.eval("document.querySelector(%s).click()" % json.dumps(box_selector + " button.copy-md"))
    b.wait_for("window.__copied !== null", what=what + ": copied")
    check(b.eval("window.__copied") == want, "%s: the clipboard got %r" % (what, b.eval("window.__copied")[:200]))
    check(b.eval("document.querySelector(%s).textContent" % json.dumps(box_selector + " .copy-status")) == "copied",
          what + ": no 'copied' said")
    b.eval(FAKE_CLIPBOARD % "false")
    b.eval("document.querySelector(%s).click()" % json.dumps(box_selector + " button.copy-md"))
    area = json.dumps(box_selector + " textarea.markdown-text")
    b.wait_for("!!document.querySelector(%s)" % area, what=what + ": the fallback text")
    check(b.eval("document.querySelector(%s).value" % area) == want, what + ": the fallback shows other text")
    check(b.eval("(() => { const a = document.querySelector(%s); return document.activeElement === a && "
                 "a.selectionStart === 0 && a.selectionEnd === a.value.length; })()" % area),
          what + ": the fallback text is not selected")


def test_copy_markdown(d, b):
    """A run's page and a comparison offer "Copy as markdown": the report
    the daemon serves goes to the clipboard, or is shown selected."""
    r = post_run(d, {"benchmark": "smem_stride", "device": 0, "label": "md"})
    open_page(b, d, "?run=" + r["id"], "run page for markdown")
    want = d.get("/runs/%s.md" % r["id"]).body
    check(want.startswith("Fake GPU") and "| Stride |" in want, "run markdown: %r" % want[:200])
    copy_markdown_case(b, "#run .copy-markdown", want, "run")
    shot(b, "copy-markdown-run")
    other = post_run(d, {"benchmark": "smem_stride", "device": 1, "label": "md"})
    q = "?view=compare&benchmark=smem_stride&baseline=runs:%s&candidate=runs:%s" % (r["id"], other["id"])
    open_page(b, d, q, "verdicts for markdown")
    want = d.get("/compare.md?benchmark=smem_stride&baseline=runs:%s&candidate=runs:%s" % (r["id"], other["id"])).body
    check("Verdict: **" in want, "compare markdown: %r" % want[:300])
    copy_markdown_case(b, "#compare .copy-markdown", want, "verdicts")
    open_page(b, d, "?view=compare&benchmark=smem_stride", "series for markdown")
    copy_markdown_case(b, "#compare .copy-markdown", d.get("/compare.md?benchmark=smem_stride").body, "series")


def test_verdicts(d, b):
    """Issue 14 on the page: a run's verdicts (history and fleet, its
    alerts and the confirming run), the card's history against its band,
    the fleet view (outliers first) and the alerts list with ack.  The
    fleet is SYNTHETIC: the test double's card and seven made-up cards
    imported beside it (one 10% slow), as tests/api/test_alerts.py does."""
    from test_alerts import synthetic_card
    body = {"benchmark": "smem_stride", "device": 0, "params": {"strides": [1, 2, 32]}}
    first = post_run(d, body)
    fleet = [synthetic_card(first, c, 1.10 if c == 7 else 1.0) for c in range(1, 8)]
    r = d.post("/runs/import", "".join(json.dumps(x) + "\n" for x in fleet))
    check(r.status == 200, "import of the synthetic fleet: %r" % r)
    # a history of 8 runs: fewer cannot tell a slow card from its own
    # run-to-run swing (GB_HISTORY_MIN_RUNS, README Verdicts)
    for _ in range(7):
        post_run(d, body)
    d.set_mode("slow=1.05")
    slow = post_run(d, body)
    conf = [x for x in d.get("/runs?limit=100").json()["runs"]
            if d.get("/runs/" + x["id"]).json().get("confirms") == slow["id"]]
    check(len(conf) == 1, "one confirming run queued: %s" % conf)
    d.wait_status(conf[0]["id"], ("done",))
    d.set_mode("normal")
    deadline = time.time() + 10
    while time.time() < deadline and not any(a["state"] == "confirmed" for a in d.get("/alerts").json()["alerts"]):
        time.sleep(0.1)
    api_run = d.get("/runs/" + slow["id"]).json()
    v = api_run["verdicts"]

    print("a run's verdicts")
    open_page(b, d, "?run=" + slow["id"], "slow run")
    b.wait_for("!!(document.querySelector('#card-history table') && document.querySelector('#run-alerts table'))",
               what="card history and alerts loaded")
    check(b.eval("document.getElementById('history-verdict').dataset.verdict") == v["history"]["verdict"] == "slower",
          "history verdict shown: %s" % b.eval("document.getElementById('history-verdict').innerText"))
    check("slower" in b.eval("document.getElementById('history-verdict').innerText"), "verdict not in words")
    shown = b.eval("""Array.from(document.querySelectorAll('table.history-verdicts tbody tr')).map(tr =>
      [tr.dataset.key, tr.querySelector('[data-field=verdict]').textContent, Number(tr.querySelector('[data-field=shift]').dataset.value)])""")
    check(shown == [[str(r["key"]), r["verdict"], r["shift"]] for r in v["history"]["rows"]],
          "history rows %s != API %s" % (shown, v["history"]["rows"]))
    # each row in cycles where the clocks are known, and the samples an
    # inconclusive one would need
    shown = b.eval("""Array.from(document.querySelectorAll('table.history-verdicts tbody tr')).map(tr =>
      [tr.querySelector('[data-field=cycles]').dataset.value, tr.querySelector('[data-field=more_samples]').dataset.value])""")
    want = [[r["cycles"]["verdict"] if r["cycles"] else "", str(r["more_samples"]) if r["more_samples"] else ""]
            for r in v["history"]["rows"]]
    check(shown == want, "history rows' cycles and more samples %s != API %s" % (shown, want))
    check(any(r["cycles"] for r in v["history"]["rows"]), "the test double's rows carry no clock")
    shown = b.eval("""Array.from(document.querySelectorAll('table.fleet-verdicts tbody tr')).map(tr =>
      [tr.dataset.key, Number(tr.querySelector('[data-field=z]').dataset.value), tr.querySelector('[data-field=outlier]').textContent])""")
    check(shown == [[str(r["key"]), r["z"], "outlier" if r["outlier"] else "within the fleet"] for r in v["fleet"]["rows"]],
          "fleet rows %s != API %s" % (shown, v["fleet"]["rows"]))
    mine = [a for a in d.get("/alerts").json()["alerts"] if a["runs"]["detected"] == slow["id"]]
    check(len(mine) == 6 and all(a["state"] == "confirmed" for a in mine), "alerts: %s" % mine)
    ids = b.eval("Array.from(document.querySelectorAll('#run-alerts tbody tr')).map(tr => Number(tr.dataset.id))")
    check(sorted(ids) == sorted(a["id"] for a in mine), "run's alerts %s != API %s" % (ids, [a["id"] for a in mine]))
    text = b.eval("document.getElementById('run-alerts').innerText")
    check("confirmed by" in text and conf[0]["id"][-6:] in text, "the confirming run is not named: %s" % text)
    hist = b.eval("Array.from(document.querySelectorAll('table.card-history tbody tr')).map(tr => Number(tr.querySelector('[data-field=this_run]').dataset.value))")
    check(hist == [r["median_ms"] for r in api_run["results"]["rows"]], "card history's last column %s" % hist)
    b.wait_for("Array.from(document.querySelectorAll('figure.chart')).every(f => f.dataset.chart === 'drawn')", what="run charts drawn")
    shot(b, "run-verdicts")

    print("a confirming run says what it confirms")
    open_page(b, d, "?run=" + conf[0]["id"], "confirming run")
    b.wait_for("!!document.getElementById('verdicts-confirms')", what="confirms line")
    check(slow["id"][-6:] in b.eval("document.getElementById('verdicts-confirms').innerText"), "confirms names the run")

    print("the fleet view")
    open_page(b, d, "?view=fleet&benchmark=smem_stride", "fleet")
    assert_chart(b, "fleet")
    api_fleet = d.get("/fleet?benchmark=smem_stride").json()["groups"]
    g = [x for x in api_fleet if len(x["cards"]) == 8][0]
    shown = b.eval("""Array.from(document.querySelectorAll('table.fleet-cards')).map(t => Array.from(t.querySelectorAll('tbody tr')).map(tr =>
      [tr.dataset.uuid, tr.dataset.outlier === 'true', Array.from(tr.querySelectorAll('td[data-z]')).map(td => Number(td.dataset.value))]))""")
    want = [[c["device_uuid"], c["outlier"], [r["value_ms"] for r in c["rows"]]] for c in g["cards"]]
    check(want in shown, "fleet table %s != API %s" % (shown, want))
    page_g = shown[shown.index(want)]
    flags = [c[1] for c in page_g]
    check(flags[0] and flags == sorted(flags, reverse=True), "outliers not first: %s" % page_g)
    check(b.eval("document.querySelector('table.fleet-cards tbody tr td[data-field=outlier]').textContent") in ("outlier", "within the fleet"),
          "judgement not in words")
    time.sleep(0.3)  # a screenshot taken at once caught the canvas mid-resize, blank
    shot(b, "fleet")

    print("the alerts list and ack")
    open_page(b, d, "?view=alerts", "alerts")
    api_alerts = d.get("/alerts").json()["alerts"]
    ids = b.eval("Array.from(document.querySelectorAll('table.alerts tbody tr')).map(tr => Number(tr.dataset.id))")
    check(ids == [a["id"] for a in api_alerts], "alerts %s != API %s" % (ids, [a["id"] for a in api_alerts]))
    target = mine[0]["id"]
    b.eval("document.getElementById('ack-reason-%d').focus()" % target)
    check(b.eval("document.activeElement.id") == "ack-reason-%d" % target, "ack reason not focusable")
    b.eval("document.getElementById('ack-reason-%d').value = 'HBM stack swapped'" % target)
    b.eval("document.querySelector('form.ack[data-id=\"%d\"] button').click()" % target)
    b.wait_for("document.querySelector('#alert-%d [data-field=state]')?.dataset.value === 'acknowledged'" % target,
               what="acknowledged on the page")
    a = [x for x in d.get("/alerts").json()["alerts"] if x["id"] == target][0]
    check(a["state"] == "acknowledged" and a["reason"] == "HBM stack swapped", "ack not stored: %s" % a)
    shot(b, "alerts")
    assert_clean(b)


# Every table at the browser's width (1400 px): it fits inside the page, or
# the box around it scrolls; the page itself never scrolls sideways and no
# column is cut off by a box that hides what overflows.
TABLES_FIT = """(() => {
  const vw = document.documentElement.clientWidth, bad = [];
  if (document.documentElement.scrollWidth > vw + 1) bad.push('page scrolls sideways: ' + document.documentElement.scrollWidth + ' > ' + vw);
  for (const t of document.querySelectorAll('table')) {
    if (!t.offsetParent) continue;
    let box = t.parentElement;
    while (box && box !== document.body && !['auto', 'scroll'].includes(getComputedStyle(box).overflowX)) {
      if (getComputedStyle(box).overflowX === 'hidden' && box.scrollWidth > box.clientWidth + 1) bad.push((t.className || t.id || 'table') + ' cut off by ' + box.className);
      box = box.parentElement;
    }
    const scrolls = box && box !== document.body;
    const right = (scrolls ? box : t).getBoundingClientRect().right;
    if (right > vw + 1) bad.push((t.className || t.id || 'table') + ' reaches ' + Math.round(right) + ' px of ' + vw + (scrolls ? ' (its scroll box too)' : ' and nothing scrolls'));
    if (!scrolls && t.getBoundingClientRect().width > t.parentElement.clientWidth + 1) bad.push((t.className || 'table') + ' wider than its box, not in a scroll box');
  }
  return bad; })()"""


def assert_tables_fit(b, what):
    bad = b.eval(TABLES_FIT)
    check(not bad, "%s at %d px: %s" % (what, b.eval("window.innerWidth"), bad))


def test_newcomer(d, b):
    """Where a newcomer tripped (issue 17): how to see real data on the
    empty page, the parameters, the card and the origin in the runs list,
    the stride chart in points, tables that fit or scroll at 1400 px."""
    print("empty page: how to see real data without a GPU")
    open_page(b, d, "", "empty runs list")
    text = b.eval("(document.querySelector('.see-real-data') || {}).innerText || ''")
    check("curl -H 'Content-Type: application/x-ndjson' --data-binary @examples/h200_daemon_trust/trust_runs.ndjson" in text and "/runs/import" in text,
          "the empty page does not say how to import the examples: %r" % text)

    narrow = post_run(d, {"benchmark": "smem_stride", "device": 0, "params": {"strides": [1, 32]}})
    full = post_run(d, {"benchmark": "smem_stride", "device": 1})
    for r in (narrow, full):
        d.wait_status(r["id"], ("done",))
    # The exports the README names, and the other two, as a newcomer would.
    for name in ("h200x2_daemon/runs.ndjson", "h200x2_daemon_health/health_runs.ndjson",
                 "h200_daemon_trust/trust_runs.ndjson", "h200_daemon_health/health_runs.ndjson"):
        with open(os.path.join(EXAMPLES, name)) as f:
            exported = f.read()
        r = d.post("/runs/import", exported)
        check(r.status == 200, "import of %s: %r" % (name, r))
    imported = json.loads(exported.splitlines()[0])

    print("runs list: parameters, cards of one model told apart, origin")
    open_page(b, d, "", "runs list")
    row = """(id) => { const tr = document.querySelector('#runs tbody tr[data-id="' + id + '"]');
      return tr ? Array.from(tr.cells).map(c => c.innerText) : null; }"""
    heads = b.eval("Array.from(document.querySelectorAll('#runs thead th')).map(th => th.innerText)")
    col = {h: i for i, h in enumerate(heads)}
    check("Parameters" in col, "the runs list has no Parameters column: %s" % heads)
    a = b.eval("(%s)(%s)" % (row, json.dumps(narrow["id"])))
    f = b.eval("(%s)(%s)" % (row, json.dumps(full["id"])))
    check("strides=1,32" in a[col["Parameters"]], "the [1, 32] run's parameters: %r" % a[col["Parameters"]])
    check(a[col["Parameters"]] != f[col["Parameters"]], "a [1, 32] run and a full sweep look alike: %r" % a[col["Parameters"]])
    for run, cells in ((narrow, a), (full, f)):
        uuid = run["device"]["uuid"]
        check(uuid[-4:] in cells[col["Card"]] and uuid[4:12] in cells[col["Card"]],
              "two cards of one model are not told apart: %r (UUID %s)" % (cells[col["Card"]], uuid))
    i = b.eval("(%s)(%s)" % (row, json.dumps(imported["id"])))
    check(i is not None, "the imported run is not on the first page")
    check("imported" in i[col["Host"]] and imported["host"] in i[col["Host"]],
          "the imported run's host cell does not show its origin: %r" % i[col["Host"]])
    check("imported" not in a[col["Host"]], "a run measured here is marked imported")
    assert_tables_fit(b, "runs list")
    # The list itself fits 1400 px: no column behind a scroll bar.
    fit = b.eval("(() => { const w = document.getElementById('runs').parentElement; return [w.scrollWidth, w.clientWidth]; })()")
    check(fit[0] <= fit[1] + 1, "the runs list needs %d px, its box has %d: columns hide behind a scroll bar" % tuple(fit))
    shot(b, "newcomer-runs")

    print("an imported run's page says where it came from")
    open_page(b, d, "?run=" + imported["id"], "imported run")
    check("imported" in b.eval("document.getElementById('run-title').innerText"), "the run's title lacks its origin")
    check("imported" in b.eval("document.querySelector('.meta').innerText"), "the metadata lacks the origin")
    assert_tables_fit(b, "imported run")

    print("stride chart: points, no line across strides")
    open_page(b, d, "?run=" + full["id"], "stride run")
    assert_chart(b, "stride run")
    lines = b.eval("Chart.getChart(document.querySelector('figure.chart canvas')).data.datasets"
                   ".map(s => [s.label, s.showLine])")
    check(lines and all(show is False for _, show in lines), "the stride chart draws lines: %s" % lines)
    assert_tables_fit(b, "stride run")

    print("compare and fleet pages at 1400 px")
    for query in ("?view=compare&benchmark=smem_stride", "?view=fleet&benchmark=smem_stride", "?view=post"):
        open_page(b, d, query, query)
        assert_tables_fit(b, query)
    check(b.eval("!document.getElementById('post-submit').hidden"), "a node with GPUs hides the submit button")
    check(b.eval("document.getElementById('post-no-gpu').hidden"), "a node with GPUs says it has none")
    shot(b, "newcomer")
    assert_clean(b)


# Issue 26: every view as a newcomer sees it, at two widths.  A table
# cell's content is cut when it is wider than its cell (scrollWidth past
# clientWidth); a table is cut when it is wider than the box that holds it
# (whether that box scrolls or hides it: a column behind a scroll bar is a
# column nobody reads); a number or a unit that wraps ("98.6 / %") is
# misread.  Headers may wrap.
CUT = """(() => {
  const bad = [], name = (e) => e.tagName.toLowerCase() + (e.className ? '.' + String(e.className).trim().replace(/\\s+/g, '.') : '') +
    (e.dataset && e.dataset.field ? '[' + e.dataset.field + ']' : '');
  const vw = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > vw + 1) bad.push('the page scrolls sideways: ' + document.documentElement.scrollWidth + ' > ' + vw);
  for (const t of document.querySelectorAll('table')) {
    if (!t.offsetParent) continue;
    const tn = t.id || String(t.className) || 'table';
    for (const c of t.querySelectorAll('td, th')) {
      if (c.scrollWidth > c.clientWidth + 1) bad.push(tn + ': ' + name(c) + ' cut: ' + JSON.stringify(c.innerText.slice(0, 40)) + ' needs ' + c.scrollWidth + ' px, has ' + c.clientWidth);
    }
    // Value cells hold one line: a number and its unit never wrap, nor
    // a row's label in a table of rows (pcie's wrapped onto three lines).
    for (const c of t.querySelectorAll('td.num, td[data-value], table.rows > tbody > tr > th')) {
      const rects = Array.from((() => { const r = document.createRange(); r.selectNodeContents(c); return r.getClientRects(); })());
      if (rects.length > 1) {
        const minBottom = Math.min(...rects.map((x) => x.bottom)), maxTop = Math.max(...rects.map((x) => x.top));
        if (maxTop > minBottom - 2) bad.push(tn + ': ' + name(c) + ' wraps: ' + JSON.stringify(c.innerText));
      }
    }
    const box = t.parentElement;
    if (box && box.scrollWidth > box.clientWidth + 1) bad.push(tn + ' needs ' + box.scrollWidth + ' px, its box (' + name(box) + ') has ' + box.clientWidth);
    if (t.getBoundingClientRect().right > vw + 1) bad.push(tn + ' reaches ' + Math.round(t.getBoundingClientRect().right) + ' px of ' + vw);
  }
  return bad; })()"""

# The compare chart's series: [label, colour, point style] each.
COMPARE_STYLES = """Chart.getChart(document.querySelector('figure.chart canvas')).data.datasets.map(d =>
  [d.label, String(d.borderColor), String(d.pointStyle)])"""

# Columns of the compare table whose every value cell says "–".
EMPTY_COLUMNS = """(() => { const t = document.querySelector('table.compare'); if (!t) return ['no compare table'];
  const heads = Array.from(t.querySelectorAll('thead th')).map((th) => th.innerText), out = [];
  const rows = Array.from(t.querySelectorAll('tbody tr')).map((tr) => Array.from(tr.children).map((c) => c.innerText.trim()));
  for (let i = 1; i < heads.length; i++) if (rows.length && rows.every((r) => r[i] === '–')) out.push(heads[i]);
  return out; })()"""


def test_layout(d, b):
    """Issue 26: every view with the real H200 runs imported, at 1400 and
    1920 px: nothing in a table is cut, the power-capped compute_peak run
    does not contradict its verdict, many series stay readable in compare,
    the verdict view's Metric menu is filled, and a p2p run on a one-GPU
    node says why it has no numbers.  Every problem is collected and said
    at the end, so one run of the test shows them all."""
    import_examples(d)
    runs = {}
    for sub in sorted(os.listdir(EXAMPLES)):
        folder = os.path.join(EXAMPLES, sub)
        for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            if name.endswith(".ndjson"):
                with open(os.path.join(folder, name)) as f:
                    text = f.read()
                check(d.post("/runs/import", text).status == 200, "import of %s/%s" % (sub, name))
                for line in text.splitlines():
                    if line.strip():
                        r = json.loads(line)
                        runs[r["id"]] = r
    done = [r for r in runs.values() if r["status"] == "done"]
    # One run page per benchmark, and the two the issue names.
    pages = {}
    for r in done:
        pages.setdefault("run-" + r["benchmark"], r["id"])
    capped = [r for r in done if r["benchmark"] == "compute_peak" and (r["meta"] or {}).get("clock_dropped") is True
              and any(n["code"] == "power_capped" for n in r["validity"].get("notes") or [])]
    one_gpu = [r for r in done if r["benchmark"] == "p2p_bandwidth" and (r["results"]["summary"] or {}).get("no_pair")]
    check(capped and one_gpu, "examples/ lack a power-capped compute_peak run or a one-GPU p2p run")
    pages["run-compute_peak-power_capped"] = capped[0]["id"]
    pages["run-p2p_bandwidth-one_gpu"] = one_gpu[0]["id"]
    failed = [r for r in runs.values() if r["status"] == "failed"]
    if failed:
        pages["run-failed"] = failed[0]["id"]
    trust = [r["id"] for r in done if r.get("label") == "trust-check" and r["params"]["strides"] == [1, 32]]
    vq = "?view=compare&benchmark=smem_stride&baseline=runs:%s&candidate=runs:%s" % (trust[0], trust[1])
    queries = [("runs", "")] + [(k, "?run=" + v) for k, v in sorted(pages.items())] + [
        ("compare-many", "?view=compare&benchmark=smem_stride"), ("compare-transpose", "?view=compare&benchmark=transpose"),
        ("compare-baseline-candidate", vq), ("fleet", "?view=fleet&benchmark=smem_stride"),
        ("alerts", "?view=alerts"), ("post", "?view=post")]
    n_series = len(d.get("/compare?benchmark=smem_stride").json()["series"])
    check(n_series >= 10, "compare has only %d smem_stride series: the many-series case is not tested" % n_series)

    problems = []

    def want(cond, msg):
        if not cond:
            problems.append(msg)

    for width in (1400, 1920):
        b.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": 1000, "deviceScaleFactor": 1, "mobile": False})
        for name, query in queries:
            open_page(b, d, query, "%s at %d px" % (name, width))
            b.wait_for("Array.from(document.querySelectorAll('figure.chart')).every(f => f.dataset.chart !== 'pending')",
                       what=name + ": charts drawn")
            for p in b.eval(CUT):
                want(False, "%s at %d px: %s" % (name, width, p))
            shot(b, "layout-%d-%s" % (width, name))

    print("the power-capped compute_peak run explains its clock once")
    open_page(b, d, "?run=" + capped[0]["id"], "power-capped run")
    banners = b.eval("Array.from(document.querySelectorAll('#run .warn')).map(w => w.innerText)")
    want(not [t for t in banners if "Clock dropped" in t or "inflated" in t],
         "the valid power-capped run also warns that its clock dropped: %s" % banners)
    note = b.eval("(document.querySelector('#run-validity li[data-note=power_capped]') || {}).innerText || ''")
    want("clock" in note.lower(), "the power_capped note does not say that it is why the SM clock fell: %r" % note)
    want("may be inflated" not in b.eval("document.getElementById('run').innerText"),
         "the power-capped run still says its times may be inflated")

    print("a p2p run on a one-GPU node says why it has no numbers")
    open_page(b, d, "?run=" + one_gpu[0]["id"], "one-GPU p2p run")
    text = b.eval("document.getElementById('run').innerText")
    want(one_gpu[0]["results"]["summary"]["no_pair"] in text, "the one-GPU p2p run does not say why: %r" % text[:600])
    want("This run has no rows" not in text, "the one-GPU p2p run says only that it has no rows")
    want(b.eval("document.querySelectorAll('figure.heatmap').length") == 0, "the one-GPU p2p run shows empty matrices")

    print("compare with many series: a colour and a marker each, one highlighted, no empty column")
    open_page(b, d, "?view=compare&benchmark=smem_stride", "compare many")
    assert_chart(b, "compare many")
    styles = [x for x in b.eval(COMPARE_STYLES) if x[0] != "predicted conflict degree"]
    pairs = [(c, s) for _, c, s in styles]
    dup = sorted({p for p in pairs if pairs.count(p) > 1})
    with_values = [s for s in d.get("/compare?benchmark=smem_stride").json()["series"]
                   if any(isinstance(r.get("ratio"), (int, float)) for r in s["rows"])]
    want(len(styles) == len(with_values), "the compare chart draws %d series, %d have a ratio" % (len(styles), len(with_values)))
    want(not dup, "compare series sharing a colour and a marker: %s" % [l for l, c, s in styles if (c, s) in dup])
    empty = b.eval(EMPTY_COLUMNS)
    want(not empty, "compare table columns with no value: %s" % empty)
    # Hovering the second series' legend entry highlights it: the others
    # are drawn dimmed (a lower alpha), it is not.
    box = b.eval("""(() => { const c = Chart.getChart(document.querySelector('figure.chart canvas'));
      const h = c.legend.legendHitBoxes[1], r = c.canvas.getBoundingClientRect();
      return h ? [r.left + h.left + h.width / 2, r.top + h.top + h.height / 2] : null; })()""")
    if box:
        b.eval("document.querySelector('figure.chart canvas').scrollIntoView({block: 'center'})")
        box = b.eval("""(() => { const c = Chart.getChart(document.querySelector('figure.chart canvas'));
          const h = c.legend.legendHitBoxes[1], r = c.canvas.getBoundingClientRect();
          return [r.left + h.left + h.width / 2, r.top + h.top + h.height / 2]; })()""")
        b.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": box[0], "y": box[1]})
        time.sleep(0.3)
    colours = b.eval("""Chart.getChart(document.querySelector('figure.chart canvas')).data.datasets
      .filter(d => d.label !== 'predicted conflict degree').map(d => String(d.borderColor))""")
    alpha = lambda c: float(c.split(",")[3].rstrip(")")) if c.startswith("rgba") else 1.0
    want(len(colours) > 2 and alpha(colours[1]) == 1.0 and all(alpha(c) < 0.5 for i, c in enumerate(colours) if i != 1),
         "hovering a legend entry does not highlight its series (colours %s)" % colours[:4])
    shot(b, "layout-compare-hover")

    print("the Metric menu of a verdict view is filled")
    open_page(b, d, vq, "baseline/candidate")
    opts = b.eval("Array.from(document.querySelectorAll('#compare-form [name=metric] option')).map(o => o.textContent)")
    want(len(opts) > 0, "the Metric menu of a baseline/candidate comparison is empty")

    for p in problems:
        print("  problem:", p)
    check(not problems, "%d problem(s), listed above; the first: %s" % (len(problems), problems[:1]))
    assert_clean(b)


def test_no_gpu(d, b):
    """A node without a GPU: the post form says so at the top, with the
    reason /devices gives, and offers no button that can only fail."""
    reason = d.get("/devices").json().get("reason")
    open_page(b, d, "?view=post", "post form without a GPU")
    b.wait_for("!document.getElementById('post-no-gpu').hidden", what="the no-GPU notice")
    notice = b.eval("document.getElementById('post-no-gpu').innerText")
    check("No GPU on this node" in notice, "notice: %r" % notice)
    if reason:
        check(reason in notice, "the notice lacks /devices' reason %r: %r" % (reason, notice))
    check("/runs/import" in notice, "the notice does not say how to see real data: %r" % notice)
    first = b.eval("document.querySelector('#post-form').firstElementChild.id")
    check(first == "post-no-gpu", "the notice is not at the top of the form (first: %s)" % first)
    visible = b.eval("Array.from(document.querySelectorAll('#post-form button[type=submit]'))"
                     ".filter(x => x.offsetParent !== null).length")
    check(visible == 0, "the form offers %d submit button(s) that can only fail" % visible)
    shot(b, "no-gpu")
    assert_clean(b)


def tls_setup():
    """A test CA and a server certificate for 127.0.0.1 (tests/api/tls_certs.py):
    the daemon's --web-config, and Chromium's flag that trusts exactly that
    certificate's key (the SHA-256 of its SubjectPublicKeyInfo), so nothing
    else about certificates is relaxed."""
    import ssl
    from tls_certs import Certs
    c = Certs(tempfile.mkdtemp(prefix="gpubench-browser-tls-"))
    c.ca("ca")
    c.server("server", "ca")
    der = subprocess.run(["openssl", "pkey", "-in", c.path("server.key"), "-pubout", "-outform",
                          "DER"], check=True, stdout=subprocess.PIPE).stdout
    spki = base64.b64encode(hashlib.sha256(der).digest()).decode()
    ctx = ssl.create_default_context(cafile=c.path("ca.crt"))
    return (["--web-config", c.web_config("web", "server.crt", "server.key")],
            ["--ignore-certificate-errors-spki-list=" + spki], ctx)


# The nodes view (issue 22) reads GET /peers as the contract of the i22 hub
# has it: state, labels, counts, newest_run, peers_file.
NODE_ROWS = """(() => Array.from(document.querySelectorAll('table.nodes tbody tr')).map(tr => ({
  url: tr.dataset.url, state: tr.dataset.state,
  pulled: tr.querySelector('td[data-field=runs_pulled]').dataset.value,
  labels: Array.from(tr.querySelectorAll('.peer-label')).map(a => a.textContent),
  error: tr.querySelector('.peer-last-error').innerText,
  newest: (tr.querySelector('td:last-child a') || {}).href || null })))()"""
NODE_COUNTS = """(() => Object.fromEntries(Array.from(document.querySelectorAll('#nodes-counts a[data-state]'))
  .map(a => [a.dataset.state, Number(a.dataset.count)])))()"""


# The coverage matrix and a card's page (issue 24): the cells as the page
# shows them, by card and benchmark.
COVERAGE_CELLS = """(() => Array.from(document.querySelectorAll('table.coverage tbody tr')).map(tr => ({
  uuid: tr.dataset.uuid, state: tr.dataset.state,
  cells: Object.fromEntries(Array.from(tr.querySelectorAll('td.cov-cell[data-benchmark]')).map(td =>
    [td.dataset.benchmark, {state: td.dataset.state, run: (td.querySelector('a') || {}).href || null}]))})))()"""


def check_coverage_shown(b, answer, what):
    shown = b.eval(COVERAGE_CELLS)
    check([r["uuid"] for r in shown] == [c["uuid"] for c in answer["cards"]],
          "%s: the page's cards are not the API's" % what)
    for row, card in zip(shown, answer["cards"]):
        check(row["state"] == card["state"], "%s: card %s state %s, API %s" % (what, card["uuid"], row["state"], card["state"]))
        for cell in card["cells"]:
            got = row["cells"].get(cell["benchmark"])
            check(got and got["state"] == cell["state"], "%s: %s %s shows %r, API %s" % (what, card["uuid"], cell["benchmark"], got, cell["state"]))
            check((got["run"] or "").endswith("?run=" + cell["run_id"]) if cell["run_id"] else got["run"] is None,
                  "%s: %s %s links %r, API run %s" % (what, card["uuid"], cell["benchmark"], got["run"], cell["run_id"]))
    for s, n in answer["totals"].items():
        shown_n = b.eval("(document.querySelector('#coverage-totals [data-state=%s]') || {}).dataset?.count" % json.dumps(s))
        check(shown_n == str(n), "%s: total %s shows %s, API %d" % (what, s, shown_n, n))


def test_coverage(d, b):
    """The coverage matrix: every card against every health benchmark, a
    cell linking to its run, a card to its page; the window in the URL."""
    r = d.post("/runs?wait=30", {"benchmark": "health", "device": 0})
    check(r.status in (200, 202), "POST health: %r" % r)
    for run in r.json()["runs"]:
        d.wait_status(run["id"], ("done",), timeout=30)
    answer = d.get("/coverage").json()
    open_page(b, d, "?view=coverage", "coverage view")
    check_coverage_shown(b, answer, "coverage")
    assert_tables_fit(b, "coverage view")
    shot(b, "coverage")
    # a cell's link opens its run
    run_id = answer["cards"][0]["cells"][0]["run_id"]
    b.eval("document.querySelector('table.coverage tbody tr td.cov-cell a').click()")
    b.wait_for("location.search === %s && %s" % (json.dumps("?run=" + run_id), READY), what="the cell's run")
    # the card page, from the matrix
    open_page(b, d, "?view=coverage", "coverage view again")
    b.eval("document.querySelectorAll('table.coverage a.card-link')[0].click()")
    card = answer["cards"][0]
    b.wait_for("new URLSearchParams(location.search).get('view') === 'card' && %s" % READY, what="the card page")
    check(b.eval("new URLSearchParams(location.search).get('uuid')") == card["uuid"], "the card link names another card")
    check(b.eval("document.querySelector('#card-summary [data-field=card-state]').dataset.value") == card["state"],
          "the card page's state is not the API's")
    check(b.eval("document.getElementById('card-reason')?.textContent ?? null") == card["reason"], "the card page's reason is not the API's")
    history = d.get("/runs?device=%s&limit=20" % card["uuid"]).json()["runs"]
    shown = b.eval("document.querySelectorAll('table.card-history tbody tr').length")
    check(len(history) > 0 and shown == len(history), "the card page shows %d runs, the API %d" % (shown, len(history)))
    check(b.eval("!!document.getElementById('card-alerts-none')"), "the card page does not say it has no alert")
    cells = b.eval("Array.from(document.querySelectorAll('table.card-coverage td.cov-cell')).map(td => td.dataset.state)")
    check(cells == [c["state"] for c in card["cells"]], "the card page's cells %r, API %r" % (cells, card["cells"]))
    # its checks against the floors, as GET /cards/UUID gives them
    checks = d.get("/cards/" + card["uuid"]).json()["checks"]
    shown = b.eval("Array.from(document.querySelectorAll('table.card-checks tbody tr')).map(tr => tr.dataset.row)")
    check(len(checks) > 0 and shown == [str(c["row"]) for c in checks], "the card page's checks %r, API %r" % (shown, checks))
    shot(b, "card")
    # the window from the form, kept in the URL
    time.sleep(1.1)
    open_page(b, d, "?view=coverage", "coverage view, before the window")
    b.eval("(() => { const f = document.getElementById('coverage-form'); f.elements.max_age.value = '1s'; f.requestSubmit(); })()")
    b.wait_for("location.search === '?view=coverage&max_age=1s' && %s" % READY, what="the 1 s window")
    answer = d.get("/coverage?max_age=1s").json()
    check(answer["totals"]["fresh"] == 0, "nothing fresh in a 1 s window")
    check_coverage_shown(b, answer, "coverage in 1 s")
    assert_clean(b)


# A run page's checks against the floors as the page shows them, in order.
RUN_CHECKS = """Array.from(document.querySelectorAll('table.run-checks tbody tr')).map(tr => ({
  row: tr.dataset.row, pass: tr.dataset.pass, value: tr.querySelector('[data-field=value]').dataset.value,
  floor: tr.querySelector('[data-field=floor]').dataset.value, source: tr.querySelector('[data-field=floor]').title,
  result: tr.querySelector('[data-field=pass]').textContent}))"""


def check_run_checks(b, d, run_id, what):
    """The run page shows the run's checks as GET /runs/ID has them, each
    result in words; returns the API's checks."""
    checks = d.get("/runs/" + run_id).json()["checks"]
    open_page(b, d, "?run=" + run_id, what)
    shown = b.eval(RUN_CHECKS)
    check(len(shown) == len(checks), "%s: the page shows %d checks, the API has %d" % (what, len(shown), len(checks)))
    for s, c in zip(shown, checks):
        check(s["row"] == c["row"] and float(s["value"]) == c["value"] and s["pass"] == json.dumps(c["pass"]),
              "%s: check %r shown as %r" % (what, c, s))
        check(s["source"] == c["source"] and (s["floor"] == "null" if c["floor"] is None else float(s["floor"]) == c["floor"]),
              "%s: %s's floor %r (source %r), API %r (%r)" % (what, c["row"], s["floor"], s["source"], c["floor"], c["source"]))
        check(s["result"] == ("pass" if c["pass"] else "below the floor"), "%s: %s's result reads %r" % (what, c["row"], s["result"]))
    return checks


def test_run_checks(d, b):
    """A health run's checks on its page: a real H200 canary run imported
    (every row over its floor), the test double named an H200 and slowed
    (triad below its floor, said in words), and nothing for a run of a
    benchmark without floors."""
    with open(os.path.join(EXAMPLES, "h200_daemon_canary", "canary_runs.ndjson")) as f:
        runs = [json.loads(line) for line in f if line.strip()]
    r = d.post("/runs/import", "".join(json.dumps(x) + "\n" for x in runs))
    check(r.status == 200, "import of the canary runs: %r" % r)
    hbm = next(x["id"] for x in runs if x["benchmark"] == "hbm_bandwidth")
    checks = check_run_checks(b, d, hbm, "imported H200 hbm_bandwidth")
    check(checks and all(c["pass"] is True for c in checks), "the imported H200 run's checks: %r" % checks)
    check("below" not in b.eval("document.querySelector('table.run-checks caption').textContent"), "the caption counts a failed row")
    shot(b, "run-checks")
    d.set_mode("slow=1.08")  # triad under the H200's floor, memcpy still over
    slow = post_run(d, {"benchmark": "hbm_bandwidth", "device": 0}, wait=30)["id"]
    d.wait_status(slow, ("done",), timeout=30)
    checks = check_run_checks(b, d, slow, "a slowed hbm_bandwidth")
    check([c["row"] for c in checks if c["pass"] is False] == ["triad"], "slow=1.08 did not fail triad alone: %r" % checks)
    check("1 of 2 rows below" in b.eval("document.querySelector('table.run-checks caption').textContent"),
          "the caption does not count the failed row")
    without = next(x["id"] for x in runs if x["benchmark"] == "gmem_stride")
    check(d.get("/runs/" + without).json()["checks"] is None, "gmem_stride has checks")
    open_page(b, d, "?run=" + without, "a run without checks")
    check(b.eval("!document.getElementById('run-checks') && !!document.getElementById('run-validity')"),
          "a run without checks shows a checks panel (or no validity)")
    assert_clean(b)


def first_wrong(b, field):
    """The cells of field in the run page's first mismatches or errors."""
    return b.eval("Array.from(document.querySelectorAll('#run-first-wrong td[data-field=%s]'))"
                  ".map(td => td.textContent)" % field)


def test_deep_checks(d, b):
    """Issue 32: soak's one-second series drawn on its run page (rate, then
    clock, temperature and power against time); a known_answer mismatch
    and a memtest error shown where they are (SM, address), the card page's
    deep checks."""
    print("run page: soak's series against time")
    soak = post_run(d, {"benchmark": "soak", "device": 0, "params": {"seconds": 60}}, wait=30)
    series = soak["results"]["summary"]["series"]
    open_page(b, d, "?run=" + soak["id"], "soak run")
    for fig in ("soak-rate", "soak-card"):
        b.wait_for("document.getElementById('%s').dataset.chart === 'drawn'" % fig, what=fig + " drawn")
    drawn = b.eval("Chart.getChart(document.querySelector('#soak-rate canvas')).data.datasets.map(d => d.data)")
    check(drawn[0] == [s["gemm_tflops"] for s in series], "the rate chart's GEMM series is not the run's")
    check(drawn[1] == [s["hbm_gbps"] for s in series], "the rate chart's HBM series is not the run's")
    card = b.eval("Chart.getChart(document.querySelector('#soak-card canvas')).data.datasets.map(d => d.label)")
    check(card[:3] == ["SM clock (MHz)", "temperature (°C)", "power (W)"], "the card chart draws %s" % card)
    labels = b.eval("Chart.getChart(document.querySelector('#soak-card canvas')).data.labels")
    check(labels == [s["t"] for s in series], "the x axis is not the series' seconds")
    check("Sustained" in b.eval("document.querySelector('section.summary').textContent"), "no sustained share said")
    shot(b, "run-soak")

    print("run page: a known_answer mismatch names its SM")
    d.set_mode("once:mismatch_sm=1")
    bad = post_run(d, {"benchmark": "known_answer", "device": 0, "params": {"seconds": 1}}, wait=30)
    open_page(b, d, "?run=" + bad["id"], "known_answer run")
    text = b.eval("document.getElementById('run-wrong-results').textContent")
    check("known_answer fp32_fma: 3 mismatches on SM 1" in text, "the wrong results are not said: %r" % text)
    sms = first_wrong(b, "sm")
    check(sms == ["1", "1", "1"], "first mismatches show SMs %s" % sms)
    check(b.eval("document.querySelector('td[data-field=mismatches].bad').dataset.value") == "3",
          "the mismatches cell is not marked")
    shot(b, "run-known-answer")

    print("run page: a memtest error names its address")
    d.set_mode("once:memtest_error=0x2000")
    mem = post_run(d, {"benchmark": "memtest", "device": 1, "params": {"fraction": 0.1}}, wait=30)
    open_page(b, d, "?run=" + mem["id"], "memtest run")
    addr = first_wrong(b, "address")
    check(addr[:1] == ["0x2000"], "first errors show %s" % addr)

    print("card page: the deep checks' coverage")
    uuid = bad["device"]["uuid"]
    open_page(b, d, "?view=card&uuid=" + uuid, "card page")
    deep = b.eval("Array.from(document.querySelectorAll('table.card-deep-coverage tbody tr')).map(tr => tr.dataset.benchmark)")
    check(deep == ["known_answer", "memtest", "soak"], "the card page's deep checks: %s" % deep)
    check("3 mismatches on SM 1" in b.eval("document.getElementById('card-reason').textContent"),
          "the card page does not give the mismatch as its reason")
    assert_clean(b)


def watched_card_env():
    """The stand-in NVML (test_card_events.py) for the watch and the
    canaries' quiet check, reading a file that starts with the recorded
    idle H200 made busy (a process on it), so that a canary is first held
    back; the test appends the lines after it."""
    from test_card_events import NVML, idle_h200
    path = os.path.join(tempfile.mkdtemp(prefix="gpubench-nvml-"), "readings.ndjson")
    with open(path, "w") as f:
        f.write(json.dumps(dict(idle_h200(), utilization_percent=80, processes=[{"pid": 4242}])) + "\n")
    return {"GPUBENCH_NVML_LIBRARY": NVML, "GPUBENCH_FAKE_NVML_READINGS": path}


CANARY_ARGS = ["--watch-interval", "1", "--canary", "smem_stride@1h", "--canary-idle", "2s"]

# The card page's canaries and events as it shows them.
CARD_CANARIES = """Array.from(document.querySelectorAll('table.card-canaries tbody tr')).map(tr => ({
  benchmark: tr.dataset.benchmark, run: tr.querySelector('[data-field=last]').dataset.run,
  outcome: (tr.querySelector('[data-field=last] .badge') || {}).textContent,
  next: tr.querySelector('[data-field=next]').textContent,
  deferred: tr.querySelector('[data-field=deferred]').dataset.count,
  deferred_text: tr.querySelector('[data-field=deferred]').textContent}))"""
CARD_EVENTS = """Array.from(document.querySelectorAll('table.card-events tbody tr')).map(tr => ({
  id: tr.dataset.id, kind: tr.dataset.kind, text: tr.textContent}))"""


def test_card_watch(d, b):
    """The card page of a card this daemon watches: its canary (held back
    while a process used the card, then run once it was quiet) with its
    last run, outcome, next due and the deferrals' latest reason, as GET
    /canaries has them; its newest events (an XID 79 injected) as GET
    /cards/UUID/events has them, and a link to them all; the card
    degraded by the XID, its alert confirmed: a smem_stride canary has no
    floors, so it does not end a one-off event (store_card_events.h)."""
    from test_fleet import wait_for
    readings = d.extra_env["GPUBENCH_FAKE_NVML_READINGS"]
    first = lambda: d.get("/canaries").json()["cards"][0]
    wait_for(lambda: (first()["canaries"][0]["deferred"]["reason"] or "").startswith("card busy"), 30, "a busy deferral")
    from test_card_events import idle_h200
    with open(readings, "a") as f:  # quiet now, and an XID 79 seen
        f.write(json.dumps(dict(idle_h200(), xid=[{"xid": 79, "at": 1764600001000}])) + "\n")
    wait_for(lambda: (first()["canaries"][0]["last_run"] or {}).get("outcome") == "done", 40, "the canary ran")
    card = first()
    uuid = card["uuid"]
    events = wait_for(lambda: d.get("/cards/%s/events?limit=5" % uuid).json()["events"], 20, "the XID's event")
    open_page(b, d, "?view=card&uuid=" + uuid, "a watched card's page")
    shown = b.eval(CARD_CANARIES)
    check(len(shown) == len(card["canaries"]) == 1, "the card page shows canaries %r, API %r" % (shown, card["canaries"]))
    c, s = card["canaries"][0], shown[0]
    check(s["benchmark"] == c["benchmark"] and s["run"] == c["last_run"]["id"] and s["outcome"] == "done",
          "the canary shown %r, API %r" % (s, c))
    check(s["next"] != "–" and s["next"] != "due now", "the next due time is not shown: %r" % s["next"])
    check(int(s["deferred"]) == c["deferred"]["count"] >= 1 and c["deferred"]["reason"] in s["deferred_text"],
          "the deferrals shown %r, API %r" % (s, c["deferred"]))
    b.eval("document.querySelector('table.card-canaries [data-field=last] a').click()")
    b.wait_for("location.search === %s && %s" % (json.dumps("?run=" + c["last_run"]["id"]), READY), what="the canary's run")
    open_page(b, d, "?view=card&uuid=" + uuid, "the card's page again")
    ev = b.eval(CARD_EVENTS)
    events = d.get("/cards/%s/events?limit=5" % uuid).json()["events"]
    check([e["id"] for e in ev] == [str(e["id"]) for e in events] and any(e["kind"] == "xid" for e in ev),
          "the card page's events %r, API %r" % (ev, events))
    check(all(e["message"] in s["text"] for e, s in zip(events, ev)), "an event's message is not shown: %r" % ev)
    check(b.eval("document.getElementById('card-events-all').getAttribute('href')") == "/cards/%s/events" % uuid,
          "no link to the card's events")
    api_card = d.get("/cards/" + uuid).json()
    check(api_card["state"] == "degraded" and "XID 79" in api_card["reason"],
          "after an XID 79 and a smem_stride canary the card is %r" % api_card)
    check(b.eval("document.querySelector('#card-summary [data-field=card-state]').dataset.value") == "degraded",
          "the card page does not show the card degraded")
    check(b.eval("document.getElementById('card-reason')?.textContent ?? null") == api_card["reason"],
          "the card page's reason is not the API's")
    shown_alerts = b.eval("Array.from(document.querySelectorAll('tr[data-kind=card_event]')).map(tr => tr.dataset.state)")
    check(shown_alerts == ["confirmed"], "the card page's card_event alerts %r, not one confirmed" % shown_alerts)
    shot(b, "card-watch")
    assert_clean(b)

    # The same card at a hub that pulls this node: the hub does not watch
    # it, so its page says so and shows what the node reports instead of
    # "the watch has seen nothing".
    hub = harness.Daemon(gpus=0, args=["--web", WEB, "--peer", "http://127.0.0.1:%d" % d.port,
                                       "--peer-interval", "1"])
    try:
        hub.start()
        at_hub = wait_for(lambda: (lambda c: c if c.get("peer_faults") else None)(
            hub.get("/cards/" + uuid).json() if hub.get("/cards/" + uuid).status == 200 else {}),
            30, "the node's XID at the hub")
        check(at_hub["state"] == "degraded" and at_hub["reason"] == api_card["reason"],
              "the hub judges the card %r, its node %r" % (at_hub, api_card))
        open_page(b, hub, "?view=card&uuid=" + uuid, "the watched card's page at a hub")
        none = b.eval("document.getElementById('card-events-none')?.textContent ?? ''")
        check("does not watch this card" in none and "what its node reports open" in none,
              "the hub's card page says %r of its events" % none)
        rows = b.eval("""Array.from(document.querySelectorAll('table.card-peer-faults tbody tr')).map(tr => ({
  subject: tr.dataset.subject, source: tr.querySelector('[data-field=source]').textContent, text: tr.textContent}))""")
        want = at_hub["peer_faults"]
        check([(r["subject"], r["source"]) for r in rows] == [(f["subject"], f["source"]) for f in want]
              and all(f["message"] in r["text"] for f, r in zip(want, rows)),
              "the hub's card page shows the node's faults %r, API %r" % (rows, want))
        check(b.eval("document.getElementById('card-reason')?.textContent ?? null") == at_hub["reason"],
              "the hub's card page's reason is not the API's")
        shot(b, "card-watch-hub")
        assert_clean(b)
    finally:
        hub.stop()


def fake_peers(n, run_id):
    """GET /peers as the contract has it, for n peers: 10 racks of two rows,
    the first 5% failing, a few pulling and new, the rest ok, each ok one's
    newest run the real run run_id; one peer as an older daemon answers
    (no state, labels or newest_run)."""
    peers = []
    for i in range(n):
        st = "failing" if i % 20 == 0 else "pulling" if i % 97 == 1 else "new" if i % 89 == 2 else "ok"
        p = {"url": "http://10.%d.%d.%d:8080" % (i // 65536, i // 256 % 256, i % 256), "source": "file",
             "labels": {"rack": "r%d" % (i % 10), "row": "ab"[i // 10 % 2]}, "state": st,
             "cursor": 0 if st == "new" else 100, "runs_pulled": 0 if st == "new" else 100,
             "skipped": {"count": 0, "last_reason": None},
             "last_success_at": None if st == "new" else "2026-12-01T10:00:00.000Z",
             "last_error": None, "last_error_at": None, "failures_in_row": 0,
             "next_pull_at": "2026-12-01T10:00:30.000Z",
             "newest_run": None if st == "new" else {"id": run_id, "finished_at": "2026-12-01T09:59:00.000Z"}}
        if st == "failing":
            p.update(last_error="Couldn't connect to server: Failed to connect to 10.0.0.%d port 8080 after 0 ms: "
                     "Connection refused" % (i % 256), last_error_at="2026-12-01T10:00:01.000Z", failures_in_row=3)
        peers.append(p)
    peers[-1] = {"url": peers[-1]["url"], "cursor": 7, "runs_pulled": 7, "failures_in_row": 0,
                 "last_success_at": "2026-12-01T10:00:00.000Z", "last_error": None}
    counts = {s: 0 for s in ("new", "ok", "failing", "pulling")}
    for p in peers:
        counts[p.get("state", "ok")] += 1
    return {"peers": peers, "counts": counts, "total": n,
            "peers_file": {"path": "/etc/gpubench/peers.json", "loaded_at": "2026-12-01T09:00:00.000Z",
                           "targets": n, "error": None}}


def fake_hub(d, answer):
    """A loopback proxy to d that answers GET /peers with answer (the page
    is d's own, headers and Content-Security-Policy included).  Returns
    (server, port); server.shutdown() stops it."""
    import http.server
    import threading
    import urllib.request
    body = json.dumps(answer).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            if self.path.split("?")[0] == "/peers":
                status, headers, data = 200, [("Content-Type", "application/json")], body
            else:
                try:
                    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (d.port, self.path)) as r:
                        status, headers, data = r.status, r.getheaders(), r.read()
                except urllib.error.HTTPError as e:
                    status, headers, data = e.code, e.headers.items(), e.read()
            self.send_response(status)
            for k, v in headers:
                if k.lower() not in ("transfer-encoding", "connection", "content-length", "date", "server"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, srv.server_address[1]


def check_nodes_shown(b, answer, what):
    """The table and the counts on top are the API's."""
    shown = b.eval(NODE_ROWS)
    want = answer["peers"]
    check(len(shown) == len(want), "%s: %d rows for %d peers" % (what, len(shown), len(want)))
    for s, p in zip(shown, want):
        check(s["url"] == p["url"], "%s: row %s, API %s (not in url order?)" % (what, s["url"], p["url"]))
        if "state" in p:
            check(s["state"] == p["state"], "%s: %s shows %s, API %s" % (what, p["url"], s["state"], p["state"]))
        check(int(s["pulled"]) == p["runs_pulled"], "%s: %s runs pulled %s, API %s" % (what, p["url"], s["pulled"], p["runs_pulled"]))
        want_labels = sorted("%s:%s" % kv for kv in (p.get("labels") or {}).items())
        check(s["labels"] == want_labels, "%s: %s labels %s, API %s" % (what, p["url"], s["labels"], want_labels))
        if p.get("last_error"):
            check(p["last_error"] in s["error"], "%s: %s error %r, API %r" % (what, p["url"], s["error"], p["last_error"]))
        nr = p.get("newest_run")
        check((s["newest"] or "").endswith("?run=" + nr["id"]) if nr else s["newest"] is None,
              "%s: %s newest run link %s, API %s" % (what, p["url"], s["newest"], nr))
    if "counts" in answer:
        check(b.eval(NODE_COUNTS) == answer["counts"], "%s: counts %s, API %s" % (what, b.eval(NODE_COUNTS), answer["counts"]))


def test_nodes(d, b):
    """The nodes view: a hub's peers with their state, labels, last
    success, runs pulled, last error and newest run, the counts by state on
    top, filtered by state and label with the filters in the URL; usable at
    1,000 peers (one table that fits 1400 px); robust to an older daemon's
    answer.  First against the contract's answer (a proxy in front of d
    answers GET /peers), then against a real hub pulling d and a dead node."""
    run_id = json.loads(open(os.path.join(EXAMPLES, "h200_daemon_trust/trust_runs.ndjson")).readline())["id"]
    with open(os.path.join(EXAMPLES, "h200_daemon_trust/trust_runs.ndjson")) as f:
        exported = f.read()
    r = d.post("/runs/import", exported)
    check(r.status == 200, "import: %r" % r)
    answer = fake_peers(1000, run_id)
    srv, port = fake_hub(d, answer)
    try:
        class Fake:
            tls = None
        fake = Fake()
        fake.port = port
        print("1,000 peers as the contract has them")
        t0 = time.time()
        open_page(b, fake, "?view=nodes", "nodes view, 1,000 peers")
        print("  drawn in %.2f s" % (time.time() - t0))
        check_nodes_shown(b, answer, "1,000 peers")
        assert_tables_fit(b, "nodes view, 1,000 peers")
        shot(b, "nodes-1000")
        old = b.eval(NODE_ROWS)[-1]
        check(old["state"] == "ok", "an older daemon's peer with a success and no failure shows %s" % old["state"])

        print("filtered: failing on rack r0, from the URL, and through the form")
        q = "?view=nodes&state=failing&label=rack%3Ar0"
        open_page(b, fake, q, "nodes view, filtered")
        want = [p for p in answer["peers"] if p.get("state") == "failing" and p.get("labels", {}).get("rack") == "r0"]
        check(want, "the fake has no failing peer on rack r0")
        check_nodes_shown(b, dict(answer, peers=want), "failing on r0")
        check(b.eval("document.querySelector('#nodes-form [name=state]').value") == "failing", "the form does not show the state filter")
        check(b.eval("document.querySelector('#nodes-form [name=label]').value") == "rack:r0", "the form does not show the label filter")
        b.eval("(() => { const f = document.getElementById('nodes-form'); f.elements.label.value = 'rack:r0 row:b';"
               " f.requestSubmit(); })()")
        b.wait_for("location.search.includes('label=row%3Ab') && " + READY, what="the form's label filter in the URL")
        check("state=failing" in b.eval("location.search"), "the form dropped the state filter")
        want2 = [p for p in want if p["labels"]["row"] == "b"]
        check_nodes_shown(b, dict(answer, peers=want2), "failing on r0, row b")
        assert_clean(b)
    finally:
        srv.shutdown()

    print("a real hub pulling this node and a dead one")
    s = __import__("socket").socket()
    s.bind(("127.0.0.1", 0))
    dead = s.getsockname()[1]
    s.close()
    args = ["--web", WEB, "--peer-interval", "1"]
    path = os.path.join(d.tmp, "peers.json")
    with open(path, "w") as f:
        json.dump([{"targets": ["127.0.0.1:%d" % d.port], "labels": {"rack": "r1"}},
                   {"targets": ["127.0.0.1:%d" % dead], "labels": {"rack": "r2"}}], f)
    args += ["--peers-file", path]
    hub = harness.Daemon(gpus=0, args=args)
    try:
        hub.start()
        n = len([x for x in exported.splitlines() if x.strip()])
        deadline = time.time() + 30
        while True:
            ans = hub.get("/peers").json()
            by = {p["url"].rsplit(":", 1)[-1]: p for p in ans["peers"]}
            if by[str(d.port)]["runs_pulled"] >= n and by[str(dead)]["failures_in_row"] >= 1:
                break
            check(time.time() < deadline, "the hub did not pull the node and fail the dead one: %s" % ans)
            time.sleep(0.2)
        open_page(b, hub, "?view=nodes", "nodes view, a real hub")
        ans = hub.get("/peers").json()
        check_nodes_shown(b, ans, "a real hub")
        states = {row["url"].rsplit(":", 1)[-1]: row["state"] for row in b.eval(NODE_ROWS)}
        check(states == {str(d.port): "ok", str(dead): "failing"}, "states shown: %s" % states)
        open_page(b, hub, "?view=nodes&state=failing", "nodes view, a real hub, failing")
        rows = b.eval(NODE_ROWS)
        check([x["url"].rsplit(":", 1)[-1] for x in rows] == [str(dead)], "failing filter shows %s" % rows)
        check("counts" in ans, "GET /peers has no counts: %s" % ans)
        open_page(b, hub, "?view=nodes&label=rack%3Ar1", "nodes view, a real hub, rack r1")
        rows = b.eval(NODE_ROWS)
        check([x["url"].rsplit(":", 1)[-1] for x in rows] == [str(d.port)], "rack r1 shows %s" % rows)
        check(rows[0]["newest"], "the pulled node's newest run has no link")
        assert_clean(b)
    finally:
        hub.stop()


def test_tls(d, b):
    """The page over HTTPS: the run list, a run with its chart, no complaint."""
    r = post_run(d, {"benchmark": "smem_stride", "device": 0})
    open_page(b, d, "?run=" + r["id"], "a run over https")
    check(b.eval("location.protocol") == "https:", "the page is not on https")
    assert_chart(b, "run over https")
    assert_rows_match(b, d.get("/runs/" + r["id"]).json()["results"]["rows"], "stride")
    shot(b, "tls")
    assert_clean(b)

# A page of another site (another origin: its own port) that posts to the
# daemon as a cross-site attacker would: a text/plain form whose one field
# spells a run's JSON (the body is name=value: {"benchmark": ..., "label":
# "csrf="}), and a no-cors fetch of an import.
CROSS_SITE_PAGE = """<!doctype html><meta charset=utf-8><title>another site</title>
<form id=f method=post enctype=text/plain action="%(daemon)s/runs">
<input name='{"benchmark":"smem_pattern","label":"csrf' value='"}'></form>
<script>
fetch("%(daemon)s/runs/import", {method: "POST", mode: "no-cors",
  headers: {"Content-Type": "text/plain"}, body: "{}"})
  .finally(() => { document.title = "fetched"; document.getElementById("f").submit(); });
</script>"""


def test_cross_site(d, b):
    """A page of another site cannot queue a run on the daemon: its form's
    text/plain post (Origin: the other site) is refused, 403, and nothing is
    queued; the daemon's own page still posts."""
    import functools
    import http.server
    import threading
    folder = tempfile.mkdtemp(prefix="gpubench-other-site-")
    with open(os.path.join(folder, "index.html"), "w") as f:
        f.write(CROSS_SITE_PAGE % {"daemon": "http://127.0.0.1:%d" % d.port})
    site = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(http.server.SimpleHTTPRequestHandler, directory=folder))
    threading.Thread(target=site.serve_forever, daemon=True).start()
    try:
        b.goto("http://127.0.0.1:%d/" % site.server_address[1])
        # The form's answer replaces the page: the daemon's refusal.
        b.wait_for("location.port === %s && document.body && document.body.innerText.length > 0"
                   % json.dumps(str(d.port)), what="the daemon's answer to the form")
        text = b.eval("document.body.innerText")
        check("forbidden_origin" in text, "the cross-site form was not refused: %r" % text[:300])
    finally:
        site.shutdown()
        site.server_close()
    runs = d.get("/runs").json()["runs"]
    check(runs == [], "a page of another site queued or imported runs: %r" % runs[:2])
    # The daemon's own page posts as ever (JSON, its own Origin).
    open_page(b, d, "", "the daemon's own page")
    got = b.eval("fetch('/runs', {method: 'POST', headers: {'Content-Type': 'application/json'},"
                 " body: JSON.stringify({benchmark: 'smem_pattern', label: 'own'})})"
                 ".then(r => r.status)")
    check(got == 202, "the daemon's own page could not post a run: %r" % got)
    check([r["label"] for r in d.get("/runs").json()["runs"]] == ["own"], "the own post is not there")


def main():
    if not cdp.find_chromium():
        print("SKIPPED: chromium not installed (apt-get install chromium)")
        return 77
    t0 = time.time()
    print("screenshots in", SHOTS)
    failures = 0
    cases = [
        ("pages", test_pages, {}, EXAMPLE_ARGS),
        ("live", test_live, {"GPUBENCH_FAKE_DELAY_MS": "100"}, []),
        ("no_chartjs", test_no_chartjs, {}, ["--chartjs", "/nonexistent/chart.min.js"]),
        ("validity", test_validity, {}, []),
        ("waiting", test_waiting, {"GPUBENCH_FAKE_WAIT_MS": "4000", "GPUBENCH_FAKE_DELAY_MS": "100"},
         EXAMPLE_ARGS),
        ("peaks", test_peaks, {}, []),
        ("copy_markdown", test_copy_markdown, {}, []),
        ("verdicts", test_verdicts, {}, ["--confirm-runs", "1", "--history-runs", "8"]),
        ("newcomer", test_newcomer, {}, EXAMPLE_ARGS),
        ("no_gpu", test_no_gpu, {"GPUBENCH_FAKE_GPUS": "0"}, []),
        ("layout", test_layout, {}, EXAMPLE_ARGS),
        ("nodes", test_nodes, {}, EXAMPLE_ARGS),
        ("coverage", test_coverage, {}, []),
        ("card_watch", test_card_watch, "watched", CANARY_ARGS),
        ("run_checks", test_run_checks, {"GPUBENCH_FAKE_GPU_NAME": "NVIDIA H200"}, []),
        ("deep_checks", test_deep_checks, {"GPUBENCH_FAKE_GPU_NAME": "NVIDIA H200"}, []),
        ("tls", test_tls, {}, "tls"),
        ("cross_site", test_cross_site, {}, []),
    ]
    # test_browser.py NAME... (or GPUBENCH_BROWSER_CASES=a,b): only those
    # cases (while working on one).
    only = sys.argv[1:] or [c for c in os.environ.get("GPUBENCH_BROWSER_CASES", "").split(",") if c]
    cases = [c for c in cases if not only or c[0] in only]
    for name, fn, env, args in cases:
        flags, tls = [], None
        if args == "tls":
            args, flags, tls = tls_setup()
        if env == "watched":
            env = watched_card_env()
        d = harness.Daemon(gpus=2, env=env, args=["--web", WEB] + args, tls=tls)
        b = None
        try:
            d.start()
            b = cdp.Browser(flags=flags)
            print("== " + name)
            fn(d, b)
            print("ok   " + name)
        except Exception:
            failures += 1
            print("FAIL " + name)
            traceback.print_exc()
            if b:
                try:
                    shot(b, "FAIL-" + name)
                    print("  console:", b.problems())
                except Exception:
                    pass
            print(d.read_log()[-3000:] if d.proc else "")
        finally:
            if b:
                b.close()
            rc = d.stop()
            if rc not in (0, None):
                failures += 1
                print("FAIL %s: gpubenchd exited %s" % (name, rc))
    print("%d failure(s), %.1f s" % (failures, time.time() - t0))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
