/* Glossary filter (glossary page): a search box that narrows the entries as
 * you type, matching the zh name, the en name and every alias (the embedded
 * glossary data, normsite.content.glossary's terms), and says how many are shown.
 * An entry is its <h3 id=TERM> and everything after it up to the next h2/h3,
 * as normsite.content.glossary.render_markdown writes it; a group heading is hidden
 * when none of its entries is shown, and so are their lines in the table of
 * contents (else Material's scroll spy, whose hidden headings all sit at the top,
 * marks the last entry current and scrolls the contents to it). A query that
 * matches nothing says so (the widget's data-label-none). Following a link to an
 * entry that the filter hides clears the filter first, so anchors always land. */
nrWidgets.register("glossary-filter", function (w, ctx) {
  "use strict";
  var L = ctx.labels, el = ctx.el;
  var updates = 0;

  // The table of contents' lines (either sidebar's) for an anchor (Material makes its links absolute).
  var toc = [].slice.call(document.querySelectorAll(".md-nav a.md-nav__link[href*='#']"));
  function tocItems(anchor) {
    return toc.filter(function (a) { return a.hash === "#" + anchor && a.pathname === location.pathname; })
              .map(function (a) { return a.closest("li"); });
  }

  function norm(s) { return String(s).normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim(); }

  // Each term's block of page elements, and its group heading.
  var entries = ctx.data.map(function (t) {
    var h = document.getElementById(t.id);
    if (!h) throw new Error("glossary entry #" + t.id + " is not on the page");
    var parts = [h], n = h.nextElementSibling;
    while (n && !/^H[23]$/.test(n.tagName) && !n.contains(w)) { parts.push(n); n = n.nextElementSibling; }
    var g = document.getElementById("group-" + t.group);
    if (g && !g.nrToc) g.nrToc = tocItems(g.id);
    return { id: t.id, forms: t.forms.map(norm), parts: parts.concat(tocItems(t.id)), group: g };
  });

  var id = ctx.uid("q");
  var input = el("input", { type: "search", id: id, autocomplete: "off", placeholder: L.placeholder || null, oninput: apply });
  // The count is the widget's one live region: one short sentence per change.
  var count = el("output", { class: "nr-gloss-filter__count", for: id, "aria-live": "polite" });
  w.appendChild(el("div", { class: "nr-gloss-filter" }, [el("label", { for: id }, L.label), input, count]));
  var none = el("p", { class: "nr-gloss-filter__none", hidden: true });
  w.appendChild(none);

  function apply() {
    var q = norm(input.value), shown = 0, groups = new Map();
    entries.forEach(function (e) {
      var on = !q || e.forms.some(function (f) { return f.indexOf(q) !== -1; });
      e.parts.forEach(function (p) { p.hidden = !on; });
      if (on) shown += 1;
      if (e.group) groups.set(e.group, (groups.get(e.group) || false) || on);
    });
    groups.forEach(function (on, g) { [g].concat(g.nrToc).forEach(function (p) { p.hidden = !on; }); });
    none.hidden = shown > 0;
    none.textContent = shown ? "" : ctx.fill(L.none, { q: input.value.trim() });
    if (shown < entries.length) {  // the contents start at the top again, not at a hidden line
      var sc = document.querySelector(".md-sidebar--secondary .md-sidebar__scrollwrap");
      if (sc) sc.scrollTop = 0;
    }
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
