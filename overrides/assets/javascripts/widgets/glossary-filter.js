/* Glossary filter (glossary page): a search box that narrows the entries as
 * you type, matching the zh name, the en name and every alias (the embedded
 * glossary data, normref.glossary's terms), and says how many are shown.
 * An entry is its <h3 id=TERM> and everything after it up to the next h2/h3,
 * as normref.glossary.render_markdown writes it; a group heading is hidden
 * when none of its entries is shown. Following a link to an entry that the
 * filter hides clears the filter first, so anchors always land. */
nrWidgets.register("glossary-filter", function (w, ctx) {
  "use strict";
  var L = ctx.labels, el = ctx.el;
  var updates = 0;

  function norm(s) { return String(s).normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim(); }

  // Each term's block of page elements, and its group heading.
  var entries = ctx.data.map(function (t) {
    var h = document.getElementById(t.id);
    if (!h) throw new Error("glossary entry #" + t.id + " is not on the page");
    var parts = [h], n = h.nextElementSibling;
    while (n && !/^H[23]$/.test(n.tagName) && !n.contains(w)) { parts.push(n); n = n.nextElementSibling; }
    var g = document.getElementById("group-" + t.group);
    return { id: t.id, forms: t.forms.map(norm), parts: parts, group: g };
  });

  var id = ctx.uid("q");
  var input = el("input", { type: "search", id: id, autocomplete: "off", placeholder: L.placeholder || null, oninput: apply });
  // The count is the widget's one live region: one short sentence per change.
  var count = el("output", { class: "nr-gloss-filter__count", for: id, "aria-live": "polite" });
  w.appendChild(el("div", { class: "nr-gloss-filter" }, [el("label", { for: id }, L.label), input, count]));

  function apply() {
    var q = norm(input.value), shown = 0, groups = new Map();
    entries.forEach(function (e) {
      var on = !q || e.forms.some(function (f) { return f.indexOf(q) !== -1; });
      e.parts.forEach(function (p) { p.hidden = !on; });
      if (on) shown += 1;
      if (e.group) groups.set(e.group, (groups.get(e.group) || false) || on);
    });
    groups.forEach(function (on, g) { g.hidden = !on; });
    count.value = ctx.fill(L.count, { n: shown, m: entries.length });
    w.setAttribute("data-nr-shown", String(shown));
    w.setAttribute("data-nr-total", String(entries.length));
    w.setAttribute("data-nr-updates", String(++updates));
  }
  apply();

  // An anchor to a hidden entry (a "see also" link, the address bar, a shared
  // link): clear the filter so the target is there to scroll to.
  function reveal(hash) {
    var tid = decodeURIComponent((hash || "").replace(/^#/, ""));
    var hit = entries.some(function (e) { return e.id === tid && e.parts[0].hidden; });
    if (hit) { input.value = ""; apply(); }
    return hit;
  }
  function onClick(ev) {
    if (!w.isConnected) return document.removeEventListener("click", onClick, true);
    var a = ev.target.closest && ev.target.closest("a[href*='#']");
    if (a && a.pathname === location.pathname) reveal(a.hash);
  }
  function onHash() {
    if (!w.isConnected) return window.removeEventListener("hashchange", onHash);
    if (reveal(location.hash)) { var t = document.getElementById(location.hash.slice(1)); if (t) t.scrollIntoView(); }
  }
  document.addEventListener("click", onClick, true);
  window.addEventListener("hashchange", onHash);
});
