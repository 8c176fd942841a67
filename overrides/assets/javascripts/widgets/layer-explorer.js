/* Layer explorer (real-models page): pick a model, a prompt and a layer; see
 * the residual stream entering that layer and its norms' statistics, with the
 * layer highlighted on a chart of the stream's mean L2 across all layers.
 * Everything comes from the embedded layer_explorer data (normref's real-weight
 * measurement, 4 significant digits); nothing is computed here but layout.
 * The chart is a small inline SVG drawn by hand (log-scale y, one line, one
 * highlighted dot): a charting library would outweigh the whole site's JS.
 * The table is built once per model and its cells rewritten in place; it is
 * not a live region. One sentence (data-label-status) says where the reader
 * is and the stream's length there, once per change. The chosen layer survives
 * a change of model: the final norm stays the final norm. */
nrWidgets.register("layer-explorer", function (w, ctx) {
  "use strict";
  var D = ctx.data, L = ctx.labels, el = ctx.el;
  var updates = 0;

  // The data carries 4 significant digits; show exactly those.
  function num(v) {
    if (v === null || v === undefined) return "\u2013";
    var s = Math.abs(v) >= 1e4 ? String(Math.round(v)) : String(Number(v.toPrecision(4)));
    return s.replace("-", "\u2212");
  }
  function select(labelText, options, value) {
    var id = ctx.uid("sel");
    var s = el("select", { id: id, onchange: function () { update(true); } },
               options.map(function (o) { return el("option", { value: o[0] }, o[1]); }));
    s.value = value;
    return { wrap: el("span", null, [el("label", { for: id }, labelText), " ", s]), el: s };
  }

  // The page may say which model to show first (the one its tables start with).
  var first = w.getAttribute("data-first-model");
  var models = Object.keys(D.models).sort(function (a, b) { return (b === first) - (a === first); });
  var mSel = select(L.model, models.map(function (m) { return [m, D.models[m].model.name]; }), models[0]);
  var pSel = select(L.prompt, D.prompt_order.map(function (p) { return [p, L["prompt" + p.charAt(0).toUpperCase() + p.slice(1)] || p]; }),
                    D.prompt_order[0]);
  var lid = ctx.uid("layer");
  // The stop the reader chose, kept across a change of model or prompt: a layer number, or
  // Infinity for the final norm (a model with fewer layers shows its last; switching back
  // restores the choice, and the final norm stays the final norm).
  var wanted = 0;
  var slider = el("input", { type: "range", id: lid, min: 0, step: 1, value: 0, oninput: function () {
    wanted = Number(slider.value) >= Number(slider.max) ? Infinity : Number(slider.value);
    update(true);
  } });
  // The slider's aria-valuetext already speaks the layer; the shown copy is not live.
  var shown = el("output", { class: "nr-layers__stop", for: lid, "aria-live": "off" });

  var W = 480, H = 190, ml = 46, mr = 12, mt = 10, mb = 28;
  var chart = el("svg:svg", { viewBox: "0 0 " + W + " " + H, class: "nr-layers__chart", role: "img" });
  var prompt = el("p", { class: "nr-layers__prompt" });
  var table = el("table", { class: "nr-layers__table" });
  var status = el("p", { class: "nr-widget__status", "aria-live": "polite" });
  w.append(
    L.title ? el("p", { class: "nr-widget__title" }, L.title) : "",
    // The layer's label, slider and stop wrap as one group: a label never ends a row whose slider wrapped.
    el("div", { class: "nr-layers__controls" }, [mSel.wrap, pSel.wrap,
      el("span", { class: "nr-layers__layer" }, [el("label", { for: lid }, L.layer), slider, shown])]),
    chart, prompt, table, status);

  function run() { return D.models[mSel.el.value].runs[pSel.el.value]; }
  // Stops: every layer, then the stream entering the final norm.
  function stops(r) { return r.layers.concat([r.final]); }
  function stopName(r, k) { return k < r.layers.length ? ctx.fill(L.layerN, { n: r.layers[k].layer }) : L.final; }

  // The chart: axes and line drawn once per run, the marker moved per layer.
  var drawnRun = null, X, Y, ys, marker, dot, sqrtTag;
  function drawRun(r) {
    while (chart.firstChild) chart.removeChild(chart.firstChild);
    var st = stops(r);
    ys = st.map(function (s) { return Math.log10(s.stream_in.l2_excl0); });
    var sq = Math.log10(D.models[mSel.el.value].sqrt_d);
    var lo = Math.floor(Math.min.apply(null, ys.concat([sq]))), hi = Math.ceil(Math.max.apply(null, ys.concat([sq])));
    if (hi === lo) hi = lo + 1;
    X = function (i) { return ml + (W - ml - mr) * i / Math.max(1, st.length - 1); };
    Y = function (v) { return mt + (H - mt - mb) * (hi - v) / (hi - lo); };
    var parts = [el("svg:line", { x1: ml, y1: mt, x2: ml, y2: H - mb, class: "nr-layers__axis" }),
                 el("svg:line", { x1: ml, y1: H - mb, x2: W - mr, y2: H - mb, class: "nr-layers__axis" })];
    for (var e = lo; e <= hi; e++) {
      parts.push(el("svg:text", { x: ml - 4, y: Y(e) + 4, "text-anchor": "end" }, num(Math.pow(10, e))));
    }
    parts.push(el("svg:line", { x1: ml, y1: Y(sq), x2: W - mr, y2: Y(sq), class: "nr-layers__axis", "stroke-dasharray": "4 3" }),
               el("svg:polyline", { class: "nr-layers__line", points: ys.map(function (v, i) { return X(i) + "," + Y(v); }).join(" ") }),
               marker = el("svg:line", { y1: mt, y2: H - mb, class: "nr-layers__axis", "stroke-dasharray": "2 2" }),
               // Over the lines, on a halo of the widget's background; moveMarker keeps it clear of the marker.
               sqrtTag = el("svg:text", { y: Y(sq) - 3, "text-anchor": "end", class: "nr-layers__tag" }, "\u221Ad"),
               dot = el("svg:circle", { r: 5, class: "nr-layers__dot" }),
               el("svg:text", { x: ml, y: H - 8 }, stopName(r, 0)),
               el("svg:text", { x: W - mr, y: H - 8, "text-anchor": "end" }, stopName(r, st.length - 1)));
    parts.forEach(function (p) { chart.appendChild(p); });
  }
  function moveMarker(k) {
    marker.setAttribute("x1", X(k)); marker.setAttribute("x2", X(k));
    dot.setAttribute("cx", X(k)); dot.setAttribute("cy", Y(ys[k])); dot.setAttribute("data-nr-stop", k);
    // The √d tag sits at the right end of its line, or just left of the marker when the marker would
    // cross it there (the stream's line runs far above √d after the first layer).
    sqrtTag.setAttribute("x", X(k) < W - mr - 30 ? W - mr : X(k) - 8);
  }

  // The table: rows built once per model (its norms), cells rewritten per change.
  var builtFor = null, cells = {}, caption;
  function buildTable(s) {
    while (table.firstChild) table.removeChild(table.firstChild);
    cells = {};
    caption = el("caption");
    table.appendChild(caption);
    function row(key, name) {
      cells[name] = el("td", { "data-nr-value": name });
      table.appendChild(el("tr", null, [el("th", { scope: "row" }, key), cells[name]]));
    }
    row(L.stream, "stream");
    row(L.pos0, "pos0");
    s.norms.forEach(function (n) {
      row(n.name + " \u00B7 " + L.input, n.name + ".input");
      row(n.name + " \u00B7 " + L.pregain, n.name + ".pre_gain");
      row(n.name + " \u00B7 " + L.postgain, n.name + ".post_gain");
      row(n.name + " \u00B7 " + L.gain, n.name + ".gain");
    });
  }

  function update(announce) {
    var r = run(), st = stops(r);
    slider.max = String(st.length - 1);
    var k = Math.min(wanted, st.length - 1), s = st[k];
    slider.value = String(k);
    var name = stopName(r, k), model = mSel.el.selectedOptions[0].textContent;
    shown.value = name;
    slider.setAttribute("aria-valuetext", name);
    w.setAttribute("data-nr-model", mSel.el.value);
    w.setAttribute("data-nr-prompt", pSel.el.value);
    w.setAttribute("data-nr-stop", String(k));
    prompt.textContent = "\u201C" + r.prompt + "\u201D \u2014 " + L.tokens + " " + r.n_tokens +
      (r.n_unk ? " (" + L.unk + " " + r.n_unk + ")" : "");
    var shape = mSel.el.value + "|" + s.norms.map(function (n) { return n.name; }).join(",");
    if (shape !== builtFor) { buildTable(s); builtFor = shape; }
    caption.textContent = name;
    cells.stream.textContent = num(s.stream_in.l2_excl0);
    cells.pos0.textContent = num(s.stream_in.l2_tokens[0]);
    s.norms.forEach(function (n) {
      cells[n.name + ".input"].textContent = num(n.input.l2_excl0);
      cells[n.name + ".pre_gain"].textContent = num(n.pre_gain.l2_excl0);
      cells[n.name + ".post_gain"].textContent = num(n.post_gain.l2_excl0);
      cells[n.name + ".gain"].textContent = [n.gain.min, n.gain.median, n.gain.max].map(num).join(" / ");
    });
    if (r !== drawnRun) { drawRun(r); drawnRun = r; }
    moveMarker(k);
    chart.setAttribute("aria-label", L.chart + " " + model + ", " + name + ": " + num(s.stream_in.l2_excl0));
    if (announce) {
      status.textContent = ctx.fill(L.status, { model: model, prompt: pSel.el.selectedOptions[0].textContent,
                                                layer: name, l2: num(s.stream_in.l2_excl0) });
    }
    w.setAttribute("data-nr-updates", String(++updates));
  }
  update(false);
});
