// charts.js - chart builders for the gpubench page, on Chart.js 3 (Debian's
// libjs-chart.js, served by the daemon at /vendor/chart.js).  Every chart
// here has a table beside it holding the same numbers, so a page without
// Chart.js loses nothing but the picture.
//
// Chart.js is the one global the page's modules use: Debian installs it as
// a classic (UMD) script, so index.html loads it with a plain <script>
// before the modules and it sets window.Chart; this file reads it only as
// window.Chart.  Without it (libjs-chart.js not installed) available() is
// false and the views show their tables alone.
// Okabe-Ito: distinguishable under the common colour blindnesses.  Series
// also differ by point shape and dash, so colour is never the only cue.
const OKABE_ITO = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"];
const SHAPES = ["circle", "rect", "triangle", "rectRot", "crossRot", "star", "rectRounded", "cross"];
const DASHES = [[], [6, 3], [2, 3], [10, 3, 2, 3], [1, 2], [12, 4], [4, 4], [8, 2]];
// The marker of each shape as a character, for the tables' swatches.
const GLYPHS = { circle: "●", rect: "■", triangle: "▲", rectRot: "◆", crossRot: "✕", star: "★", rectRounded: "▪", cross: "✚" };

// Series i's colour, marker and dash.  Colour and marker step together
// and the marker moves one further every 8 series, so no two of the first
// 64 series share both (issue 26: 13 cards on one compare chart, two with
// one look); the dash differs too.  The compare chart and its tables
// both take it from here, so a table's swatch is its series' look.
export function seriesStyle(i) {
  const c = i % OKABE_ITO.length;
  const round = Math.floor(i / OKABE_ITO.length);
  const shape = SHAPES[(c + round) % SHAPES.length];
  return { colour: OKABE_ITO[c], colourIndex: c, shape, glyph: GLYPHS[shape], dash: DASHES[(c + round * 3) % DASHES.length] };
}

