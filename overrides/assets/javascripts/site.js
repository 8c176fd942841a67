/* The only script every page loads besides Material's own: two small fixes,
 * run on every page view, instant navigation included (document$). Widget
 * code is not here: the build links widgets.js only from pages with a widget.
 *
 * 1. Language switch that lands on the same page in the other language.
 *    Stock Material sends the switcher to the other language's home page (its
 *    links are the roots given in extra.alternate). Each link already points
 *    at the root of its language's site, relative to this build, so the same
 *    page is: other root + (this URL minus this language's root). Both
 *    languages have the same pages (a test checks it), so no fallback lookup
 *    is needed.
 * 2. Material wraps each table in a .md-typeset__scrollwrap at run time, and
 *    a wide one then scrolls sideways where a keyboard cannot reach it
 *    (WCAG 2.1.1, axe's scrollable-region-focusable). Let those take focus. */
(function () {
  function retarget() {
    var lang = document.documentElement.lang || "";
    var links = document.querySelectorAll("a.md-select__link[hreflang]");
    var own = null;
    links.forEach(function (a) {
      var l = a.getAttribute("hreflang");
      if (lang.indexOf(l) === 0) own = new URL(a.getAttribute("data-root") || a.href, location.href);
    });
    if (!own) return;
    var rest = location.pathname.indexOf(own.pathname) === 0 ? location.pathname.slice(own.pathname.length) : "";
    links.forEach(function (a) {
      if (!a.hasAttribute("data-root")) a.setAttribute("data-root", a.href);
      var root = new URL(a.getAttribute("data-root"), location.href);
      a.href = new URL(rest, root).href + location.hash;
      a.target = "_self";
    });
  }

  function focusableScrollers() {
    document.querySelectorAll(".md-typeset__scrollwrap:not([tabindex])").forEach(function (w) {
      if (w.scrollWidth > w.clientWidth) w.tabIndex = 0;
    });
  }

  function onView() {
    retarget();
    focusableScrollers();
  }

  if (typeof document$ !== "undefined") document$.subscribe(onView);
  else document.addEventListener("DOMContentLoaded", onView);
})();
