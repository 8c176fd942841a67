/* Zoomable figures: loaded by site.js on the first click on a figure (a link
 * a.nr-zoom around its two variants, made at build time by normsite/reading.py;
 * without JavaScript the link opens the light SVG). Opens GLightbox (from the pinned
 * mkdocs-glightbox package, served from this site) on the clicked figure, as large
 * as the screen allows, in the variant the theme shows (light or dark), with the
 * figure's caption; the page's other figures are one arrow key away.
 * Esc closes it and gives the focus back to the figure. */
(function () {
  var css = ["stylesheets/glightbox.min.css", "stylesheets/zoom.css"];
  var ready = null;

  function stylesheets(base) {
    return Promise.all(css.map(function (path) {
      var href = base + path;
      if (document.querySelector('link[href="' + href + '"]')) return null;
      return new Promise(function (ok) {
        var l = document.createElement("link");
        l.rel = "stylesheet"; l.href = href; l.onload = l.onerror = ok;
        document.head.appendChild(l);
      });
    }));
  }

  function text(el) {
    var d = document.createElement("div");
    d.textContent = el ? el.textContent.trim() : "";
    return d.innerHTML;
  }

  // The image the theme shows (a figure's link holds its light and its dark variant).
  function shown(a) {
    return [].filter.call(a.querySelectorAll("img"), function (i) { return i.offsetParent !== null; })[0] ||
      a.querySelector("img");
  }

  window.nrZoom = function (link) {
    ready = ready || Promise.all([stylesheets(new URL("../", nrSite.base).href), nrSite.load("glightbox.min.js")]);
    ready.then(function () {
      var all = [].filter.call(document.querySelectorAll("article a.nr-zoom"), function (a) {
        return a.offsetParent !== null;
      });
      if (all.indexOf(link) < 0) all = [link];
      var zh = !document.documentElement.lang.indexOf("zh");
      var box = GLightbox({
        elements: all.map(function (a) {
          var img = shown(a), fig = a.closest("figure");
          return {href: img.src, type: "image", alt: img.alt,
                  description: text(fig && fig.querySelector("figcaption"))};
        }),
        loop: false, zoomable: true, draggable: true, openEffect: "fade", closeEffect: "fade"
      });
      var labels = zh ? ["关闭", "上一张", "下一张"] : ["Close", "Previous figure", "Next figure"];
      box.on("open", function () {
        [".gclose", ".gprev", ".gnext"].forEach(function (sel, i) {
          var b = document.querySelector(".glightbox-container " + sel);
          if (b) b.setAttribute("aria-label", labels[i]);
        });
        var dlg = document.querySelector(".glightbox-container");
        if (dlg) { dlg.setAttribute("aria-modal", "true"); dlg.setAttribute("aria-label", shown(link).alt); }
        var close = document.querySelector(".glightbox-container .gclose");
        if (close) close.focus();  // the keyboard is in the dialog now; Esc or Enter closes it
      });
      box.on("close", function () {
        setTimeout(function () { box.destroy(); link.focus(); }, 0);
      });
      box.openAt(all.indexOf(link));
    });
  };
})();
