/* The one script every page loads besides Material's, run on every page view
 * (document$: instant navigation included). It counts against every page's
 * weight budget, so the reading aids' code is fetched only when a reader uses them.
 * 1. The language switch lands on the same page and section in the other language:
 *    other root + (this URL minus this language's root) + the current #hash,
 *    recomputed when the link is used (the hash changes as the reader scrolls).
 * 2. A table that scrolls sideways takes keyboard focus (WCAG 2.1.1).
 * 3. Figures zoom: the first click on one loads zoom.js (GLightbox).
 * 4. Side by side (对照阅读): a header button; pair.js is loaded when it is on,
 *    and on every page view after (the choice is kept in localStorage). */
(function () {
  var base = document.currentScript.src.replace(/[^/]*$/, ""), got = {}, KEY = "nr.pair";

  function load(name) {
    return got[name] || (got[name] = new Promise(function (ok, no) {
      var s = document.createElement("script");
      s.src = base + name; s.onload = ok; s.onerror = no;
      document.head.appendChild(s);
    }));
  }

  function langs() {
    var own = document.documentElement.lang, out = {};
    document.querySelectorAll("a.md-select__link[hreflang]").forEach(function (a) {
      if (!a.dataset.root) a.dataset.root = a.href;
      var l = a.getAttribute("hreflang");
      out[own.indexOf(l) ? "other" : "own"] = {a: a, lang: l, root: new URL(a.dataset.root, location.href)};
    });
    return out;
  }

  // This page in language `to` ("own" or "other"), without the hash.
  function here(to) {
    var l = langs(), p = location.pathname, r = l.own && l.own.root.pathname;
    if (!l[to]) return null;
    return new URL(r && p.indexOf(r) === 0 ? p.slice(r.length) : "", l[to].root).href;
  }

  function aim(a) {
    var l = langs(), t = l.own && l.own.a === a ? "own" : "other";
    a.href = here(t) + location.hash;
    a.target = "_self";
  }

  function pairOn() {
    try { return localStorage.getItem(KEY) === "1"; } catch (e) { return false; }
  }

  function pair(on) {
    var b = document.querySelector(".nr-pair-toggle");
    if (b) b.setAttribute("aria-pressed", on);
    return load("pair.js").then(function () { nrPair(on); });
  }

  function button() {
    var sel = document.querySelector(".md-header__option .md-select");
    if (!sel || document.querySelector(".nr-pair-toggle")) return;
    var zh = !document.documentElement.lang.indexOf("zh"), d = document.createElement("div");
    d.className = "md-header__option";
    d.innerHTML = '<button type="button" class="md-header__button md-icon nr-pair-toggle" aria-pressed="false">' +
      '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M3 4h8v16H3zm2 2v12h4V6zm8-2h8v16h-8zm2 2v12h4V6z"/></svg></button>';
    var b = d.firstChild;
    b.title = zh ? "中英对照阅读" : "Read side by side with the Chinese";
    b.setAttribute("aria-label", b.title);
    b.onclick = function () {
      var on = b.getAttribute("aria-pressed") !== "true";
      try { localStorage.setItem(KEY, on ? "1" : "0"); } catch (e) {}
      pair(on);
    };
    sel.parentNode.after(d);
  }

  document.addEventListener("click", function (e) {
    var a = e.target.closest && e.target.closest("a.nr-zoom");
    if (!a || e.button || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    load("zoom.js").then(function () { nrZoom(a); });
  }, true);
  ["pointerdown", "focusin", "click"].forEach(function (t) {
    document.addEventListener(t, function (e) {
      var a = e.target.closest && e.target.closest("a.md-select__link[hreflang]");
      if (a) aim(a);
    }, true);
  });

  window.nrSite = {base: base, load: load, here: here, langs: langs};

  function onView() {
    langs();
    document.querySelectorAll("a.md-select__link[hreflang]").forEach(aim);
    document.querySelectorAll(".md-typeset__scrollwrap:not([tabindex])").forEach(function (w) {
      if (w.scrollWidth > w.clientWidth) w.tabIndex = 0;
    });
    button();
    if (pairOn()) pair(true);
  }

  if (typeof document$ !== "undefined") document$.subscribe(onView);
  else document.addEventListener("DOMContentLoaded", onView);
})();
