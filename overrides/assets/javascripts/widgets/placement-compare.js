/* Placement comparison (placement page): pick any two layouts and a training
 * setting; see their gradients and residual-stream length at initialization
 * and their training-loss curves, side by side, with the numbers in a table.
 * Everything comes from the embedded placement_lab data, which normref builds
 * from the same functions as the page's static figures (the training curves
 * are the figure's 10-step moving average, one point in five steps); nothing
 * is computed here but layout. The charts are small inline SVGs drawn by hand,
 * like the layer explorer's: a charting library would outweigh the site's JS.
 * The table is not a live region; one sentence (data-label-status) says what
 * a change of layout or setting changed, once per change. */
nrWidgets.register("placement-compare", function (w, ctx) {
  "use strict";
  var D = ctx.data, L = ctx.labels, fmt = ctx.fmt, el = ctx.el;
  var updates = 0;

  function select(labelText, options, value) {
    var id = ctx.uid("sel");
    var s = el("select", { id: id, onchange: function () { update(true); } },
               options.map(function (o) { return el("option", { value: o[0] }, o[1]); }));
    s.value = value;
    return { wrap: el("span", { class: "nr-place__field" }, [el("label", { for: id }, labelText), " ", s]), el: s };
  }
  function settingName(s) {
    return L.lr + " " + s.lr + (L.sep || ", ") + (s.warmup ? L.warmup.replace("{n}", s.warmup) : L.nowarmup);
  }

  if (L.title) w.appendChild(el("p", { class: "nr-widget__title" }, L.title));
  var variants = D.variants.map(function (v) { return [v, D.names[v]]; });
  var ctrl = el("div", { class: "nr-place__controls" });
  // The page may say which pair to show first (data-first="post,pre").
  var first = (w.getAttribute("data-first") || "post,pre").split(",");
  var a = select(L.a, variants, first[0]), b = select(L.b, variants, first[1]);
  var sets = D.loss.settings;
  var s = select(L.setting, sets.map(function (x) { return [x.key, settingName(x)]; }), sets[sets.length - 1].key);
  ctrl.append(a.wrap, b.wrap, s.wrap);
  var legend = el("p", { class: "nr-place__legend" });
  var charts = el("div", { class: "nr-place__charts" });
  var table = el("table", { class: "nr-place__table" });
  var status = el("p", { class: "nr-widget__status", "aria-live": "polite" });
  w.append(ctrl, legend, charts, table, status);

  var depths = Object.keys(D.stream).sort(function (x, y) { return Number(x) - Number(y); });
  var deep = depths[depths.length - 1];
  var W = 300, H = 190, ml = 44, mr = 10, mt = 22, mb = 30;
  function chart(title, series, opt) {
    // series: [{x: [...], y: [...], cls: "a" | "b"}]; opt: {log, xLabel, hline, hlineLabel}
    var g = el("svg:svg", { viewBox: "0 0 " + W + " " + H, class: "nr-place__chart", role: "img" });
    var ys = [], xs = [];
    series.forEach(function (sr) {
      sr.y.forEach(function (v, i) { if (v !== null && isFinite(v) && (!opt.log || v > 0)) { ys.push(opt.log ? Math.log10(v) : v); xs.push(sr.x[i]); } });
    });
    if (opt.hline !== undefined) ys.push(opt.hline);
    if (!ys.length) ys = [0, 1];
    var lo = Math.min.apply(null, ys), hi = Math.max.apply(null, ys);
    if (opt.log) { lo = Math.floor(lo); hi = Math.ceil(hi); } else { lo = opt.ymin !== undefined ? opt.ymin : Math.min(0, lo); hi = hi + (hi - lo) * 0.05; }
    if (hi === lo) hi = lo + 1;
    var x0 = Math.min.apply(null, xs.length ? xs : [0]), x1 = Math.max.apply(null, xs.length ? xs : [1]);
    if (x1 === x0) x1 = x0 + 1;
    function X(v) { return ml + (W - ml - mr) * (v - x0) / (x1 - x0); }
    function Y(v) { return mt + (H - mt - mb) * (hi - v) / (hi - lo); }
    g.appendChild(el("svg:text", { x: ml, y: 13, class: "nr-place__ctitle" }, title));
    g.appendChild(el("svg:line", { x1: ml, y1: mt, x2: ml, y2: H - mb, class: "nr-place__axis" }));
    g.appendChild(el("svg:line", { x1: ml, y1: H - mb, x2: W - mr, y2: H - mb, class: "nr-place__axis" }));
    var ticks = opt.log ? [] : [lo, (lo + hi) / 2, hi];
    if (opt.log) for (var e = lo; e <= hi; e++) ticks.push(e);
    ticks.forEach(function (v) {
      var txt = opt.log ? String(Number(Math.pow(10, v).toPrecision(1))) : fmt(v, Math.abs(hi - lo) < 5 ? 1 : 0);
      g.appendChild(el("svg:text", { x: ml - 4, y: Y(v) + 4, "text-anchor": "end" }, txt.replace("-", "\u2212")));
    });
    g.appendChild(el("svg:text", { x: ml, y: H - 12, "text-anchor": "middle" }, String(x0)));
    g.appendChild(el("svg:text", { x: W - mr, y: H - 12, "text-anchor": "end" }, String(x1)));
    g.appendChild(el("svg:text", { x: (ml + W - mr) / 2, y: H - 2, "text-anchor": "middle" }, opt.xLabel));
    if (opt.hline !== undefined) {
      g.appendChild(el("svg:line", { x1: ml, y1: Y(opt.hline), x2: W - mr, y2: Y(opt.hline), class: "nr-place__axis", "stroke-dasharray": "2 3" }));
    }
    series.forEach(function (sr) {
      var pts = [], parts = [];
      sr.y.forEach(function (v, i) {
        if (v === null || !isFinite(v) || (opt.log && v <= 0)) { if (pts.length) parts.push(pts); pts = []; return; }
        pts.push(X(sr.x[i]).toFixed(1) + "," + Y(opt.log ? Math.log10(v) : v).toFixed(1));
      });
      if (pts.length) parts.push(pts);
      parts.forEach(function (p) {
        g.appendChild(el("svg:polyline", { class: "nr-place__line nr-place__line--" + sr.cls, points: p.join(" "), "data-nr-points": p.length }));
      });
    });
    return g;
  }

  function row(name, va, vb, key) {
    table.appendChild(el("tr", null, [el("th", { scope: "row" }, name), el("td", { "data-nr-value": key + ".a" }, va),
                                      el("td", { "data-nr-value": key + ".b" }, vb)]));
  }
  function finalText(f) {
    if (f.final === null) return L.diverged;
    return fmt(f.final, 2);
  }

  function update(announce) {
    var va = a.el.value, vb = b.el.value, k = s.el.value;
    var set = sets.filter(function (x) { return x.key === k; })[0];
    w.setAttribute("data-nr-a", va);
    w.setAttribute("data-nr-b", vb);
    w.setAttribute("data-nr-setting", k);
    while (legend.firstChild) legend.removeChild(legend.firstChild);
    [["a", va], ["b", vb]].forEach(function (p) {
      legend.append(el("span", { class: "nr-place__swatch nr-place__swatch--" + p[0], "aria-hidden": "true" }),
                    el("span", { class: "nr-place__name" }, D.names[p[1]]));
    });
    while (charts.firstChild) charts.removeChild(charts.firstChild);
    // The deeper of the measured stacks is charted; both are in the table.
    var gl = D.grad.layers, st = D.stream[deep], cur = D.loss.curves;
    function lossSeries(v, cls) {
      var c = cur[v][k];
      return c ? { x: c.steps, y: c.loss, cls: cls } : { x: [], y: [], cls: cls };
    }
    var g1 = chart(L.gradChart, [{ x: gl, y: D.grad.mean[va], cls: "a" }, { x: gl, y: D.grad.mean[vb], cls: "b" }],
                   { log: true, xLabel: L.layer });
    var g2 = chart(L.streamChart.replace("{n}", deep), [{ x: st.layers, y: st.length[va], cls: "a" }, { x: st.layers, y: st.length[vb], cls: "b" }],
                   { xLabel: L.layer, ymin: 0 });
    var g3 = chart(L.lossChart, [lossSeries(va, "a"), lossSeries(vb, "b")],
                   { xLabel: L.step, hline: D.loss.unigram, ymin: Math.min(D.loss.unigram, 2) - 0.2 });
    g1.setAttribute("aria-label", L.gradChart + ": " + D.names[va] + " " + fmt(D.grad.ratio[va], 2) + ", " + D.names[vb] + " " + fmt(D.grad.ratio[vb], 2));
    g2.setAttribute("aria-label", L.streamChart.replace("{n}", deep) + ": " + D.names[va] + " " + fmt(st.growth[va], 2) + "\u00D7, " + D.names[vb] + " " + fmt(st.growth[vb], 2) + "\u00D7");
    var fa = D.loss.final[va][k], fb = D.loss.final[vb][k];
    g3.setAttribute("aria-label", L.lossChart + ", " + settingName(set) + ": " + D.names[va] + " " + finalText(fa) + ", " + D.names[vb] + " " + finalText(fb));
    charts.append(g1, g2, g3);

    while (table.firstChild) table.removeChild(table.firstChild);
    table.appendChild(el("thead", null, el("tr", null, [el("td"), el("th", { scope: "col" }, D.names[va]),
                                                         el("th", { scope: "col" }, D.names[vb])])));
    row(L.gradRatio, fmt(D.grad.ratio[va], 2), fmt(D.grad.ratio[vb], 2), "grad_ratio");
    depths.forEach(function (n) {
      var g = D.stream[n].growth;
      row(L.growth.replace("{n}", n), fmt(g[va], 2) + "\u00D7", fmt(g[vb], 2) + "\u00D7", "growth" + n);
    });
    row(L.final.replace("{s}", settingName(set)), finalText(fa), finalText(fb), "final");
    row(L.failed, fa.diverged + " / " + fa.stalled + " / " + fa.seeds, fb.diverged + " / " + fb.stalled + " / " + fb.seeds, "failed");
    if (announce) {
      status.textContent = ctx.fill(L.status, { a: D.names[va], b: D.names[vb], setting: settingName(set),
                                                fa: finalText(fa), fb: finalText(fb) });
    }
    w.setAttribute("data-nr-updates", String(++updates));
  }
  update(false);
});
