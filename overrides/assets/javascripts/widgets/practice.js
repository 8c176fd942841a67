/* Spaced-repetition drill and mock interview (practice page).
 *
 * The page renders every card statically (details.nr-card#card-ID: the question
 * in its summary, .nr-card__short, .nr-card__deep, .nr-card__follow and
 * .nr-card__links), math typeset and values filled in by the build. The widget
 * takes each card's content from there (clones of those nodes) and the schedule
 * from the embedded "cards" dataset: the topics, the cards in page order, the
 * Leitner intervals and the number of new cards a day.
 *
 * Drill: one card at a time, due cards first (oldest due first), then new ones.
 * When the day's new cards are used up and unseen cards are held back, the end of
 * the queue says so; for one topic it offers a button that queues that topic's
 * unseen cards now (until the topic changes).
 * Space reveals, 1-4 grade (again / hard / good / easy). Leitner boxes 1..5:
 * again -> box 1, back in this session; hard -> same box; good -> one box up;
 * easy -> two boxes up; the next review is intervals[box - 1] days later.
 * Mock interview: a random card; Space walks from the question to the
 * 30-second answer, each follow-up and its answer, and shows the deep answer last.
 *
 * Progress lives in localStorage under Material's scoped key (__md_set: the
 * scope both languages share, normsite.release.preference_scope), so the two
 * languages share one progress. It can be exported to a file, imported and
 * reset. Nothing is requested from any host.
 *
 * For tests: window.nrPracticeNow() (ms since the epoch) replaces the clock and
 * window.nrPracticeRandom() Math.random, when defined. */
