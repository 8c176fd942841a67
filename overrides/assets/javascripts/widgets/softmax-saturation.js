/* Softmax saturation (formulas page): six fixed scores s, multiplied by a
 * magnitude c; the bars show softmax(c s) and the top probability, live.
 * softmax is recomputed here as normref.experiments.softmax.softmax does it
 * (shifted by the max, so large c does not overflow). The slider steps through
 * normref's own sweep of c (the embedded `scales`), so every stop is a point of
 * the figure and of the data a test compares with. One sentence
 * (data-label-status: c and the top probability) is announced per step; the
 * bars are not a live region. */
nrWidgets.register("softmax-saturation", function (w, ctx) {
  "use strict";
  var s = ctx.data.scores, names = ctx.data.labels, scales = ctx.data.scales, L = ctx.labels, fmt = ctx.fmt, el = ctx.el;
  var updates = 0;

  function softmax(c) {
    var m = -Infinity, i, e = [], sum = 0;
    for (i = 0; i < s.length; i++) m = Math.max(m, c * s[i]);
    for (i = 0; i < s.length; i++) { e.push(Math.exp(c * s[i] - m)); sum += e[i]; }
    return e.map(function (v) { return v / sum; });
  }

  var start = 0;
  scales.forEach(function (c, k) { if (Math.abs(c - 1) < Math.abs(scales[start] - 1)) start = k; });

  var id = ctx.uid("magnitude");
  var input = el("input", { type: "range", id: id, min: 0, max: scales.length - 1, step: 1, value: start,
                            oninput: function () { update(true); } });
  // The slider's aria-valuetext already speaks c; the shown copy is not live.
  var shown = el("output", { class: "nr-softmax__factor", for: id, "aria-live": "off" });
  var bars = names.map(function (name, i) {
    var fill = el("span", { class: "nr-softmax__bar" });
    var val = el("span", { class: "nr-softmax__value", "data-nr-p": i });
    return { row: el("div", { class: "nr-softmax__row" },
                     [el("span", { class: "nr-softmax__key" }, name), el("span", { class: "nr-softmax__track" }, fill), val]),
             fill: fill, val: val };
  });
  var topVal = el("strong", { class: "nr-softmax__topvalue", "data-nr-value": "top" });
  var status = el("p", { class: "nr-widget__status", "aria-live": "polite" });
  w.append(
    L.title ? el("p", { class: "nr-widget__title" }, L.title) : "",
    el("div", { class: "nr-softmax__control" }, [el("label", { for: id }, L.magnitude), input, shown]),
    el("div", { class: "nr-softmax__rows" }, bars.map(function (b) { return b.row; })),
    el("p", { class: "nr-softmax__top" }, [el("span", null, (L.top || "") + " "), topVal]),
    el("p", { class: "nr-softmax__note" }, (L.note || "") + (L.uniform || "") + " 1/" + s.length + " = " + fmt(1 / s.length, 4)),
    status);

  function update(announce) {
    var c = scales[Number(input.value)], p = softmax(c), best = 0;
    p.forEach(function (v, i) { if (v > p[best]) best = i; });
    var cs = "c = " + (c < 10 ? fmt(c, 2) : fmt(c, 1)), top = fmt(p[best], 4);
    shown.value = cs;
    input.setAttribute("aria-valuetext", cs);
    w.setAttribute("data-nr-c", String(c));
    p.forEach(function (v, i) {
      bars[i].val.textContent = fmt(v, 3);
      bars[i].fill.style.width = (100 * v).toFixed(2) + "%";
    });
    topVal.textContent = names[best] + " = " + top;
    topVal.setAttribute("data-nr-top", String(p[best]));
    if (announce) status.textContent = ctx.fill(L.status, { c: cs, name: names[best], p: top });
    w.setAttribute("data-nr-updates", String(++updates));
  }
  update(false);
});
