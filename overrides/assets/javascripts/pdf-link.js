/* Shows a PDF link only once `make pdf` has made the file. The build writes
 * print/pdf.json saying {"pdf": null}; tools/pdf.py rewrites it with the PDF's
 * address (normsite/printed.py), so a site built without PDFs (a local
 * `make build`) shows no link that would lead nowhere. Linked only from the home
 * page and the print edition. The page holds the link's words in a span (the
 * [data-nr-pdf] element itself, or its .nr-pdf__link): an <a> without an href
 * is an uncrawlable link to search engines (Lighthouse SEO), so the <a> is made
 * here, once there is an address. */
(function () {
  document.querySelectorAll("[data-nr-pdf]").forEach(function (el) {
    var at = new URL(el.getAttribute("data-nr-pdf"), location.href);
    fetch(at).then(function (r) { return r.ok ? r.json() : null; }).then(function (j) {
      if (!j || !j.pdf) return;
      var words = el.querySelector(".nr-pdf__link") || el, a = document.createElement("a");
      a.href = new URL(j.pdf, at).href;
      a.textContent = words.textContent;
      if (words === el) { el.textContent = ""; el.appendChild(a); } else words.replaceWith(a);
      el.hidden = false;
    }).catch(function () {});
  });
})();
