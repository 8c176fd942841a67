/* In every page's weight: keep it short. CONTRIBUTING.md, "Reading aids", explains it. */
(function () {
  var d = document, base = d.currentScript.src.replace(/[^/]*$/, ""), got = {}, K = "nr.pair";
  function load(n) {
    return got[n] || (got[n] = new Promise(function (ok, no) {
      var s = d.createElement("script");
      s.src = base + n; s.onload = ok; s.onerror = no; d.head.appendChild(s);
    }));
  }
  function langs() {
    var o = {};
    d.querySelectorAll("a.md-select__link[hreflang]").forEach(function (a) {
      var l = a.getAttribute("hreflang");
      a.dataset.root = a.dataset.root || a.href;
      o[d.documentElement.lang.indexOf(l) ? "other" : "own"] = {a: a, lang: l, root: new URL(a.dataset.root, location.href)};
    });
    return o;
  }
  function here(t) {
    var l = langs(), p = location.pathname, r = l.own && l.own.root.pathname;
    return l[t] ? new URL(r && !p.indexOf(r) ? p.slice(r.length) : "", l[t].root).href : null;
  }
  function aim(a) {
    a.href = here(langs().own.a === a ? "own" : "other") + location.hash;
    a.target = "_self";
  }
  function pair(on) {
    d.querySelector(".nr-pair-toggle").setAttribute("aria-pressed", on);
    return load("pair.js").then(function () { nrPair(on); });
  }
  ["pointerdown", "focusin", "click"].forEach(function (t) {
    d.addEventListener(t, function (e) {
      var a = e.target.closest && e.target.closest("a.md-select__link[hreflang], a.nr-zoom");
      if (a && !a.classList.contains("nr-zoom")) aim(a);
      else if (a && t == "click" && !(e.button || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey)) {
        e.preventDefault();
        load("zoom.js").then(function () { nrZoom(a); });
      }
    }, true);
  });
  window.nrSite = {base: base, load: load, here: here, langs: langs};
  document$.subscribe(function () {
    d.querySelectorAll("a.md-select__link[hreflang]").forEach(aim);
    d.querySelectorAll(".md-typeset__scrollwrap:not([tabindex])").forEach(function (w) {
      if (w.scrollWidth > w.clientWidth) w.tabIndex = 0;
    });
    var s = d.querySelector(".md-header__option .md-select"), b = d.querySelector(".nr-pair-toggle"), on;
    if (s && !b) {
      s = s.parentNode.insertAdjacentElement("afterend", d.createElement("div"));
      s.className = "md-header__option";
      s.innerHTML = '<button type="button" class="md-header__button md-icon nr-pair-toggle" aria-pressed="false"><svg ' +
        'viewBox="0 0 24 24" aria-hidden="true"><path d="M3 4h8v16H3zm2 2v12h4V6zm8-2h8v16h-8zm2 2v12h4V6z"/></svg></button>';
      b = s.firstChild;
      b.title = d.documentElement.lang.indexOf("zh") ? "Read side by side with the Chinese" : "中英对照阅读";
      b.setAttribute("aria-label", b.title);
      b.onclick = function () {
        var v = b.getAttribute("aria-pressed") != "true";
        try { localStorage.setItem(K, v ? 1 : 0); } catch (e) {}
        pair(v);
      };
    }
    // Under a figure shown at well under its own size (a phone), its words say "tap to zoom".
    var st = d.getElementById("nr-strings"), hint = st && JSON.parse(st.textContent).zoomHint;
    d.querySelectorAll("article figure.nr-figure a.nr-zoom img").forEach(function (i) {
      function wide() {
        var a = i.parentNode, f = a.parentNode;
        if (hint && i.naturalWidth > 2.4 * f.clientWidth && !f.querySelector(".nr-zoom-hint"))
          a.insertAdjacentHTML("afterend", '<p class="nr-zoom-hint"></p>'), a.nextSibling.textContent = hint;
      }
      i.complete ? wide() : i.addEventListener("load", wide, {once: true});
    });
    try { on = localStorage.getItem(K) == "1"; } catch (e) {}
    if (on && b) pair(true);
  });
})();
