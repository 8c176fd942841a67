/* normref widgets: the small framework every interactive piece of the site uses.
 *
 * A page marks a widget with an element and embeds its data with the build's
 * [[data: NAME]] directive (a <template id="nr-data-NAME"> holding a
 * <script type="application/json">; normsite/assets.py explains the template):
 *
 *   <div class="nr-widget" data-nr-widget="scale-playground" data-nr-data="scale_playground"
 *        data-label-factor="..." hidden></div>
 *
 * The build (normsite/assets.py) links this script, deferred, and
 * widgets.css from the body of pages that have such an element, and from no
 * other page. Material's instant navigation swaps the body and runs that
 * <script> again on every widget page it lands on: the first run sets
 * window.nrWidgets, a later run only scans the new page. On every page view
 * (Material's document$, so instant navigation included) it finds such
 * elements and mounts them. A widget's code lives in
 * assets/javascripts/widgets/NAME.js, is fetched from this site only on pages
 * that use it, and registers itself with nrWidgets.register(NAME, init).
 * init(w, ctx) builds the widget inside its element w; ctx has
 *   data    the parsed JSON of #nr-data-<data-nr-data>, or null
 *   labels  the element's data-label-* attributes ({factor: "..."}), so the
 *           page, not the script, says the words in its own language
 *   lang    "zh" or "en" (from <html lang>)
 *   fmt     fmt(v, digits): fixed digits and a real minus sign, like normref's
 *   uid     uid(suffix): an id unique on the page, for <label for>
 *   el      el(tag, attrs, children): the one element helper (also nrWidgets.el)
 *   fill    fill(template, {n: 3}): a label's "{n}" placeholders filled in
 * The element carries `hidden` in the page, so without JavaScript (or if the
 * widget fails) readers see only the static figure next to it; a mounted
 * widget is unhidden. Written by hand: a library would outweigh it.
 *
 * House rules for a widget: class names of its own (nr-NAME__part; the
 * loader's nr-widget__* are shared); a slider listens to `input` only (it
 * fires on every step, keyboard and pointer alike; `change` would run each
 * update twice); and one live region, announcing one short sentence per change
 * (nr-widget__status, visually hidden where the widget shows the numbers),
 * never a table or a row of bars. */
(function () {
  "use strict";
  if (window.nrWidgets) return window.nrWidgets.scan();
  var here = (document.currentScript && document.currentScript.src) || location.href;
  var impls = {};
  var requested = {};
  var counter = 0;

  function lang() {
    return (document.documentElement.lang || "").indexOf("zh") === 0 ? "zh" : "en";
  }

  function fmt(v, digits) {
    var s = Number(v).toFixed(digits);
    if (Number(s) === 0) s = s.replace(/^-/, "");
    return s.replace("-", "\u2212");
  }

  var SVG = "http://www.w3.org/2000/svg";

  // el("input", {type: "range", id: id, oninput: update}, [children])
  // el("svg:circle", {cx: 3, class: "nr-layers__dot"})
  // attrs: on<event> functions become listeners; null, undefined and false are
  // left out, true is an empty attribute; everything else is setAttribute.
  // children: a node, a string or number (text), or an array of them.
  function el(tag, attrs, children) {
    var svg = tag.indexOf("svg:") === 0;
    var n = svg ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      var v = attrs[k];
      if (typeof v === "function" && k.indexOf("on") === 0) n.addEventListener(k.slice(2), v);
      else if (v === true) n.setAttribute(k, "");
      else if (v !== null && v !== undefined && v !== false) n.setAttribute(k, String(v));
    });
    (function add(c) {
      if (c === null || c === undefined || c === false) return;
      if (Array.isArray(c)) c.forEach(add);
      else n.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
    })(children);
    return n;
  }

  function fill(template, values) {
    return String(template || "").replace(/\{(\w+)\}/g, function (m, k) {
      return Object.prototype.hasOwnProperty.call(values, k) ? String(values[k]) : m;
    });
  }

  function labels(w) {
    var out = {};
    Object.keys(w.dataset).forEach(function (k) {
      if (k.indexOf("label") === 0 && k.length > 5) out[k.charAt(5).toLowerCase() + k.slice(6)] = w.dataset[k];
    });
    return out;
  }

  function data(name) {
    if (!name) return null;
    var node = document.getElementById("nr-data-" + name);
    var json = node && (node.content ? node.content.querySelector("script") : node);
    if (!json) throw new Error("no embedded data #nr-data-" + name);
    return JSON.parse(json.textContent);
  }

  function request(name) {
    if (requested[name] || !/^[a-z0-9-]+$/.test(name)) return;
    requested[name] = true;
    var s = document.createElement("script");
    s.src = new URL("widgets/" + name + ".js", here).href;
    document.head.appendChild(s);
  }

  function mount(w) {
    if (w.nrMounted) return;
    var name = w.getAttribute("data-nr-widget");
    if (!impls[name]) return request(name);
    w.nrMounted = true;
    try {
      impls[name](w, {
        data: data(w.getAttribute("data-nr-data")), labels: labels(w), lang: lang(), fmt: fmt,
        uid: function (suffix) { counter += 1; return "nr-" + name + "-" + counter + "-" + suffix; },
        el: el, fill: fill
      });
      w.hidden = false;
    } catch (e) {
      w.hidden = true;
      console.error("normref widget " + name + ": " + e.message);
    }
  }

  function scan() {
    document.querySelectorAll("[data-nr-widget]").forEach(mount);
  }

  window.nrWidgets = {
    register: function (name, init) { impls[name] = init; scan(); },
    scan: scan, fmt: fmt, lang: lang, el: el, fill: fill
  };
  // Deferred, this first runs after Material's bundle, so document$ exists;
  // it replays the current page to a new subscriber.
  function start() {
    if (typeof document$ !== "undefined") document$.subscribe(scan);
    else scan();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
