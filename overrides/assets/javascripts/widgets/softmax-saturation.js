/* Softmax saturation (formulas page): six fixed scores s, multiplied by a
 * magnitude c; the bars show softmax(c s) and the top probability, live.
 * softmax is recomputed here as normref.experiments.softmax.softmax does it
 * (shifted by the max, so large c does not overflow). The slider steps through
 * normref's own sweep of c (the embedded `scales`), so every stop is a point of
 * the figure and of the data a test compares with. */
nrWidgets.register("softmax-saturation", function (el, ctx) {
  "use strict";
  var s = ctx.data.scores, names = ctx.data.labels, scales = ctx.data.scales, L = ctx.labels, fmt = ctx.fmt;

  function node(tag, cls, text) {
    var n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined) n.textContent = text;
    return n;
  }

  function softmax(c) {
    var m = -Infinity, i, e = [], sum = 0;
    for (i = 0; i < s.length; i++) m = Math.max(m, c * s[i]);
    for (i = 0; i < s.length; i++) { e.push(Math.exp(c * s[i] - m)); sum += e[i]; }
    return e.map(function (v) { return v / sum; });
  }

  var start = 0;
  scales.forEach(function (c, k) { if (Math.abs(c - 1) < Math.abs(scales[start] - 1)) start = k; });

  var id = ctx.uid("magnitude");
  if (L.title) el.appendChild(node("p", "nr-widget__title", L.title));
  var row = node("div", "nr-scale__control");
  var label = node("label", null, L.magnitude);
  label.htmlFor = id;
  var input = node("input");
  input.type = "range"; input.id = id;
  input.min = "0"; input.max = String(scales.length - 1); input.step = "1"; input.value = String(start);
  var shown = node("output", "nr-scale__factor");
  shown.htmlFor = id;
  row.append(label, input, shown);

  var rows = node("div", "nr-softmax__rows");
  var bars = names.map(function (name, i) {
    var r = node("div", "nr-softmax__row");
    var k = node("span", "nr-softmax__key", name);
    var track = node("span", "nr-scale__track");
    var fill = node("span", "nr-scale__bar");
    track.appendChild(fill);
    var val = node("span", "nr-scale__value");
    val.setAttribute("data-nr-p", String(i));
    r.append(k, track, val);
    rows.appendChild(r);
    return { fill: fill, val: val };
  });
  var top = node("p", "nr-softmax__top");
  top.setAttribute("aria-live", "polite");
  var topKey = node("span", null, (L.top || "") + " "), topVal = node("strong", "nr-softmax__topvalue");
  topVal.setAttribute("data-nr-value", "top");
  top.append(topKey, topVal);
  var note = node("p", "nr-scale__note", (L.note || "") + (L.uniform || "") + " 1/" + s.length + " = " + fmt(1 / s.length, 4));
  el.append(row, rows, top, note);

  function update() {
    var c = scales[Number(input.value)], p = softmax(c), best = 0;
    p.forEach(function (v, i) { if (v > p[best]) best = i; });
    var cs = "c = " + (c < 10 ? fmt(c, 2) : fmt(c, 1));
    shown.value = cs;
    shown.textContent = cs;
    input.setAttribute("aria-valuetext", cs);
    el.setAttribute("data-nr-c", String(c));
    p.forEach(function (v, i) {
      bars[i].val.textContent = fmt(v, 3);
      bars[i].fill.style.width = (100 * v).toFixed(2) + "%";
    });
    topVal.textContent = names[best] + " = " + fmt(p[best], 4);
    topVal.setAttribute("data-nr-top", String(p[best]));
  }
  input.addEventListener("input", update);
  input.addEventListener("change", update);
  update();
});
