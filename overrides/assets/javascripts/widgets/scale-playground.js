/* Scale-invariance playground (home page): stretch the fixed 256-d vector x
 * (normref's seeded sample, embedded as data) by c from 0.1x to 10x and show
 * the input length ||c x||_2 next to the RMSNorm output length, which stays at
 * sqrt(d). RMSNorm is recomputed here exactly as normref.rms_norm does it,
 * with eps inside the square root. The slider moves in log10(c), in the same
 * 41 steps as the figure's sweep, so every stop is a point of the figure. */
nrWidgets.register("scale-playground", function (el, ctx) {
  "use strict";
  var x = ctx.data.x, d = ctx.data.d, eps = ctx.data.eps, L = ctx.labels, fmt = ctx.fmt;
  var lo = Math.log10(ctx.data.scales[0]), hi = Math.log10(ctx.data.scales[ctx.data.scales.length - 1]);
  var step = (hi - lo) / (ctx.data.scales.length - 1);

  function node(tag, cls, text) {
    var n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined) n.textContent = text;
    return n;
  }

  // Lengths for stretch factor c: ||c x||_2 and ||RMSNorm(c x)||_2.
  function lengths(c) {
    var ss = 0, i, v;
    for (i = 0; i < d; i++) { v = c * x[i]; ss += v * v; }
    var rms = Math.sqrt(ss / d + eps), so = 0;
    for (i = 0; i < d; i++) { v = (c * x[i]) / rms; so += v * v; }
    return { inp: Math.sqrt(ss), out: Math.sqrt(so), rms: rms };
  }
  // Bars on a log scale, like the figure's axis: from half the smallest input
  // length to the largest, so at c = 1 the two bars are (almost) equally long.
  var axLo = Math.log(lengths(Math.pow(10, lo)).inp / 2), axHi = Math.log(lengths(Math.pow(10, hi)).inp);
  function width(v) { return (100 * (Math.log(v) - axLo) / (axHi - axLo)).toFixed(2) + "%"; }

  var id = ctx.uid("factor");
  if (L.title) el.appendChild(node("p", "nr-widget__title", L.title));
  var row = node("div", "nr-scale__control");
  var label = node("label", null, L.factor);
  label.htmlFor = id;
  var input = node("input");
  input.type = "range"; input.id = id;
  input.min = String(+lo.toFixed(6)); input.max = String(+hi.toFixed(6)); input.step = String(+step.toFixed(6)); input.value = "0";
  var shown = node("output", "nr-scale__factor");
  shown.htmlFor = id;
  row.append(label, input, shown);

  function bar(name, text) {
    var r = node("div", "nr-scale__row nr-scale__row--" + name);
    var k = node("span", "nr-scale__key", text);
    var track = node("span", "nr-scale__track");
    var fill = node("span", "nr-scale__bar");
    track.appendChild(fill);
    var val = node("span", "nr-scale__value");
    val.setAttribute("data-nr-value", name);
    r.append(k, track, val);
    return { row: r, fill: fill, val: val };
  }
  var bin = bar("in", L.input), bout = bar("out", L.output);
  var rows = node("div", "nr-scale__rows");
  rows.setAttribute("aria-live", "polite");
  rows.append(bin.row, bout.row);
  var note = node("p", "nr-scale__note", (L.note || "") + " \u221Ad = " + fmt(Math.sqrt(d), 0));
  el.append(row, rows, note);

  function update() {
    var c = Math.pow(10, Number(input.value)), r = lengths(c);
    var cs = fmt(c, 2) + "\u00D7";
    shown.value = cs;
    shown.textContent = cs;
    input.setAttribute("aria-valuetext", cs);
    el.setAttribute("data-nr-c", String(c));
    bin.val.textContent = fmt(r.inp, 2);
    bout.val.textContent = fmt(r.out, 4);
    bin.fill.style.width = width(r.inp);
    bout.fill.style.width = width(r.out);
  }
  input.addEventListener("input", update);
  input.addEventListener("change", update);
  update();
});
