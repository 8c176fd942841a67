/* Scale-invariance playground (home page): stretch the fixed 256-d vector x
 * (normref's seeded sample, embedded as data) by c from 0.1x to 10x and show
 * the input length ||c x||_2 next to the RMSNorm output length, which stays at
 * sqrt(d). RMSNorm is recomputed here exactly as normref.rms_norm does it,
 * with eps inside the square root. The slider moves in log10(c), in the same
 * 41 steps as the figure's sweep, so every stop is a point of the figure.
 * The bars are not a live region; one sentence (data-label-status) says what
 * changed, once per step. */
nrWidgets.register("scale-playground", function (w, ctx) {
  "use strict";
  var x = ctx.data.x, d = ctx.data.d, eps = ctx.data.eps, L = ctx.labels, fmt = ctx.fmt, el = ctx.el;
  var lo = Math.log10(ctx.data.scales[0]), hi = Math.log10(ctx.data.scales[ctx.data.scales.length - 1]);
  var step = (hi - lo) / (ctx.data.scales.length - 1);
  var updates = 0;

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
  var input = el("input", { type: "range", id: id, min: +lo.toFixed(6), max: +hi.toFixed(6), step: +step.toFixed(6),
                            value: "0", oninput: function () { update(true); } });
  // The slider's aria-valuetext already speaks c; the shown copy is not live.
  var shown = el("output", { class: "nr-scale__factor", for: id, "aria-live": "off" });

  function bar(name, text) {
    var fill = el("span", { class: "nr-scale__bar" });
    var val = el("span", { class: "nr-scale__value", "data-nr-value": name });
    var row = el("div", { class: "nr-scale__row nr-scale__row--" + name },
                 [el("span", { class: "nr-scale__key" }, text), el("span", { class: "nr-scale__track" }, fill), val]);
    return { row: row, fill: fill, val: val };
  }
  var bin = bar("in", L.input), bout = bar("out", L.output);
  var status = el("p", { class: "nr-widget__status", "aria-live": "polite" });
  w.append(
    L.title ? el("p", { class: "nr-widget__title" }, L.title) : "",
    el("div", { class: "nr-scale__control" }, [el("label", { for: id }, L.factor), input, shown]),
    el("div", { class: "nr-scale__rows" }, [bin.row, bout.row]),
    el("p", { class: "nr-scale__note" }, (L.note || "") + " \u221Ad = " + fmt(Math.sqrt(d), 0)),
    status);

  function update(announce) {
    var c = Math.pow(10, Number(input.value)), r = lengths(c);
    var cs = fmt(c, 2) + "\u00D7", lin = fmt(r.inp, 2), lout = fmt(r.out, 4);
    shown.value = cs;
    input.setAttribute("aria-valuetext", cs);
    w.setAttribute("data-nr-c", String(c));
    bin.val.textContent = lin;
    bout.val.textContent = lout;
    bin.fill.style.width = width(r.inp);
    bout.fill.style.width = width(r.out);
    if (announce) status.textContent = ctx.fill(L.status, { c: cs, input: lin, output: lout });
    w.setAttribute("data-nr-updates", String(++updates));
  }
  update(false);
});
