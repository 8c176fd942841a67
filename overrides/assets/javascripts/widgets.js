/* normref widgets: the small framework every interactive piece of the site uses.
 *
 * A page marks a widget with an element and embeds its data with the build's
 * [[data: NAME]] directive (a <template id="nr-data-NAME"> holding a
 * <script type="application/json">; the hook explains the template):
 *
 *   <div class="nr-widget" data-nr-widget="scale-playground" data-nr-data="scale_playground"
 *        data-label-factor="..." hidden></div>
 *
 * The build (hooks/normref_site.py) links this script, deferred, and
 * widgets.css from the body of pages that have such an element, and from no
 * other page. Material's instant navigation swaps the body and runs that
 * <script> again on every widget page it lands on: the first run sets
 * window.nrWidgets, a later run only scans the new page. On every page view
 * (Material's document$, so instant navigation included) it finds such
 * elements and mounts them. A widget's code lives in
 * assets/javascripts/widgets/NAME.js, is fetched from this site only on pages
 * that use it, and registers itself with nrWidgets.register(NAME, init).
 * init(el, ctx) builds the widget inside el; ctx has
 *   data    the parsed JSON of #nr-data-<data-nr-data>, or null
 *   labels  the element's data-label-* attributes ({factor: "..."}), so the
 *           page, not the script, says the words in its own language
 *   lang    "zh" or "en" (from <html lang>)
 *   fmt     fmt(v, digits): fixed digits and a real minus sign, like normref's
 *   uid     uid(suffix): an id unique on the page, for <label for>
 * The element carries `hidden` in the page, so without JavaScript (or if the
 * widget fails) readers see only the static figure next to it; a mounted
 * widget is unhidden. Written by hand: a library would outweigh it. */
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

  function labels(el) {
    var out = {};
    Object.keys(el.dataset).forEach(function (k) {
      if (k.indexOf("label") === 0 && k.length > 5) out[k.charAt(5).toLowerCase() + k.slice(6)] = el.dataset[k];
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

  function mount(el) {
    if (el.nrMounted) return;
    var name = el.getAttribute("data-nr-widget");
    if (!impls[name]) return request(name);
    el.nrMounted = true;
    try {
      impls[name](el, {
        data: data(el.getAttribute("data-nr-data")), labels: labels(el), lang: lang(), fmt: fmt,
        uid: function (suffix) { counter += 1; return "nr-" + name + "-" + counter + "-" + suffix; }
      });
      el.hidden = false;
    } catch (e) {
      el.hidden = true;
      console.error("normref widget " + name + ": " + e.message);
    }
  }

  function scan() {
    document.querySelectorAll("[data-nr-widget]").forEach(mount);
  }

  window.nrWidgets = {
    register: function (name, init) { impls[name] = init; scan(); },
    scan: scan, fmt: fmt, lang: lang
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
