/* Shows a PDF link only once `make pdf` has made the file. The build writes
 * print/pdf.json saying {"pdf": null}; tools/pdf.py rewrites it with the PDF's
 * address (normsite/printed.py), so a site built without PDFs (a local
 * `make build`) shows no link that would lead nowhere. Linked only from the home
 * page and the print edition. */
(function () {
  document.querySelectorAll("[data-nr-pdf]").forEach(function (el) {
    var at = new URL(el.getAttribute("data-nr-pdf"), location.href);
    fetch(at).then(function (r) { return r.ok ? r.json() : null; }).then(function (j) {
      if (!j || !j.pdf) return;
      (el.matches("a") ? el : el.querySelector("a")).href = new URL(j.pdf, at).href;
      el.hidden = false;
    }).catch(function () {});
  });
})();
