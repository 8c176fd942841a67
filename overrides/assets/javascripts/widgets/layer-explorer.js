/* Layer explorer (real-models page): pick a model, a prompt and a layer; see
 * the residual stream entering that layer and its norms' statistics, with the
 * layer highlighted on a chart of the stream's mean L2 across all layers.
 * Everything comes from the embedded layer_explorer data (normref's real-weight
 * measurement, 4 significant digits); nothing is computed here but layout.
 * The chart is a small inline SVG drawn by hand (log-scale y, one line, one
 * highlighted dot): a charting library would outweigh the whole site's JS. */
nrWidgets.register("layer-explorer", function (el, ctx) {
  "use strict";
  var D = ctx.data, L = ctx.labels, SVG = "http://www.w3.org/2000/svg";

  function node(tag, cls, text) {
    var n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined) n.textContent = text;
    return n;
  }
  function svg(tag, attrs, text) {
    var n = document.createElementNS(SVG, tag);
    Object.keys(attrs).forEach(function (k) { n.setAttribute(k, attrs[k]); });
    if (text !== undefined) n.textContent = text;
    return n;
  }
  // The data carries 4 significant digits; show exactly those.
  function num(v) {
    if (v === null || v === undefined) return "\u2013";
    var s = Math.abs(v) >= 1e4 ? String(Math.round(v)) : String(Number(v.toPrecision(4)));
    return s.replace("-", "\u2212");
  }
  function select(labelText, options, value) {
    var id = ctx.uid("sel"), wrap = node("span");
    var lab = node("label", null, labelText); lab.htmlFor = id;
    var s = node("select"); s.id = id;
    options.forEach(function (o) { var op = node("option", null, o[1]); op.value = o[0]; s.appendChild(op); });
    s.value = value;
    wrap.append(lab, " ", s);
    return { wrap: wrap, el: s };
  }

  if (L.title) el.appendChild(node("p", "nr-widget__title", L.title));
  // The page may say which model to show first (the one its tables start with).
  var first = el.getAttribute("data-first-model");
  var models = Object.keys(D.models).sort(function (a, b) { return (b === first) - (a === first); });
  var ctrl = node("div", "nr-layers__controls");
  var mSel = select(L.model, models.map(function (m) { return [m, D.models[m].model.name]; }), models[0]);
  var pSel = select(L.prompt, D.prompt_order.map(function (p) { return [p, L["prompt" + p.charAt(0).toUpperCase() + p.slice(1)] || p]; }),
                    D.prompt_order[0]);
  var lid = ctx.uid("layer");
  var lLab = node("label", null, L.layer); lLab.htmlFor = lid;
  var slider = node("input"); slider.type = "range"; slider.id = lid; slider.min = "0"; slider.step = "1";
  var shown = node("output", "nr-scale__factor"); shown.htmlFor = lid;
  ctrl.append(mSel.wrap, pSel.wrap, lLab, slider, shown);

  var W = 480, H = 190, ml = 46, mr = 12, mt = 10, mb = 28;
  var chart = svg("svg", { viewBox: "0 0 " + W + " " + H, class: "nr-layers__chart", role: "img" });
  var prompt = node("p", "nr-layers__prompt");
  var table = node("table", "nr-layers__table");
  var live = node("div"); live.setAttribute("aria-live", "polite");
  live.append(prompt, table);
  el.append(ctrl, chart, live);

  function run() { return D.models[mSel.el.value].runs[pSel.el.value]; }
  // Stops: every layer, then the stream entering the final norm.
  function stops(r) { return r.layers.map(function (l) { return l; }).concat([r.final]); }
  function stopName(r, k) { return k < r.layers.length ? L.layerN.replace("{n}", r.layers[k].layer) : L.final; }

  function draw(r, k) {
    while (chart.firstChild) chart.removeChild(chart.firstChild);
    var st = stops(r), ys = st.map(function (s) { return Math.log10(s.stream_in.l2_excl0); });
    var sq = Math.log10(D.models[mSel.el.value].sqrt_d);
    var lo = Math.floor(Math.min.apply(null, ys.concat([sq]))), hi = Math.ceil(Math.max.apply(null, ys.concat([sq])));
    if (hi === lo) hi = lo + 1;
    function X(i) { return ml + (W - ml - mr) * i / Math.max(1, st.length - 1); }
    function Y(v) { return mt + (H - mt - mb) * (hi - v) / (hi - lo); }
    chart.setAttribute("aria-label", L.chart + " " + mSel.el.selectedOptions[0].textContent + ", " + stopName(r, k) + ": " + num(st[k].stream_in.l2_excl0));
    chart.appendChild(svg("line", { x1: ml, y1: mt, x2: ml, y2: H - mb, class: "nr-axis" }));
    chart.appendChild(svg("line", { x1: ml, y1: H - mb, x2: W - mr, y2: H - mb, class: "nr-axis" }));
    for (var e = lo; e <= hi; e++) {
      chart.appendChild(svg("text", { x: ml - 4, y: Y(e) + 4, "text-anchor": "end" }, num(Math.pow(10, e))));
    }
    chart.appendChild(svg("line", { x1: ml, y1: Y(sq), x2: W - mr, y2: Y(sq), class: "nr-axis", "stroke-dasharray": "4 3" }));
    chart.appendChild(svg("text", { x: W - mr, y: Y(sq) - 3, "text-anchor": "end" }, "\u221Ad"));
    chart.appendChild(svg("polyline", { class: "nr-line", points: ys.map(function (v, i) { return X(i) + "," + Y(v); }).join(" ") }));
    chart.appendChild(svg("line", { x1: X(k), y1: mt, x2: X(k), y2: H - mb, class: "nr-axis", "stroke-dasharray": "2 2" }));
    chart.appendChild(svg("circle", { cx: X(k), cy: Y(ys[k]), r: 5, class: "nr-dot", "data-nr-stop": k }));
    chart.appendChild(svg("text", { x: ml, y: H - 8 }, stopName(r, 0)));
    chart.appendChild(svg("text", { x: W - mr, y: H - 8, "text-anchor": "end" }, stopName(r, st.length - 1)));
  }

  function row(key, value, name) {
    var tr = node("tr"), td = node("td", null, num(value));
    td.setAttribute("data-nr-value", name);
    tr.append(node("th", null, key), td);
    table.appendChild(tr);
  }

  function update() {
    var r = run(), st = stops(r);
    slider.max = String(st.length - 1);
    var k = Math.min(Number(slider.value), st.length - 1), s = st[k];
    var name = stopName(r, k);
    shown.value = name; shown.textContent = name;
    slider.setAttribute("aria-valuetext", name);
    el.setAttribute("data-nr-model", mSel.el.value);
    el.setAttribute("data-nr-prompt", pSel.el.value);
    el.setAttribute("data-nr-stop", String(k));
    prompt.textContent = "\u201C" + r.prompt + "\u201D \u2014 " + L.tokens + " " + r.n_tokens +
      (r.n_unk ? " (" + L.unk + " " + r.n_unk + ")" : "");
    while (table.firstChild) table.removeChild(table.firstChild);
    var cap = node("caption", null, name); table.appendChild(cap);
    row(L.stream, s.stream_in.l2_excl0, "stream");
    row(L.pos0, s.stream_in.l2_tokens[0], "pos0");
    s.norms.forEach(function (n) {
      row(n.name + " \u00B7 " + L.input, n.input.l2_excl0, n.name + ".input");
      row(n.name + " \u00B7 " + L.pregain, n.pre_gain.l2_excl0, n.name + ".pre_gain");
      row(n.name + " \u00B7 " + L.postgain, n.post_gain.l2_excl0, n.name + ".post_gain");
      row(n.name + " \u00B7 " + L.gain, null, n.name + ".gain");
      table.lastChild.lastChild.textContent = [n.gain.min, n.gain.median, n.gain.max].map(num).join(" / ");
    });
    draw(r, k);
  }
  slider.value = "0";
  mSel.el.addEventListener("change", update);
  pSel.el.addEventListener("change", update);
  slider.addEventListener("input", update);
  slider.addEventListener("change", update);
  update();
});
