/* Search worker: Material's own, plus one rule, "a glossary term's exact name comes first".
 *
 * Material lets a site bring its own search worker (the "search" entry of the
 * page's __config, https://bit.ly/3igvtQv); hooks/reading.py points it here and
 * passes the name of Material's worker (?w=search.HASH.min.js), which this file
 * loads and runs unchanged. Material ranks with Lunr: OR-ed prefix terms, no
 * notion of an exact match, so a query like "RMS" can rank RMSNorm's entry
 * above the RMS entry, and "RMSNorm" can rank Pre-RMSNorm's above RMSNorm's.
 * The glossary headings carry every name and alias of their term, hidden, after
 * " · " (normsite/reading.py); when a query equals one of them (case, spaces
 * and Chinese word cuts ignored), that entry and its page go to the top.
 * Every other query is ranked by Material alone. */
(function () {
  var GLOSSARY = "glossary/#";  // the glossary page's sections (normref.glossary.GLOSSARY_PAGE)
  var SEP = " \u00b7 ";
  var names = {};  // folded name -> entry location
  var query = "";

  function fold(s) {
    return String(s).replace(/&amp;/g, "&").replace(/&lt;/g, "<").replace(/&gt;/g, ">")
      .replace(/[\s\u200b]+/g, "").toLowerCase();
  }

  function learn(docs) {
    names = {};
    (docs || []).forEach(function (d) {
      var at = d.location.indexOf(GLOSSARY);
      if (at !== 0 || d.title.indexOf(SEP) < 0) return;
      d.title.split(SEP).slice(1).forEach(function (n) { names[fold(n)] = d.location; });
    });
  }

  function promote(result) {
    var loc = names[fold(query)];
    if (!loc || !result || !result.items) return;
    var groups = result.items;
    for (var g = 0; g < groups.length; g++) {
      var i = groups[g].findIndex(function (d) { return d.location === loc; });
      if (i < 0) continue;
      var top = groups[0][0].score;
      var entry = groups[g].splice(i, 1)[0];
      entry.score = Math.max(entry.score, top) * 1.001;  // the best score: the UI keeps it unfolded
      groups[g].unshift(entry);
      groups.unshift(groups.splice(g, 1)[0]);
      return;
    }
  }

  var add = self.addEventListener.bind(self);
  self.addEventListener = function (type, fn, opts) {
    if (type !== "message") return add(type, fn, opts);
    return add(type, function (ev) {
      var m = ev.data || {};
      if (m.type === 0) learn(m.data && m.data.docs);  // SETUP
      if (m.type === 2) query = m.data;  // QUERY
      return fn(ev);
    }, opts);
  };
  var post = self.postMessage.bind(self);
  self.postMessage = function (m) {
    if (m && m.type === 3) promote(m.data);  // RESULT
    return post(m);
  };
  importScripts(new URL(self.location.href).searchParams.get("w"));
})();
