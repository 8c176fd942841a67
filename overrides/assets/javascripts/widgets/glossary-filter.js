/* Glossary filter (glossary page): a search box that narrows the entries as
 * you type, matching the zh name, the en name and every alias (the embedded
 * glossary data, normref.glossary's terms), and says how many are shown.
 * An entry is its <h3 id=TERM> and everything after it up to the next h2/h3,
 * as normref.glossary.render_markdown writes it; a group heading is hidden
 * when none of its entries is shown. Following a link to an entry that the
 * filter hides clears the filter first, so anchors always land. */
nrWidgets.register("glossary-filter", function (el, ctx) {
  "use strict";
  var L = ctx.labels;

  function node(tag, cls, text) {
    var n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined) n.textContent = text;
    return n;
  }
  function norm(s) { return String(s).normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim(); }

  // Each term's block of page elements, and its group heading.
  var entries = ctx.data.map(function (t) {
    var h = document.getElementById(t.id);
    if (!h) throw new Error("glossary entry #" + t.id + " is not on the page");
    var parts = [h], n = h.nextElementSibling;
    while (n && !/^H[23]$/.test(n.tagName) && !n.contains(el)) { parts.push(n); n = n.nextElementSibling; }
    var g = document.getElementById("group-" + t.group);
    return { id: t.id, forms: t.forms.map(norm), parts: parts, group: g };
  });

  var id = ctx.uid("q");
  var row = node("div", "nr-gloss-filter");
  var label = node("label", null, L.label);
  label.htmlFor = id;
  var input = node("input");
  input.type = "search"; input.id = id; input.autocomplete = "off";
  if (L.placeholder) input.placeholder = L.placeholder;
  var count = node("output", "nr-gloss-filter__count");
  count.htmlFor = id;
  count.setAttribute("aria-live", "polite");
  row.append(label, input, count);
  el.appendChild(row);

  function apply() {
    var q = norm(input.value), shown = 0, groups = new Map();
    entries.forEach(function (e) {
      var on = !q || e.forms.some(function (f) { return f.indexOf(q) !== -1; });
      e.parts.forEach(function (p) { p.hidden = !on; });
      if (on) shown += 1;
      if (e.group) groups.set(e.group, (groups.get(e.group) || false) || on);
    });
    groups.forEach(function (on, g) { g.hidden = !on; });
    count.textContent = L.count.replace("{n}", shown).replace("{m}", entries.length);
    el.setAttribute("data-nr-shown", String(shown));
    el.setAttribute("data-nr-total", String(entries.length));
  }
  input.addEventListener("input", apply);
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
    if (!el.isConnected) return document.removeEventListener("click", onClick, true);
    var a = ev.target.closest && ev.target.closest("a[href*='#']");
    if (a && a.pathname === location.pathname) reveal(a.hash);
  }
  function onHash() {
    if (!el.isConnected) return window.removeEventListener("hashchange", onHash);
    if (reveal(location.hash)) { var t = document.getElementById(location.hash.slice(1)); if (t) t.scrollIntoView(); }
  }
  document.addEventListener("click", onClick, true);
  window.addEventListener("hashchange", onHash);
});
