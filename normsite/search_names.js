/* normref: Material's search worker (below, unchanged) plus one rule: a query equal to a glossary
   name or alias puts that entry first. normsite/reading.py (search_worker) explains and builds this. */
(function () {
  var SEP = " \u00b7 ", names = {}, query = "", add = self.addEventListener.bind(self), post = self.postMessage.bind(self);
  function fold(s) {
    return String(s).replace(/&amp;/g, "&").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/[\s\u200b]+/g, "").toLowerCase();
  }
  self.addEventListener = function (type, fn, opts) {
    if (type !== "message") return add(type, fn, opts);
    return add(type, function (ev) {
      var m = ev.data || {};
      if (m.type === 0) {  // SETUP: glossary entries' titles end in " · name · alias …"
        names = {};
        ((m.data && m.data.docs) || []).forEach(function (d) {
          if (d.location.indexOf("glossary/#") === 0 && d.title.indexOf(SEP) > 0)
            d.title.split(SEP).slice(1).forEach(function (n) { names[fold(n)] = d.location; });
        });
      }
      if (m.type === 2) query = m.data;  // QUERY
      return fn(ev);
    }, opts);
  };
  self.postMessage = function (m) {
    var loc = m && m.type === 3 && m.data && names[fold(query)], g = loc ? m.data.items : [];  // RESULT
    var top = g.length ? g[0][0].score : 0;
    for (var i = 0; i < g.length; i++) {
      var j = g[i].findIndex(function (d) { return d.location === loc; });
      if (j < 0) continue;
      var e = g[i].splice(j, 1)[0];
      e.score = Math.max(e.score, top) * 1.001;  // the best: the UI shows it unfolded
      g[i].unshift(e);
      g.unshift(g.splice(i, 1)[0]);
      break;
    }
    return post(m);
  };
})();