nrWidgets.register("practice", function (w, ctx) {
  "use strict";
  var L = ctx.labels, el = ctx.el, fill = ctx.fill, D = ctx.data;
  var KEY = "nr.practice", FORMAT = "normref-practice";
  var GRADES = ["again", "hard", "good", "easy"];
  var topics = {}, cards = {}, order = [];
  D.topics.forEach(function (t) { topics[t.id] = t; });
  D.cards.forEach(function (c) {
    var node = document.getElementById("card-" + c.id);
    if (!node) throw new Error("card " + c.id + " is not on the page");
    cards[c.id] = { id: c.id, topic: c.topic, node: node };
    order.push(c.id);
  });

  function now() { return typeof window.nrPracticeNow === "function" ? window.nrPracticeNow() : Date.now(); }
  function random() { return typeof window.nrPracticeRandom === "function" ? window.nrPracticeRandom() : Math.random(); }
  function today() {
    var t = now();
    return Math.floor((t - new Date(t).getTimezoneOffset() * 60000) / 864e5);
  }

  // ------------------------------------------------------------ storage
  function blank() { return { format: FORMAT, v: 1, cards: {}, newDay: -1, newCount: 0 }; }
  function valid(s) { return s && s.format === FORMAT && s.v === 1 && s.cards && typeof s.cards === "object"; }
  function load() {
    var s = null;
    try {
      s = typeof __md_get === "function" ? __md_get(KEY) : JSON.parse(localStorage.getItem(KEY));
    } catch (e) { s = null; }
    return valid(s) ? s : blank();
  }
  function save() {
    if (typeof __md_set === "function") __md_set(KEY, state);
    else try { localStorage.setItem(KEY, JSON.stringify(state)); } catch (e) {}
  }
  var state = load();

  // ------------------------------------------------------------ scheduling
  function intervalOf(box) { return D.intervals[Math.max(1, Math.min(box, D.intervals.length)) - 1]; }
  function isDue(id, day) { var s = state.cards[id]; return !!s && s.box > 0 && s.due <= day; }
  function inTopic(id) { return !topic.value || cards[id].topic === topic.value; }
  function unseen() { return order.filter(function (id) { return inTopic(id) && !state.cards[id]; }); }
  function newLeft(day) { return Math.max(0, D.new_per_day - (state.newDay === day ? state.newCount : 0)); }

  function buildQueue() {
    var day = today();
    var due = order.filter(function (id) { return inTopic(id) && isDue(id, day); });
    due.sort(function (a, b) { return state.cards[a].due - state.cards[b].due || order.indexOf(a) - order.indexOf(b); });
    // "Study the new cards now" lifts the daily limit for the chosen topic.
    var fresh = unseen().slice(0, extra && topic.value ? Infinity : newLeft(day));
    return due.concat(fresh);
  }

  function grade(g) {
    var id = queue[pos], day = today(), s = state.cards[id], box = s ? s.box : 0;
    if (!s) {
      if (state.newDay !== day) { state.newDay = day; state.newCount = 0; }
      state.newCount += 1;
    }
    if (g === "again") box = 1;
    else if (g === "hard") box = Math.max(1, box);
    else box = Math.min(D.intervals.length, box + (g === "good" ? 1 : 2));
    var days = g === "again" ? 0 : intervalOf(box);
    state.cards[id] = { box: box, due: day + days, seen: ((s && s.seen) || 0) + 1, last: day };
    save();
    if (g === "again") queue.push(id);
    pos += 1;
    showDrill();
    say(g === "again" ? L.statusAgain : fill(days === 1 && L.statusGradedOne ? L.statusGradedOne : L.statusGraded,
                                             { grade: L[g], days: days }));
  }

  // ------------------------------------------------------------ the view
  var status = el("p", { class: "nr-widget__status nr-practice__status", role: "status", "aria-live": "polite" });
  var topic = el("select", { id: ctx.uid("topic"), onchange: function () {
    extra = false;
    restart();
    var held = heldBack();
    say(fill(L.statusTopic, { topic: topic.value ? topics[topic.value].title : L.all, due: queue.length }) +
        (held ? (zh ? "" : " ") + held : ""));
  } },
    [el("option", { value: "" }, L.all)].concat(D.topics.map(function (t) { return el("option", { value: t.id }, t.title); })));
  var card = el("div", { class: "nr-practice__card", tabindex: "0", "aria-label": L.title });
  var reveal = el("button", { type: "button", class: "nr-practice__reveal", onclick: function () { doReveal(); card.focus(); } }, L.reveal);
  var grades = el("div", { class: "nr-practice__grades", hidden: true }, GRADES.map(function (g, i) {
    return el("button", { type: "button", class: "nr-practice__grade nr-practice__grade--" + g, "data-nr-grade": g,
      onclick: function () { grade(g); card.focus(); } }, (i + 1) + " · " + L[g]);
  }));
  var next = el("button", { type: "button", class: "nr-practice__next", hidden: true, onclick: function () { mockStep(); card.focus(); } }, L.next);
  var mockBtn = el("button", { type: "button", class: "nr-practice__mode", onclick: function () { setMode(mode === "mock" ? "drill" : "mock"); card.focus(); } }, L.mock);
  var progress = el("table", { class: "nr-practice__progress" });
  var file = el("input", { type: "file", accept: "application/json,.json", class: "nr-practice__file", id: ctx.uid("import"), onchange: importFile });
  var resetBtn = el("button", { type: "button", class: "nr-practice__reset", onclick: reset, onblur: function () { disarm(); } }, L.reset);

  var mode = "drill", queue = [], pos = 0, revealed = false, updates = 0, extra = false;
  var zh = (document.documentElement.lang || "").indexOf("zh") === 0;
  var studyNew = el("button", { type: "button", class: "nr-practice__study-new", onclick: function () {
    extra = true;
    restart();
    announceCard();
    card.focus();
  } });

  // Why the queue is empty while the topic still has unseen cards: the day's new cards are used up.
  function heldBack() {
    var n = unseen().length;
    if (queue.length > pos || !n || newLeft(today()) > 0) return "";
    return fill(topic.value ? L.doneLimitTopic : L.doneLimit, { n: n, limit: D.new_per_day });
  }
  var mock = null;

  function say(text) {  // the one live sentence of a change
    status.textContent = text;
    w.setAttribute("data-nr-updates", String(++updates));
  }
  function part(id, cls) {
    var n = cards[id].node.querySelector(cls);
    return n ? n.cloneNode(true) : null;
  }
  function question(id) {
    var q = el("div", { class: "nr-practice__q" });
    cards[id].node.querySelector("summary").childNodes.forEach(function (n) { q.appendChild(n.cloneNode(true)); });
    return q;
  }
  function topicLine(id) { return el("p", { class: "nr-practice__topic" }, topics[cards[id].topic].title); }

  function showDrill() {
    revealed = false;
    card.textContent = "";
    grades.hidden = true;
    var id = queue[pos];
    w.setAttribute("data-nr-card", id || "");
    w.setAttribute("data-nr-revealed", "false");
    if (!id) {
      reveal.hidden = true;
      var held = heldBack();
      card.appendChild(el("p", { class: "nr-practice__done" }, held || L.done));
      if (held && topic.value) {
        studyNew.textContent = fill(L.studyNew, { n: unseen().length });
        card.appendChild(el("p", null, studyNew));
      }
      renderProgress();
      return;
    }
    reveal.hidden = false;
    card.appendChild(topicLine(id));
    card.appendChild(question(id));
    var answer = el("div", { class: "nr-practice__answer", hidden: true });
    [".nr-card__short", ".nr-card__deep"].forEach(function (c) { var n = part(id, c); if (n) answer.appendChild(n); });
    cards[id].node.querySelectorAll(".nr-card__follow").forEach(function (n) { answer.appendChild(n.cloneNode(true)); });
    var links = part(id, ".nr-card__links");
    if (links) answer.appendChild(links);
    card.appendChild(answer);
    renderProgress();
  }

  function announceCard() {
    var id = queue[pos];
    say(id ? fill(L.statusCard, { n: pos + 1, total: queue.length, topic: topics[cards[id].topic].title }) : L.statusDone);
  }

  function doReveal() {
    if (mode !== "drill" || revealed || !queue[pos]) return;
    revealed = true;
    card.querySelector(".nr-practice__answer").hidden = false;
    reveal.hidden = true;
    grades.hidden = false;
    w.setAttribute("data-nr-revealed", "true");
    say(L.statusRevealed);
  }

  // ------------------------------------------------------------ mock interview
  function mockStart() {
    var id = order[Math.min(order.length - 1, Math.floor(random() * order.length))];
    var steps = [question(id), part(id, ".nr-card__short")];
    cards[id].node.querySelectorAll(".nr-card__follow").forEach(function (f) {
      var q = f.cloneNode(true), a = q.querySelector(".nr-card__follow-answer");
      if (a) a.remove();
      steps.push(q);
      var ans = f.querySelector(".nr-card__follow-answer");
      if (ans) steps.push(ans.cloneNode(true));
    });
    steps.push(part(id, ".nr-card__deep"));
    mock = { id: id, steps: steps.filter(Boolean), shown: 0 };
    card.textContent = "";
    card.appendChild(topicLine(id));
    w.setAttribute("data-nr-card", id);
    mockStep();
  }
  function mockStep() {
    if (!mock || mock.shown >= mock.steps.length) return mockStart();
    var n = mock.steps[mock.shown];
    n.classList.add("nr-practice__step");
    card.appendChild(n);
    mock.shown += 1;
    w.setAttribute("data-nr-step", String(mock.shown));
    w.setAttribute("data-nr-steps", String(mock.steps.length));
    say(fill(L.statusMock, { topic: topics[cards[mock.id].topic].title, step: mock.shown, steps: mock.steps.length }));
  }

  function setMode(m) {
    mode = m;
    w.setAttribute("data-nr-mode", m);
    mockBtn.textContent = m === "mock" ? L.drill : L.mock;
    next.hidden = m !== "mock";
    reveal.hidden = m === "mock";
    grades.hidden = true;
    if (m === "mock") { mock = null; mockStart(); }
    else { restart(); announceCard(); }
  }

  // ------------------------------------------------------------ progress, export, import, reset
  function renderProgress() {
    var day = today();
    progress.textContent = "";
    progress.appendChild(el("caption", null, L.progress));
    progress.appendChild(el("tr", null, [L.topicCol, L.seenCol, L.dueCol, L.masteredCol].map(function (h) {
      return el("th", { scope: "col" }, h);
    })));
    D.topics.forEach(function (t) {
      var ids = order.filter(function (id) { return cards[id].topic === t.id; });
      var seen = ids.filter(function (id) { return state.cards[id]; }).length;
      var due = ids.filter(function (id) { return isDue(id, day); }).length;
      var mastered = ids.filter(function (id) { return state.cards[id] && state.cards[id].box >= D.intervals.length - 1; }).length;
      progress.appendChild(el("tr", { "data-nr-topic": t.id }, [
        el("th", { scope: "row" }, t.title), el("td", { "data-nr-seen": "" }, seen + " / " + ids.length),
        el("td", { "data-nr-due": "" }, String(due)), el("td", { "data-nr-mastered": "" }, String(mastered))]));
    });
  }

  function exportFile() {
    var blob = new Blob([JSON.stringify(state, null, 1)], { type: "application/json" });
    var a = el("a", { href: URL.createObjectURL(blob), download: "normref-practice-progress.json", hidden: true });
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 0);
    say(L.statusExported);
  }
  function importFile() {
    var f = file.files && file.files[0];
    if (!f) return;
    var r = new FileReader();
    r.onload = function () {
      var s = null;
      try { s = JSON.parse(String(r.result)); } catch (e) { s = null; }
      file.value = "";
      if (!valid(s)) { say(L.statusImportError); return; }
      var kept = {};
      Object.keys(s.cards).forEach(function (id) {
        var c = s.cards[id];
        if (cards[id] && c && Number.isFinite(c.box) && Number.isFinite(c.due)) kept[id] = c;
      });
      state = { format: FORMAT, v: 1, cards: kept, newDay: Number(s.newDay) || -1, newCount: Number(s.newCount) || 0 };
      save();
      if (mode === "drill") restart(); else renderProgress();
      say(fill(L.statusImported, { n: Object.keys(kept).length }));
    };
    r.readAsText(f);
  }
  function disarm() { resetBtn.removeAttribute("data-nr-armed"); resetBtn.textContent = L.reset; }
  function reset() {
    if (!resetBtn.hasAttribute("data-nr-armed")) {
      resetBtn.setAttribute("data-nr-armed", "");
      resetBtn.textContent = L.confirm;
      return;
    }
    disarm();
    state = blank();
    save();
    if (mode === "drill") restart(); else renderProgress();
    say(L.statusReset);
  }

  function restart() {
    queue = buildQueue();
    pos = 0;
    if (mode === "drill") showDrill(); else renderProgress();
  }

  // ------------------------------------------------------------ keyboard
  w.addEventListener("keydown", function (e) {
    var t = e.target, tag = t && t.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === " " || e.key === "Spacebar") {
      if (tag === "A" || t === studyNew) return;  // Space follows a link or presses "study the new cards now"
      e.preventDefault();
      if (mode === "mock") mockStep(); else doReveal();
      card.focus();
    } else if (mode === "drill" && revealed && /^[1-4]$/.test(e.key)) {
      e.preventDefault();
      grade(GRADES[Number(e.key) - 1]);
      card.focus();
    }
  });

  if (L.title) w.appendChild(el("p", { class: "nr-widget__title" }, L.title));
  w.appendChild(el("div", { class: "nr-practice__bar" }, [
    el("label", { for: topic.id }, L.topic), topic, mockBtn]));
  w.appendChild(card);
  w.appendChild(el("div", { class: "nr-practice__actions" }, [reveal, grades, next]));
  w.appendChild(status);
  w.appendChild(progress);
  w.appendChild(el("div", { class: "nr-practice__io" }, [
    el("button", { type: "button", class: "nr-practice__export", onclick: exportFile }, L.export),
    el("label", { for: file.id, class: "nr-practice__import" }, L.import), file, resetBtn]));
  w.setAttribute("data-nr-mode", "drill");
  restart();
});
