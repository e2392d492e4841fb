/* dse report's page script (built into dse: src/report.c). It draws what the JSON block holds and
 * computes no model number: the Pareto scatter over the thinned cloud, its legend and tooltips, a front
 * point's operator table and roofline. Text from the data goes in through textContent only. */
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("dse-data").textContent);
  var NS = "http://www.w3.org/2000/svg";
  var A = D.axes.length, M = D.obj.length;
  var PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
                 "#bcbd22", "#7f7f7f"];
  var state = { x: 0, y: M > 1 ? 1 : 0, color: D.color, sel: null };
  var bdOf = {};
  D.bd.forEach(function (b) { bdOf[b.point] = b; });

  function el(tag, attrs, parent, text) {
    var e = document.createElementNS(NS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function hel(tag, parent, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    if (parent) parent.appendChild(e);
    return e;
  }
  function fmt(v) {
    if (v === null || v === undefined || !isFinite(v)) return "n/a";
    var a = Math.abs(v);
    if (a !== 0 && (a >= 1e6 || a < 1e-3)) return v.toExponential(3);
    return String(+v.toPrecision(5));
  }
  function tick(v) { /* 1e+12 rather than 1.000e+12 on an axis */
    var a = Math.abs(v);
    return a !== 0 && (a >= 1e6 || a < 1e-3) ? v.toExponential(Math.abs(+v.toExponential(0) - v) > 1e-9 * a ? 1 : 0) : fmt(v);
  }
  function fixed(v, d) { return v === null || !isFinite(v) ? "n/a" : v.toFixed(d); }
  function code(p, a) { return p[1 + a]; }
  function val(p, k) { return p[1 + A + k]; }
  function elo(p) { return p[1 + A + M]; }
  function ehi(p) { return p[2 + A + M]; }
  function unitOf(o) { return o.unit && o.unit !== "1" ? o.unit : ""; }
  function label(o) {
    var u = unitOf(o), b = o.max ? "higher is better" : "lower is better";
    return o.name + " (" + (u ? u + ", " : "") + b + ")";
  }
  function errText(lo, hi) {
    if (lo === null || hi === null || lo === undefined) return "no error bars for this point";
    return "error bars of the time: " + (lo >= 0 ? "+" : "") + lo.toFixed(0) + " % to " + (hi >= 0 ? "+" : "") +
      hi.toFixed(0) + " % (10th-90th percentile of held-out published cases)";
  }

  /* ---- scales and ticks ---- */
  function scale(lo, hi, log, a, b) {
    var f = log ? Math.log10 : function (v) { return v; };
    var l = f(lo), h = f(hi);
    if (!(h > l)) { var pad = l !== 0 ? Math.abs(l) * 0.05 : 1; l -= pad; h += pad; }
    var span = h - l; l -= span * 0.04; h += span * 0.04;
    var s = function (v) { return a + (f(v) - l) / (h - l) * (b - a); };
    s.ticks = function () {
      var t = [], v;
      if (log) {
        var d0 = Math.floor(l), d1 = Math.ceil(h), few = d1 - d0 <= 3;
        for (var d = d0; d <= d1; d++)
          [1, 2, 5].forEach(function (m) {
            v = m * Math.pow(10, d);
            if ((m === 1 || few) && Math.log10(v) >= l && Math.log10(v) <= h) t.push(v);
          });
        return t;
      }
      var step = Math.pow(10, Math.floor(Math.log10((h - l) / 5)));
      if ((h - l) / step > 20) step *= 5; else if ((h - l) / step > 10) step *= 2;
      for (v = Math.ceil(l / step) * step; v <= h; v += step) t.push(Math.abs(v) < step * 1e-9 ? 0 : v);
      return t;
    };
    return s;
  }
  function axes(svg, sx, sy, W, H, m, xl, yl) {
    el("rect", { x: m.l, y: m.t, width: W - m.l - m.r, height: H - m.t - m.b, fill: "none", stroke: "#999" }, svg);
    sx.ticks().forEach(function (v) {
      var x = sx(v);
      el("line", { x1: x, x2: x, y1: m.t, y2: H - m.b, stroke: "#eee" }, svg);
      el("text", { x: x, y: H - m.b + 14, "text-anchor": "middle" }, svg, tick(v));
    });
    sy.ticks().forEach(function (v) {
      var y = sy(v);
      el("line", { x1: m.l, x2: W - m.r, y1: y, y2: y, stroke: "#eee" }, svg);
      el("text", { x: m.l - 4, y: y + 4, "text-anchor": "end" }, svg, tick(v));
    });
    el("text", { x: (m.l + W - m.r) / 2, y: H - 6, "text-anchor": "middle" }, svg, xl);
    el("text", { x: 14, y: (m.t + H - m.b) / 2, "text-anchor": "middle",
                 transform: "rotate(-90 14 " + (m.t + H - m.b) / 2 + ")" }, svg, yl);
  }

  /* ---- colour classes: the axis's values, the tenth and beyond as "other" ---- */
  function classOf(p) {
    if (state.color < 0) return 0;
    var c = code(p, state.color);
    return c < PALETTE.length - 1 ? c : PALETTE.length - 1;
  }
  function legend() {
    var L = document.getElementById("legend");
    L.textContent = "";
    if (state.color < 0) { hel("span", L, "one colour (no colour axis)"); return; }
    var ax = D.axes[state.color];
    hel("b", L, ax.name + ":");
    ax.values.forEach(function (v, i) {
      if (i > PALETTE.length - 1) return;
      var s = hel("span", L, "", "sw");
      s.style.background = PALETTE[i];
      hel("span", L, i === PALETTE.length - 1 && ax.values.length > PALETTE.length ? "other" : v, "legend-item");
    });
  }

  /* ---- the scatter ---- */
  function scatter() {
    var svg = document.getElementById("scatter");
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var W = +svg.getAttribute("width"), H = +svg.getAttribute("height"), m = { l: 74, r: 16, t: 14, b: 40 };
    var ox = D.obj[state.x], oy = D.obj[state.y];
    if (ox.lo === null) { el("text", { x: 20, y: 40 }, svg, "no feasible point to plot"); return; }
    var sx = scale(ox.lo, ox.hi, ox.log, m.l, W - m.r), sy = scale(oy.lo, oy.hi, oy.log, H - m.b, m.t);
    axes(svg, sx, sy, W, H, m, label(ox) + (ox.log ? " [log]" : ""), label(oy) + (oy.log ? " [log]" : ""));
    var g = el("g", {}, svg);
    var draw = function (list, cls, r, op) {
      for (var i = 0; i < list.length; i++) {
        var p = list[i], x = val(p, state.x), y = val(p, state.y);
        if (x === null || y === null) continue;
        el("circle", { cx: sx(x).toFixed(1), cy: sy(y).toFixed(1), r: r, fill: PALETTE[classOf(p)],
                       "fill-opacity": op, "class": cls, "data-k": cls[0] + i,
                       stroke: cls === "front" ? "#222" : "none" }, g);
      }
    };
    draw(D.cloud, "cloud", 2.5, 0.3);
    draw(D.front, "front", 4.5, 0.95);
    mark();
  }
  function mark() {
    var svg = document.getElementById("scatter"), old = svg.querySelectorAll("circle.sel");
    for (var i = 0; i < old.length; i++) old[i].classList.remove("sel");
    D.front.forEach(function (p, i) {
      if (p[0] === state.sel) {
        var c = svg.querySelector('circle[data-k="f' + i + '"]');
        if (c) c.classList.add("sel");
      }
    });
  }
  function pointOf(k) { return k && k[0] === "f" ? D.front[+k.slice(1)] : k && k[0] === "c" ? D.cloud[+k.slice(1)] : null; }
  function tip(ev) {
    var T = document.getElementById("tip"), p = pointOf(ev.target.getAttribute && ev.target.getAttribute("data-k"));
    if (!p) { T.style.display = "none"; return; }
    T.textContent = "";
    hel("b", T, "point " + p[0] + (ev.target.getAttribute("data-k")[0] === "f" ? " (on the front)" : " (dominated)"));
    for (var a = 0; a < A; a++) hel("div", T, D.axes[a].name + ": " + D.axes[a].values[code(p, a)]);
    for (var k = 0; k < M; k++) hel("div", T, D.obj[k].name + ": " + fmt(val(p, k)) + " " + unitOf(D.obj[k]));
    hel("div", T, errText(elo(p), ehi(p)), "note");
    T.style.display = "block";
    T.style.left = (ev.pageX + 14) + "px";
    T.style.top = (ev.pageY + 10) + "px";
  }

  /* ---- the breakdown and its roofline ---- */
  function design(point) {
    var p = null;
    D.front.forEach(function (q) { if (q[0] === point) p = q; });
    if (!p) return "point " + point;
    var s = [];
    for (var a = 0; a < A; a++) s.push(D.axes[a].name + " " + D.axes[a].values[code(p, a)]);
    return "point " + point + ": " + s.join(", ");
  }
  function breakdown() {
    var B = document.getElementById("breakdown"), R = document.getElementById("roofline");
    B.textContent = "";
    while (R.firstChild) R.removeChild(R.firstChild);
    R.style.display = "none";
    if (D.bdNote) { hel("p", B, D.bdNote, "warn"); return; }
    if (state.sel === null) { hel("p", B, "no front point to break down"); return; }
    hel("p", B, design(state.sel), "design");
    var b = bdOf[state.sel];
    if (!b) {
      hel("p", B, "No breakdown embedded for this point: the report evaluates again the first " + D.bdLimit +
          " front points in dse sweep's front order; dse show " + D.db + " " + state.sel + " --run " + D.run +
          " evaluates any.", "warn");
      return;
    }
    hel("p", B, "latency " + fmt(b.latency_s * 1e3) + " ms (evaluated again); " + errText(b.elo, b.ehi) +
        (b.elo === null ? "" : ", for every time below"));
    if (b.note) hel("p", B, b.note, "note");
    if (!b.ops.length) { hel("p", B, "no per-operator rows for this point"); return; }
    var wrap = hel("div", B, undefined, "scroll"), t = hel("table", wrap), h = hel("tr", t);
    ["operator", "phase", "device", "count", "time_ms", "share", "bound", "GFLOP", "main_MB", "energy_mJ", "util"]
      .forEach(function (c) { hel("th", h, c); });
    b.ops.forEach(function (o) {
      var r = hel("tr", t, undefined, "op");
      [o[0], o[1], o[2]].forEach(function (c) { hel("td", r, c); });
      [fixed(o[4], 0), fixed(o[5] * 1e3, 4), fixed(100 * o[5] / b.latency_s, 1) + "%"].forEach(function (c) {
        hel("td", r, c, "n"); });
      hel("td", r, o[3]);
      [fixed(o[6] / 1e9, 3), fixed(o[7] / 1e6, 3), fixed(o[8] * 1e3, 4), fixed(100 * o[9], 0) + "%"]
        .forEach(function (c) { hel("td", r, c, "n"); });
    });
    roofline(b);
  }
  function roofline(b) {
    var R = document.getElementById("roofline"), W = +R.getAttribute("width"), H = +R.getAttribute("height");
    var m = { l: 74, r: 150, t: 14, b: 40 }, dots = [], xs = [], ys = [], skipped = 0, dev = b.devices || 1;
    b.ops.forEach(function (o) {
      if (o[6] > 0 && o[7] > 0 && o[5] > 0) {
        var d = { x: o[6] / o[7], y: o[6] / (o[5] * dev), o: o };
        dots.push(d); xs.push(d.x); ys.push(d.y);
      } else skipped++;
    });
    b.roofs.forEach(function (r) {
      if (r[2] > 0) ys.push(r[2]);
      if (r[2] > 0 && r[3] > 0) xs.push(r[2] / r[3]);
    });
    if (!dots.length || !xs.length) return;
    R.style.display = "";
    var xlo = Math.min.apply(null, xs) / 2, xhi = Math.max.apply(null, xs) * 2;
    var ylo = Math.min.apply(null, ys) / 2, yhi = Math.max.apply(null, ys) * 2;
    var sx = scale(xlo, xhi, true, m.l, W - m.r), sy = scale(ylo, yhi, true, H - m.b, m.t);
    axes(R, sx, sy, W, H, m, "arithmetic intensity (FLOP per main-memory byte) [log]",
         "achieved FLOP/s per device [log]");
    b.roofs.forEach(function (r, i) {
      if (!(r[2] > 0 && r[3] > 0)) return;
      var c = PALETTE[(i + 3) % PALETTE.length], ridge = r[2] / r[3];
      var pts = [[xlo, r[3] * xlo], [ridge, r[2]], [xhi, r[2]]].map(function (q) {
        return sx(Math.max(q[0], xlo)).toFixed(1) + "," + sy(Math.max(q[1], ylo)).toFixed(1); });
      el("polyline", { points: pts.join(" "), fill: "none", stroke: c, "stroke-width": 2, "class": "roof" }, R);
      el("text", { x: W - m.r + 4, y: sy(r[2]) + 4, fill: c }, R, r[0] + " " + r[1] + " " + fmt(r[2] / 1e12) + " TFLOP/s");
      el("text", { x: W - m.r + 4, y: sy(r[2]) + 18, fill: c }, R, fmt(r[3] / 1e9) + " GB/s");
    });
    var BC = { compute: "#d62728", memory: "#1f77b4" };
    dots.forEach(function (d) {
      var c = el("circle", { cx: sx(d.x).toFixed(1), cy: sy(d.y).toFixed(1), r: 4, "class": "opdot",
                             fill: BC[d.o[3]] || "#7f7f7f", "fill-opacity": 0.8 }, R);
      el("title", {}, c, d.o[0] + " (" + d.o[1] + ", " + d.o[3] + "-bound): " + fmt(d.x) + " FLOP/B, " +
         fmt(d.y / 1e9) + " GFLOP/s");
    });
    el("text", { x: m.l + 6, y: m.t + 14 }, R, "dots: operators (red compute-bound, blue memory-bound, grey other)" +
       (skipped ? "; " + skipped + " without FLOPs or main-memory bytes not drawn" : ""));
  }

  /* ---- controls ---- */
  function select(parent, text, options, value, onchange) {
    var l = hel("label", parent, text + " "), s = hel("select", l);
    options.forEach(function (o) {
      var e = hel("option", s, o[1]);
      e.value = o[0];
      if (o[0] === value) e.selected = true;
    });
    s.addEventListener("change", function () { onchange(+s.value); });
    return s;
  }
  var C = document.getElementById("controls");
  var objs = D.obj.map(function (o, i) { return [i, o.name]; });
  if (M > 2) {
    select(C, "x", objs, state.x, function (v) { state.x = v; scatter(); });
    select(C, "y", objs, state.y, function (v) { state.y = v; scatter(); });
  }
  select(C, "colour by", [[-1, "(one colour)"]].concat(D.axes.map(function (a, i) { return [i, a.name]; })),
         state.color, function (v) { state.color = v; legend(); scatter(); });
  var svg = document.getElementById("scatter");
  svg.addEventListener("mousemove", tip);
  svg.addEventListener("mouseleave", function () { document.getElementById("tip").style.display = "none"; });
  svg.addEventListener("click", function (ev) {
    var k = ev.target.getAttribute && ev.target.getAttribute("data-k");
    if (k && k[0] === "f") { state.sel = D.front[+k.slice(1)][0]; mark(); breakdown(); }
  });
  state.sel = D.bd.length ? D.bd[0].point : D.front.length ? D.front[0][0] : null;
  legend();
  scatter();
  breakdown();
  /* the time from navigation to a drawn page, for bench/run.sh */
  document.body.setAttribute("data-load-ms", String(Math.round(window.performance ? performance.now() : 0)));
  document.body.setAttribute("data-status", "ok");
})();
