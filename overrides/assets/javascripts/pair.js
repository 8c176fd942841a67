/* Side-by-side reading (对照阅读): loaded by site.js only once a reader turns it on.
 *
 * The two editions share their section ids (a test keeps them equal), so the
 * other language's text can sit next to each section: this page's article and
 * the other language's copy of it (fetched from this site, no other host) are
 * both cut at their headings, and each section becomes one row, this language's
 * text and the other's side by side on a wide screen, one under the other on a
 * phone (pair.css). The page's own elements are moved into the rows, not copied,
 * so the table of contents, search highlights, math, widgets and copy buttons
 * keep working; the other language's copy loses its ids (no duplicates), its
 * scripts and its widgets (their static figures stay), and its links and images
 * are made absolute, so they lead to that language's pages and pictures.
 * Glossary links in both columns get the term pair as their tooltip
 * (残差流 / residual stream — and the short definition), from assets/nr-terms.json.
 * nrPair(false) puts the page back as it was. */
(function () {
  var pages = {}, terms = null, run = 0;
  var HEAD = /^H[1-6]$/;
  var css = document.createElement("link");
  css.rel = "stylesheet"; css.href = new URL("../stylesheets/pair.css", nrSite.base).href;
  document.head.appendChild(css);

  function get(url, as) {
    return fetch(url).then(function (r) {
      if (!r.ok) throw new Error(url + ": HTTP " + r.status);
      return as === "json" ? r.json() : r.text();
    });
  }

  function other(url) {
    return pages[url] || (pages[url] = get(url).then(function (html) {
      var doc = new DOMParser().parseFromString(html, "text/html");
      var art = doc.querySelector("article.md-content__inner");
      if (!art) throw new Error(url + ": no article");
      return art;
    }));
  }

  function pairs() {
    return terms || (terms = get(new URL("../nr-terms.json", nrSite.base).href, "json").catch(function () { return {}; }));
  }

  // The element whose children are the sections: the article, or (a notebook) the
  // deepest element that holds every heading with an id.
  function container(art) {
    var hs = art.querySelectorAll("h1[id],h2[id],h3[id],h4[id],h5[id],h6[id]");
    var box = hs.length ? hs[0].parentNode : art;
    while (box !== art && ![].every.call(hs, function (h) { return box.contains(h); })) box = box.parentNode;
    return box;
  }

  function headingOf(node) {
    if (node.nodeType !== 1) return null;
    if (HEAD.test(node.tagName) && node.id) return node;
    return node.querySelector("h1[id],h2[id],h3[id],h4[id],h5[id],h6[id]");
  }

  // [{id, nodes}] in order; what comes before the first heading joins the first section.
  function split(box) {
    var out = [], lead = [];
    [].slice.call(box.childNodes).forEach(function (n) {
      var h = headingOf(n);
      if (h) { out.push({id: h.id, nodes: lead.concat([n])}); lead = []; }
      else if (out.length) out[out.length - 1].nodes.push(n);
      else lead.push(n);
    });
    if (!out.length) out.push({id: "", nodes: lead});
    return out;
  }

  function tipText(a, names) {
    var id = decodeURIComponent((a.hash || "").slice(1)), n = names[id];
    var short = a.getAttribute("data-nr-title") || a.getAttribute("title") || "";
    return n ? n.zh + " / " + n.en + (short ? " — " + short : "") : short;
  }

  // The other language's article, made safe to sit in this page.
  function adopt(art, url, names) {
    var c = document.importNode(art, true);
    c.querySelectorAll("script, template, link, style, .headerlink, .md-content__button, [data-nr-widget], " +
                       'a[id*="__codelineno"]')  // empty line-number anchors: only targets, and ids go
      .forEach(function (e) { e.remove(); });
    c.querySelectorAll("[href]").forEach(function (e) { e.setAttribute("href", new URL(e.getAttribute("href"), url).href); });
    c.querySelectorAll("[src]").forEach(function (e) { e.setAttribute("src", new URL(e.getAttribute("src"), url).href); });
    c.querySelectorAll("a.nr-term").forEach(function (a) {
      a.setAttribute("data-nr-tip", tipText(a, names));
      a.removeAttribute("title");
    });
    c.querySelectorAll("table").forEach(function (t) {
      if (t.parentNode.classList.contains("md-typeset__table")) return;
      var wrap = document.createElement("div"), inner = document.createElement("div");
      wrap.className = "md-typeset__scrollwrap"; inner.className = "md-typeset__table";
      t.replaceWith(wrap); wrap.appendChild(inner); inner.appendChild(t);
    });
    return c;
  }

  function strip(nodes) {
    nodes.forEach(function (n) {
      if (n.nodeType !== 1) return;
      [n].concat([].slice.call(n.querySelectorAll("[id],[for],[aria-labelledby],[aria-describedby],[aria-controls]")))
        .forEach(function (e) {
          if (e.id) { e.setAttribute("data-nr-id", e.id); e.removeAttribute("id"); }
          ["for", "aria-labelledby", "aria-describedby", "aria-controls"].forEach(function (k) { e.removeAttribute(k); });
        });
    });
  }

  function focusable(root) {
    root.querySelectorAll(".md-typeset__scrollwrap, pre > code, .nr-math, .highlight-ipynb").forEach(function (el) {
      if (el.scrollWidth > el.clientWidth + 1 && !el.hasAttribute("tabindex")) {
        el.tabIndex = 0; el.setAttribute("data-nr-pair-tab", "");
      }
    });
  }

  function build(art, theirs, otherLang, url, names) {
    var box = container(art), mine = split(box);
    var obox = container(theirs), their = split(obox);
    var byId = {}, rows = [];
    mine.forEach(function (s, i) { if (s.id) byId[s.id] = i; });
    var shared = their.some(function (s) { return s.id in byId; });
    var ordinal = !shared && their.length === mine.length;  // notebooks: ids from their own headings' text
    var last = 0;
    their.forEach(function (s, j) {
      var i = ordinal ? j : (s.id in byId ? byId[s.id] : last);
      (rows[i] = rows[i] || []).push(s);
      last = i;
    });
    mine.forEach(function (s, i) {
      var row = document.createElement("div"), own = document.createElement("div"), oth = document.createElement("div");
      row.className = "nr-pair"; row.setAttribute("data-nr-section", s.id);
      own.className = "nr-pair__own";
      own.setAttribute("data-nr-label", otherLang === "zh" ? "English" : "中文");
      oth.className = "nr-pair__other"; oth.lang = otherLang;
      oth.setAttribute("data-nr-label", otherLang === "zh" ? "中文" : "English");
      box.insertBefore(row, s.nodes[0]);
      s.nodes.forEach(function (n) { own.appendChild(n); });
      (rows[i] || []).forEach(function (t) {
        strip(t.nodes);
        t.nodes.forEach(function (n) { oth.appendChild(n); });
      });
      row.appendChild(own); row.appendChild(oth);
    });
    art.querySelectorAll(".nr-pair__own a.nr-term").forEach(function (a) {
      if (!a.hasAttribute("data-nr-title")) a.setAttribute("data-nr-title", a.getAttribute("title") || "");
      a.setAttribute("title", tipText(a, names));
    });
    document.body.classList.add("nr-pair-on");
    focusable(art);
    document.fonts.ready.then(function () { focusable(art); });  // KaTeX's fonts widen formulas
    // A table can still widen later (an image or a late font in a cell): whenever a table box in the pair
    // changes size, look again, so a region that starts to scroll is reachable by keyboard.
    if (window.ResizeObserver) {
      var ro = new ResizeObserver(function () { focusable(art); });
      art.querySelectorAll(".nr-pair .md-typeset__scrollwrap, .nr-pair .md-typeset__table").forEach(function (el) {
        ro.observe(el);
      });
      art.nrPairObserver = ro;
    }
  }

  function undo(art) {
    if (art.nrPairObserver) { art.nrPairObserver.disconnect(); art.nrPairObserver = null; }
    art.querySelectorAll(".nr-pair").forEach(function (row) {
      var own = row.querySelector(".nr-pair__own");
      while (own && own.firstChild) row.parentNode.insertBefore(own.firstChild, row);
      row.remove();
    });
    art.querySelectorAll("a.nr-term[data-nr-title]").forEach(function (a) {
      a.setAttribute("title", a.getAttribute("data-nr-title"));
      a.removeAttribute("data-nr-title");
    });
    art.querySelectorAll("[data-nr-pair-tab]").forEach(function (e) { e.removeAttribute("tabindex"); e.removeAttribute("data-nr-pair-tab"); });
    var note = art.querySelector(".nr-pair-note");
    if (note) note.remove();
    document.body.classList.remove("nr-pair-on");
    hide();
  }

  // A tooltip for the other column's glossary links, in Material's tooltip style
  // (Material mounts its own only on the content it found when the page loaded).
  var tip = null, host = null;
  function show(a) {
    hide();
    host = a;
    tip = document.createElement("div");
    tip.className = "md-tooltip2 md-tooltip2--bottom"; tip.id = "nr-pair-tip"; tip.setAttribute("role", "tooltip");
    var inner = document.createElement("div");
    inner.className = "md-tooltip2__inner md-typeset"; inner.textContent = a.getAttribute("data-nr-tip");
    tip.appendChild(inner);
    document.body.appendChild(tip);
    var r = a.getBoundingClientRect();
    [["--md-tooltip-host-x", r.left + scrollX], ["--md-tooltip-host-y", r.top + scrollY], ["--md-tooltip-x", r.width / 2],
     ["--md-tooltip-y", 8 + r.height], ["--md-tooltip-width", inner.getBoundingClientRect().width], ["--md-tooltip-tail", 0]]
      .forEach(function (v) { tip.style.setProperty(v[0], v[1] + "px"); });
    a.setAttribute("aria-describedby", tip.id);
    requestAnimationFrame(function () { if (tip) tip.classList.add("md-tooltip2--active"); });
  }
  function hide() {
    if (host) host.removeAttribute("aria-describedby");
    if (tip) tip.remove();
    tip = host = null;
  }
  function target(e) {
    return e.target.closest && e.target.closest(".nr-pair__other a[data-nr-tip]");
  }
  ["mouseover", "focusin"].forEach(function (t) {
    document.addEventListener(t, function (e) { var a = target(e); if (a && a !== host) show(a); });
  });
  ["mouseout", "focusout"].forEach(function (t) {
    document.addEventListener(t, function (e) { var a = target(e); if (a && a === host && !a.contains(e.relatedTarget)) hide(); });
  });
  document.addEventListener("keydown", function (e) { if (e.key === "Escape") hide(); });
  addEventListener("resize", function () {
    var art = document.querySelector("article.md-content__inner");
    if (art && art.querySelector(".nr-pair")) focusable(art);
  });

  // Keep the reader's place while the rows come and go: the #section the address names,
  // if it is at the top of the screen (a link, the table of contents or the language
  // switch brought the reader there), else the first of the page's own elements that
  // starts below the header, stays where it was (Chromium's scroll anchoring gives up
  // when the anchor itself moves).
  function keep(art, change) {
    var head = document.querySelector(".md-header"), min = head ? head.getBoundingClientRect().bottom : 0;
    var t = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
    var own = t && art.contains(t) && Math.abs(t.getBoundingClientRect().top - min) < innerHeight / 3 ? t :
      [].filter.call(art.querySelectorAll("h1,h2,h3,h4,h5,h6,p,li,figure,pre,table,.nr-math"), function (e) {
        return !e.closest(".nr-pair__other") && e.getBoundingClientRect().top >= min;
      })[0];
    var top = own && own.getBoundingClientRect().top;
    change();
    if (own && own.isConnected) scrollBy(0, own.getBoundingClientRect().top - top);
  }

  window.nrPair = function (on) {
    var art = document.querySelector("article.md-content__inner");
    var mine = ++run;
    if (!art) return Promise.resolve();
    if (art.querySelector(".nr-pair")) keep(art, function () { undo(art); });
    if (!on) return Promise.resolve();
    var l = nrSite.langs(), url = nrSite.here("other");
    // Only pages that have a counterpart (they name it in an hreflang link; 404.html does not).
    if (!l.other || !url || !document.querySelector('link[hreflang="' + l.other.lang + '"]')) return Promise.resolve();
    art.setAttribute("aria-busy", "true");
    return Promise.all([other(url), pairs()]).then(function (got) {
      if (mine !== run || !art.isConnected) return;
      keep(art, function () { build(art, adopt(got[0], url, got[1]), l.other.lang, url, got[1]); });
    }).catch(function (err) {
      if (mine !== run) return;
      var p = document.createElement("p");
      p.className = "nr-pair-note"; p.setAttribute("role", "status");
      p.textContent = (l.own.lang === "zh" ? "无法载入英文版：" : "Could not load the Chinese text: ") + err.message;
      art.insertBefore(p, art.firstChild);
    }).then(function () { art.removeAttribute("aria-busy"); });
  };
})();
