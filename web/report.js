// vouch report: draws the charts described in #vouch-data with uPlot (inlined before this
// script). Every chart records what it drew on its element (data-points) and, when all are
// drawn, the page sets body[data-drawn] and window.__vouch (charts, points, draw_ms), which
// the headless-Chromium test reads.
(function () {
  "use strict";
  var t0 = performance.now();
  var state = { charts: 0, drawn: 0, points: 0, draw_ms: null, errors: [] };
  window.__vouch = state;
  var data = JSON.parse(document.getElementById("vouch-data").textContent);
  var charts = data.charts || [];
  state.charts = charts.length;

  function finished() {
    state.draw_ms = performance.now() - t0;
    document.body.setAttribute("data-drawn", String(state.drawn));
  }

  // Shaded x ranges, vertical lines (steps), horizontal lines and bands (band, interval).
  function drawMarks(u, c) {
    var m = c.marks || {};
    var ctx = u.ctx, top = u.bbox.top, h = u.bbox.height, left = u.bbox.left, w = u.bbox.width;
    var yscale = c.series.length ? c.series[0].scale || "y" : "y";
    ctx.save();
    (m.regions || []).forEach(function (r) {
      var a = u.valToPos(r[0], "x", true), b = u.valToPos(r[1], "x", true);
      ctx.fillStyle = r[2];
      ctx.fillRect(Math.min(a, b), top, Math.abs(b - a), h);
    });
    (m.hbands || []).forEach(function (r) {
      var a = u.valToPos(r[0], yscale, true), b = u.valToPos(r[1], yscale, true);
      ctx.fillStyle = r[2];
      ctx.fillRect(left, Math.min(a, b), w, Math.abs(b - a));
    });
    ctx.lineWidth = 1.5;
    (m.hlines || []).forEach(function (l) {
      var y = u.valToPos(l.y, yscale, true);
      ctx.strokeStyle = l.dash ? "#555" : "#888";
      ctx.setLineDash(l.dash ? [6, 4] : []);
      ctx.beginPath();
      ctx.moveTo(left, y);
      ctx.lineTo(left + w, y);
      ctx.stroke();
      if (l.label) {
        ctx.fillStyle = "#333";
        ctx.fillText(l.label, left + 4, y - 3);
      }
    });
    ctx.setLineDash([]);
    (m.vlines || []).forEach(function (l) {
      var x = u.valToPos(l.x, "x", true);
      ctx.strokeStyle = "#d62728";
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.moveTo(x, top);
      ctx.lineTo(x, top + h);
      ctx.stroke();
      ctx.fillStyle = "#d62728";
      ctx.fillText(l.label || "", x + 4, top + 12);
    });
    ctx.restore();
  }

  function countDrawn(u, el) {
    if (el.getAttribute("data-points") !== null) return;
    var n = 0;
    for (var i = 1; i < u.data.length; i++)
      for (var k = 0; k < u.data[i].length; k++) {
        var v = u.data[i][k];
        if (v !== null && v !== undefined && isFinite(v)) n++;
      }
    el.setAttribute("data-points", String(n));
    state.drawn++;
    state.points += n;
    if (state.drawn === charts.length) finished();
  }

  function make(c) {
    var el = document.getElementById(c.id);
    var small = c.kind === "leg";
    var width = small ? 440 : Math.max(600, Math.min(1100, (el.parentNode.clientWidth || 900) - 20));
    var scales = { x: { time: false } };
    var axes = [{ label: c.xlabel || "" }];
    var seen = {};
    var series = [{ label: c.xlabel || "x" }];
    c.series.forEach(function (s, i) {
      var scale = s.scale || "y";
      if (!seen[scale]) {
        seen[scale] = true;
        scales[scale] = {};
        axes.push({
          scale: scale,
          label: Object.keys(seen).length === 1 && c.ylabel ? c.ylabel : s.label,
          side: Object.keys(seen).length > 1 ? 1 : 3,
          grid: { show: Object.keys(seen).length === 1 },
        });
      }
      var opt = { label: s.label, stroke: s.color, scale: scale, width: 1.5, spanGaps: false };
      if (s.bars) {
        opt.fill = s.color;
        opt.paths = uPlot.paths.bars({ size: [0.6, 60] });
      } else if (s.points && !s.line) {
        opt.paths = function () { return null; };
        opt.points = { show: true, size: 7, fill: s.hollow ? "#fff" : s.color };
      } else if (s.points) {
        // Filled unless the series says hollow (the trend's unattributed points).
        opt.points = { show: true, size: 6, fill: s.hollow ? "#fff" : s.color };
      }
      series.push(opt);
    });
    // Fixed ranges per scale (a leg's SM clock: its samples and the max clock, not 0..4000).
    Object.keys(c.ranges || {}).forEach(function (scale) {
      var r = c.ranges[scale];
      if (scales[scale]) scales[scale] = { range: function () { return [r[0], r[1]]; } };
    });
    // What each series drew its points with, for the browser test.
    el.setAttribute("data-fills", c.series.map(function (s) {
      return s.points ? (s.hollow ? "hollow" : "filled") : "none";
    }).join(","));
    if (c.ypad) {
      var pad = c.ypad;
      scales[c.series[0].scale || "y"] = {
        range: function (u, lo, hi) {
          return [Math.min(lo, -pad) - 0.2 * pad, Math.max(hi, pad) + 0.2 * pad];
        },
      };
    }
    if (c.xint) axes[0].incrs = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000];
    if (c.xlabels) {
      var labels = c.xlabels;
      axes[0].values = function (u, splits) {
        return splits.map(function (v) {
          var i = Math.round(v);
          return Math.abs(v - i) < 1e-9 && labels[i] !== undefined ? labels[i] : "";
        });
      };
      axes[0].rotate = -30;
      axes[0].size = 60;
      scales.x.range = function () { return [-0.5, labels.length - 0.5]; };
    }
    var opts = {
      title: c.title,
      width: width,
      height: small ? 170 : 280,
      scales: scales,
      axes: axes,
      series: series,
      legend: { show: !small },
      hooks: {
        draw: [
          function (u) {
            drawMarks(u, c);
            // The y range each scale was drawn with, for the browser test ("mhz:1890..2000").
            el.setAttribute("data-yranges", Object.keys(u.scales).filter(function (k) {
              return k !== "x";
            }).map(function (k) {
              return k + ":" + Math.round(u.scales[k].min) + ".." + Math.round(u.scales[k].max);
            }).join(","));
            countDrawn(u, el);
          },
        ],
      },
    };
    if (c.verdict) el.setAttribute("data-verdict", c.verdict);
    var cols = [c.x].concat(c.series.map(function (s) { return s.values; }));
    new uPlot(opts, cols, el);
  }

  window.addEventListener("error", function (e) { state.errors.push(String(e.message)); });
  charts.forEach(function (c) {
    try {
      make(c);
    } catch (e) {
      state.errors.push(c.id + ": " + e);
      console.error("vouch report: chart " + c.id + ": " + e);
    }
  });
  if (charts.length === 0) finished();
})();