// "#0072B2" at alpha a, as rgba(): a dimmed series keeps its hue.
function withAlpha(hex, a) {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${a})`;
}
const INK = "#1d2731";
const GRID = "#e3e7eb";

const live = new Set();

export function available() {
  return typeof window.Chart === "function";
}

// Marks the chart's <figure> once Chart.js has really painted it, so a
// test (or a person reading the DOM) can tell a drawn chart from a blank one.
const drawnFlag = {
  id: "gbDrawn",
  afterRender(chart) {
    const fig = chart.canvas.closest("figure");
    if (fig) fig.dataset.chart = "drawn";
  },
};

// A dashed reference line at one value of the value axis, with its label:
// the copy ceiling of a transpose.
const refLine = {
  id: "gbRefLine",
  afterDatasetsDraw(chart, _args, opts) {
    if (!opts || typeof opts.value !== "number") return;
    const scale = chart.scales[opts.axis || "x"];
    const area = chart.chartArea;
    const pos = scale.getPixelForValue(opts.value);
    const ctx = chart.ctx;
    ctx.save();
    ctx.strokeStyle = INK;
    ctx.setLineDash([6, 4]);
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    if (scale.isHorizontal()) {
      ctx.moveTo(pos, area.top);
      ctx.lineTo(pos, area.bottom);
    } else {
      ctx.moveTo(area.left, pos);
      ctx.lineTo(area.right, pos);
    }
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillStyle = INK;
    ctx.font = "600 12px " + window.Chart.defaults.font.family;
    if (scale.isHorizontal()) {
      ctx.textAlign = pos > area.left + (area.right - area.left) * 0.6 ? "right" : "left";
      ctx.textBaseline = "bottom";
      ctx.fillText(opts.label || "", pos + (ctx.textAlign === "right" ? -4 : 4), area.top - 2);
    } else {
      ctx.textAlign = "right";
      ctx.textBaseline = "bottom";
      ctx.fillText(opts.label || "", area.right, pos - 3);
    }
    ctx.restore();
  },
};

// Text at the end of each bar of the first dataset (e.g. "87 % of ceiling").
const barLabels = {
  id: "gbBarLabels",
  afterDatasetsDraw(chart, _args, opts) {
    if (!opts || !opts.labels) return;
    const meta = chart.getDatasetMeta(0);
    const ctx = chart.ctx;
    ctx.save();
    ctx.font = "600 12px " + window.Chart.defaults.font.family;
    ctx.textBaseline = "middle";
    meta.data.forEach((bar, i) => {
      const text = opts.labels[i];
      if (!text) return;
      // Inside the end of a long bar (white on blue), else just past it,
      // so the label never sits on the ceiling line.
      const w = ctx.measureText(text).width;
      const inside = bar.x - bar.base > w + 16;
      ctx.fillStyle = inside ? "#ffffff" : INK;
      ctx.textAlign = inside ? "right" : "left";
      ctx.fillText(text, inside ? bar.x - 8 : bar.x + 6, bar.y);
    });
    ctx.restore();
  },
};

function setDefaults() {
  if (!available() || setDefaults.done) return;
  setDefaults.done = true;
  const css = getComputedStyle(document.body);
  window.Chart.defaults.font.family = css.fontFamily;
  window.Chart.defaults.font.size = 13;
  window.Chart.defaults.color = INK;
  window.Chart.defaults.borderColor = GRID;
  // No animation: honest for reduced-motion users, and the first paint
  // is the final picture (the screenshot test relies on that).
  window.Chart.defaults.animation = false;
  window.Chart.defaults.maintainAspectRatio = false;
  window.Chart.defaults.plugins.legend.labels.usePointStyle = true;
  window.Chart.defaults.plugins.legend.labels.boxWidth = 9;
  window.Chart.defaults.plugins.legend.labels.boxHeight = 9;
}

function make(canvas, config) {
  setDefaults();
  config.plugins = [drawnFlag, refLine, barLabels].concat(config.plugins || []);
  const chart = new window.Chart(canvas, config);
  live.add(chart);
  return chart;
}

export function destroyAll() {
  for (const c of live) c.destroy();
  live.clear();
}

// A log2 value axis: ticks at powers of two, as conflict degrees are.
function log2Axis(title, values) {
  const finite = values.filter((v) => typeof v === "number" && v > 0);
  const lo = Math.min(1, ...finite);
  const hi = Math.max(2, ...finite);
  const minExp = Math.floor(Math.log2(lo));
  const maxExp = Math.ceil(Math.log2(hi));
  return {
    type: "logarithmic",
    min: 2 ** minExp / 1.25,
    max: 2 ** maxExp * 1.25,
    title: { display: true, text: title },
    afterBuildTicks(axis) {
      const ticks = [];
      for (let e = minExp; e <= maxExp; e++) ticks.push({ value: 2 ** e });
      axis.ticks = ticks;
    },
    ticks: { callback: (v) => String(v) },
  };
}

function fmt(v, digits) {
  return typeof v === "number" ? Number(v.toPrecision(digits || 3)).toLocaleString("en-US") : "–";
}

// smem_stride: a measured ratio against stride with the predicted
// conflict degree as a second series, both on one log2 axis, so that
// "measured follows predicted" reads as dots inside triangles.  Points
// only (showLine false): strides are not a continuum, and a line from
// stride 31 to 32 zig-zags between unrelated conflict degrees.
// field is the row's ratio charted ("ratio_cycles" or "ratio", the time
// ratio), what says in words what it divides.
// pred (optional) replaces the predicted series: {label, values, tip},
// e.g. gmem_stride's predicted sectors over the stride-1 sectors.
export function stride(canvas, rows, field, what, pred) {
  field = field || "ratio";
  what = what || "time ÷ stride-1 time";
  const keys = rows.map((r) => String(r.stride));
  const ratios = rows.map((r) => (typeof r[field] === "number" ? r[field] : null));
  const degrees = pred ? pred.values : rows.map((r) => (typeof r.predicted_degree === "number" ? r.predicted_degree : null));
  return make(canvas, {
    type: "line",
    data: {
      labels: keys,
      datasets: [
        {
          label: "measured: " + what + " (median)",
          data: ratios,
          borderColor: OKABE_ITO[0],
          backgroundColor: OKABE_ITO[0],
          pointStyle: "circle",
          pointRadius: 4,
          pointHoverRadius: 6,
          showLine: false,
          order: 0,
        },
        {
          label: pred ? pred.label : "predicted conflict degree, gcd(stride, 32)",
          data: degrees,
          borderColor: OKABE_ITO[1],
          // Hollow and larger, drawn under the measured line: where the
          // two agree, the triangle rings the measured dot.
          backgroundColor: "rgba(255,255,255,0)",
          pointStyle: "triangle",
          pointRadius: 8,
          pointHoverRadius: 9,
          pointBorderWidth: 2,
          showLine: false,
          order: 1,
        },
      ],
    },
    options: {
      interaction: { mode: "index", intersect: false },
      scales: {
        x: { title: { display: true, text: "stride (32-bit words between lanes)" } },
        y: log2Axis("ratio to stride 1 (×, log₂ scale)", ratios.concat(degrees)),
      },
      plugins: {
        tooltip: {
          callbacks: {
            title: (items) => "stride " + items[0].label,
            label: (item) => {
              const r = rows[item.dataIndex];
              if (item.datasetIndex === 1) return pred ? pred.tip(r) : "predicted degree " + fmt(r.predicted_degree);
              return "measured " + fmt(r[field]) + "× (median " + fmt(r.median_ms, 4) + " ms)";
            },
          },
        },
      },
    },
  });
}

// transpose: GB/s per variant as horizontal bars, the copy ceiling as a
// dashed line, and each bar's share of that ceiling written beside it.
export function transpose(canvas, rows, ceilingGbps, ceilingSource) {
  const keys = rows.map((r) => r.variant);
  const shares = rows.map((r) =>
    typeof r.share_of_ceiling === "number" ? fmt(r.share_of_ceiling * 100, 3) + " % of ceiling" : "");
  const max = Math.max(ceilingGbps || 0, ...rows.map((r) => r.gbps || 0));
  return make(canvas, {
    type: "bar",
    data: {
      labels: keys,
      datasets: [{
        label: "GB/s (bytes read + written ÷ median time)",
        data: rows.map((r) => r.gbps),
        backgroundColor: rows.map((r) => (r.verified === false ? OKABE_ITO[1] : OKABE_ITO[0])),
        borderColor: INK,
        borderWidth: 0,
        barPercentage: 0.7,
      }],
    },
    options: {
      indexAxis: "y",
      layout: { padding: { right: 16, top: 18 } },
      scales: {
        x: { beginAtZero: true, suggestedMax: max * 1.04, title: { display: true, text: "GB/s (10⁹ bytes per second, read + written)" } },
        y: { title: { display: true, text: "variant" } },
      },
      plugins: {
        legend: { display: false },
        gbRefLine: ceilingGbps ? {
          axis: "x", value: ceilingGbps,
          label: "copy ceiling " + fmt(ceilingGbps, 4) + " GB/s" + (ceilingSource ? " (" + ceilingSource + ")" : ""),
        } : {},
        gbBarLabels: { labels: shares },
        tooltip: {
          callbacks: {
            label: (item) => {
              const r = rows[item.dataIndex];
              return fmt(r.gbps, 4) + " GB/s, " + shares[item.dataIndex] + ", median " + fmt(r.median_ms, 4) + " ms";
            },
          },
        },
      },
    },
  });
}

// Measured against its peak (issue 16: rows with value, unit, peak): a
// horizontal bar per row, the row's peak drawn as a hollow dashed bar
// behind it (so the gap to the peak is the empty part), and each bar's
// share of its peak written beside it.  Only rows of one unit share a
// chart; the caller picks them.
export function peaks(canvas, rows, unit) {
  const shares = rows.map((r) =>
    typeof r.share_of_peak === "number" ? fmt(r.share_of_peak * 100, 3) + " % of peak" : "no peak");
  const max = Math.max(...rows.map((r) => Math.max(r.value || 0, r.peak || 0)));
  return make(canvas, {
    type: "bar",
    data: {
      labels: rows.map((r) => r.label),
      datasets: [
        {
          label: "measured (" + unit + ")",
          data: rows.map((r) => r.value),
          backgroundColor: OKABE_ITO[0],
          barPercentage: 0.55,
          grouped: false,
          order: 0,
        },
        {
          label: "peak (" + unit + "), dashed outline",
          data: rows.map((r) => (typeof r.peak === "number" ? r.peak : null)),
          backgroundColor: "rgba(255,255,255,0)",
          borderColor: INK,
          borderWidth: 2,
          borderDash: [5, 3],
          barPercentage: 0.8,
          grouped: false,
          order: 1,
        },
      ],
    },
    options: {
      indexAxis: "y",
      layout: { padding: { right: 16 } },
      scales: {
        x: { beginAtZero: true, suggestedMax: max * 1.1, title: { display: true, text: unit } },
        y: { title: { display: true, text: "row" } },
      },
      plugins: {
        gbBarLabels: { labels: shares },
        tooltip: {
          callbacks: {
            label: (item) => {
              const r = rows[item.dataIndex];
              if (item.datasetIndex === 1) return "peak " + fmt(r.peak, 4) + " " + unit + " (" + (r.peak_source || "source not given") + ")";
              return "measured " + fmt(r.value, 4) + " " + unit + ", " + shares[item.dataIndex];
            },
          },
        },
      },
    },
  });
}

// Anything else with rows keyed by a name: grouped bars of the given
// fields (e.g. measured ratio and predicted degree of an access pattern,
// or median time where no rate was reported).
export function bars(canvas, keys, series, axisTitle) {
  return make(canvas, {
    type: "bar",
    data: {
      labels: keys,
      datasets: series.map((s, i) => ({
        label: s.label,
        data: s.data,
        backgroundColor: OKABE_ITO[i % OKABE_ITO.length],
        barPercentage: 0.8,
      })),
    },
    options: {
      scales: {
        y: { beginAtZero: true, title: { display: true, text: axisTitle } },
      },
      plugins: { legend: { display: series.length > 1 } },
    },
  });
}

// Compare: one series per card.  Numeric keys (strides) are lines on a
// log2 axis when the metric is a ratio; named keys (variants) are bars.
// Each series has its own colour and marker (seriesStyle).  With many
// series the lines lie on each other, so one is highlighted and the rest
// dimmed: the one under the pointer (on the chart or its legend entry),
// or the one whose legend entry was clicked (a second click lets go).
// style(i) gives series i's look (default seriesStyle(i)), so a caller
// that leaves series out keeps each card's look stable.
export function compare(canvas, keys, series, metric, axisTitle, predicted, style) {
  const numericKeys = keys.every((k) => typeof k === "number");
  const look = series.map((_s, i) => (style ? style(i) : seriesStyle(i)));
  const datasets = series.map((s, i) => ({
    label: s.label,
    data: s.values,
    borderColor: look[i].colour,
    backgroundColor: look[i].colour,
    pointStyle: look[i].shape,
    borderDash: numericKeys ? look[i].dash : undefined,
    pointRadius: 5,
    borderWidth: 2,
    spanGaps: true, // a card whose run skipped a stride still draws one line
  }));
  if (predicted) {
    datasets.push({
      label: "predicted conflict degree",
      data: predicted,
      borderColor: "#6b7280",
      backgroundColor: "#6b7280",
      borderDash: [2, 3],
      pointStyle: "line",
      pointRadius: 0,
      borderWidth: 2,
      spanGaps: true,
      type: "line",
    });
  }
  const n = series.length;
  let pinned = null, hovered = null;
  // Restyles the series for the one highlighted (null: all as drawn).
  const highlight = (chart) => {
    const on = hovered !== null ? hovered : pinned;
    chart.data.datasets.forEach((d, i) => {
      if (i >= n) return;
      const dim = on !== null && i !== on;
      const c = dim ? withAlpha(look[i].colour, 0.15) : look[i].colour;
      d.borderColor = c;
      d.backgroundColor = c;
      d.borderWidth = i === on ? 3.5 : 2;
      d.pointRadius = i === on ? 7 : 5;
      d.order = i === on ? -1 : 0; // drawn last: on top of the others
    });
    chart.update("none");
  };
  const setHovered = (chart, i) => {
    const v = i !== null && i < n ? i : null;
    if (v !== hovered) { hovered = v; highlight(chart); }
  };
  const all = [].concat(...series.map((s) => s.values), predicted || []);
  const y = metric === "ratio"
    ? log2Axis(axisTitle, all)
    : { beginAtZero: true, title: { display: true, text: axisTitle } };
  const many = n > OKABE_ITO.length;
  return make(canvas, {
    type: numericKeys ? "line" : "bar",
    data: { labels: keys.map(String), datasets },
    options: {
      // With many series one tooltip line per series is a wall of text:
      // the nearest point's series alone.
      interaction: many ? { mode: "nearest", intersect: false } : { mode: "index", intersect: false },
      onHover: (_e, active, chart) => setHovered(chart, many && active.length ? active[0].datasetIndex : null),
      scales: { x: { title: { display: true, text: numericKeys ? "stride (32-bit words)" : "variant" } }, y },
      plugins: {
        legend: {
          onHover: (_e, item, legend) => setHovered(legend.chart, item.datasetIndex),
          onLeave: (_e, _item, legend) => setHovered(legend.chart, null),
          onClick: (_e, item, legend) => {
            if (item.datasetIndex >= n) return;
            pinned = pinned === item.datasetIndex ? null : item.datasetIndex;
            highlight(legend.chart);
          },
        },
      },
    },
  });
}

// Verdicts: each row's shift from the baseline (%), its 95% interval as a
// floating bar, a zero line and the ±margin band.  The verdict's shape
// (not only colour) tells the rows apart: see VERDICT_SHAPES.
const VERDICT_SHAPES = { same: "circle", faster: "triangle", slower: "rectRot", inconclusive: "crossRot" };
export function shift(canvas, keys, rows, margin, keyName) {
  const pctOf = (v) => (typeof v === "number" ? v * 100 : null);
  const flat = (v) => keys.map(() => v);
  return make(canvas, {
    type: "bar",
    data: {
      labels: keys.map(String),
      datasets: [
        { label: "95% interval", data: rows.map((r) => (r && typeof r.ci_low === "number" ? [pctOf(r.ci_low), pctOf(r.ci_high)] : null)),
          backgroundColor: "rgba(0, 114, 178, 0.35)", borderColor: OKABE_ITO[1], borderWidth: 1, barPercentage: 0.4 },
        { type: "line", label: "shift (Hodges-Lehmann)", data: rows.map((r) => (r ? pctOf(r.shift) : null)), showLine: false,
          pointStyle: rows.map((r) => VERDICT_SHAPES[r && r.verdict] || "circle"), pointRadius: 7,
          borderColor: "#000", backgroundColor: OKABE_ITO[5] },
        { type: "line", label: "+margin", data: flat(margin * 100), borderColor: "#6b7280", borderDash: [4, 4], pointRadius: 0, borderWidth: 1 },
        { type: "line", label: "−margin (band: same)", data: flat(-margin * 100), borderColor: "#6b7280", borderDash: [4, 4], pointRadius: 0, borderWidth: 1,
          fill: "-1", backgroundColor: "rgba(107, 114, 128, 0.12)" },
        { type: "line", label: "no change", data: flat(0), borderColor: "#111", pointRadius: 0, borderWidth: 1 },
      ],
    },
    options: {
      scales: {
        x: { title: { display: true, text: keyName || "row" } },
        y: { title: { display: true, text: "candidate vs baseline (%; + is slower)" } },
      },
    },
  });
}

// The fleet: each card's robust z per row, rows side by side on a
// numeric axis (a little spread so that cards do not hide each other),
// the ±threshold dashed.  Cards within the fleet are one grey series of
// circles; each outlier card its own labelled series of triangles.
export function fleet(canvas, keys, cards, threshold) {
  const spread = (i, n) => (n > 1 ? (i / (n - 1) - 0.5) * 0.5 : 0);
  const points = (c, i, n) => c.z.map((z, k) => (typeof z === "number" ? { x: k + spread(i, n), y: z } : null)).filter(Boolean);
  const within = cards.filter((c) => !c.outlier);
  const datasets = [{ label: "cards within the fleet", data: [].concat(...within.map((c, i) => points(c, i, within.length))),
    backgroundColor: "rgba(107, 114, 128, 0.55)", borderColor: "#6b7280", pointStyle: "circle", pointRadius: 4 }];
  cards.filter((c) => c.outlier).forEach((c, i) => datasets.push({ label: "outlier " + c.label, data: points(c, 0, 1),
    backgroundColor: OKABE_ITO[(i + 1) % OKABE_ITO.length], borderColor: "#000", pointStyle: "triangle", pointRadius: 8 }));
  const edge = [{ x: -0.5 }, { x: keys.length - 0.5 }];
  for (const t of [threshold, -threshold]) {
    datasets.push({ type: "line", label: t > 0 ? "±" + threshold + " (outlier past it)" : "", data: edge.map((p) => ({ x: p.x, y: t })),
      borderColor: "#6b7280", borderDash: [4, 4], pointRadius: 0, borderWidth: 1 });
  }
  return make(canvas, {
    type: "scatter",
    data: { datasets },
    options: {
      scales: {
        x: { type: "linear", min: -0.5, max: keys.length - 0.5, title: { display: true, text: "row" },
          afterBuildTicks(axis) { axis.ticks = keys.map((_k, i) => ({ value: i })); },
          ticks: { callback: (v) => (Number.isInteger(v) && v >= 0 && v < keys.length ? String(keys[v]) : "") } },
        y: { title: { display: true, text: "robust z (+ is slower)" } },
      },
      plugins: { legend: { labels: { filter: (item) => item.text !== "" } } },
    },
  });
}

// A card's history: each row's median per run as a share off the
// history's median (%), one line per row (colour, shape and dash differ),
// the last point this run, and the ±margin band (same) dashed.
export function history(canvas, labels, series, margin) {
  const flat = (v) => labels.map(() => v);
  // the same picker as compare's: no two of the first 64 lines look alike
  const datasets = series.map((s, i) => {
    const st = seriesStyle(i);
    return {
      label: s.label, data: s.values.map((v) => (typeof v === "number" ? v * 100 : null)),
      borderColor: st.colour, backgroundColor: st.colour,
      pointStyle: st.shape, borderDash: st.dash, pointRadius: 5, borderWidth: 2, spanGaps: true,
    };
  });
  datasets.push({ label: "+margin", data: flat(margin * 100), borderColor: "#6b7280", borderDash: [4, 4], pointRadius: 0, borderWidth: 1 },
    { label: "−margin (band: same)", data: flat(-margin * 100), borderColor: "#6b7280", borderDash: [4, 4], pointRadius: 0, borderWidth: 1,
      fill: "-1", backgroundColor: "rgba(107, 114, 128, 0.12)" });
  return make(canvas, {
    type: "line",
    data: { labels, datasets },
    options: {
      interaction: { mode: "index", intersect: false },
      scales: {
        x: { title: { display: true, text: "run, oldest first (last: this run)" } },
        y: { title: { display: true, text: "off the history's median (%; + is slower)" } },
      },
    },
  });
}

// soak (issue 32): the run's one-second series against time, as two
// panels of two axes each, so no number shares an axis with another unit:
// which says "rate" draws the loads' rates (GEMM TFLOP/s left, HBM GB/s
// right), "card" the SM clock (MHz, left) with the temperature (°C) and
// board power (W) on the right.  A second with a thermal or hardware
// slowdown is a filled triangle on every line; the temperature panel
// draws NVML's slowdown threshold dashed.
export function soak(canvas, series, which, slowdownC) {
  const t = series.map((s) => s.t);
  const slowed = series.map((s) => (s.throttle_reasons || []).some((r) => r !== "sw_power_cap" && r !== "gpu_idle"));
  const line = (label, field, i, axis) => {
    const st = seriesStyle(i);
    return {
      label, yAxisID: axis, data: series.map((s) => (typeof s[field] === "number" ? s[field] : null)),
      borderColor: st.colour, backgroundColor: st.colour, borderDash: st.dash, borderWidth: 2, spanGaps: false,
      pointStyle: slowed.map((x) => (x ? "triangle" : st.shape)), pointRadius: slowed.map((x) => (x ? 4 : 0)),
    };
  };
  const datasets = which === "rate"
    ? [line("GEMM (TFLOP/s)", "gemm_tflops", 0, "y"), line("HBM (GB/s)", "hbm_gbps", 1, "y1")]
    : [line("SM clock (MHz)", "sm_clock_mhz", 2, "y"), line("temperature (°C)", "temperature_c", 3, "y1"), line("power (W)", "power_w", 4, "y1")];
  if (which !== "rate" && typeof slowdownC === "number") {
    datasets.push({ label: "NVML slowdown threshold (°C)", yAxisID: "y1", data: t.map(() => slowdownC), borderColor: "#6b7280", borderDash: [4, 4], pointRadius: 0, borderWidth: 1 });
  }
  const axis = (text, position) => ({ position, title: { display: true, text }, grid: { drawOnChartArea: position === "left" } });
  return make(canvas, {
    type: "line",
    data: { labels: t, datasets: datasets.filter((d) => d.data.some((v) => v !== null)) },
    options: {
      interaction: { mode: "index", intersect: false },
      scales: {
        x: { title: { display: true, text: "time (s)" }, ticks: { maxTicksLimit: 13 } },
        y: which === "rate" ? axis("GEMM (TFLOP/s)", "left") : axis("SM clock (MHz)", "left"),
        y1: which === "rate" ? axis("HBM (GB/s)", "right") : axis("°C / W", "right"),
      },
      plugins: {
        tooltip: { callbacks: { footer: (items) => (items.length && slowed[items[0].dataIndex] ? "slowdown: " + series[items[0].dataIndex].throttle_reasons.join(", ") : "") } },
      },
    },
  });
}
