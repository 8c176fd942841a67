/* Interactive quiz (interview page). The page renders the questions
 * statically (div.nr-quiz: options as a list, the answer in a collapsed
 * <details>), which is what readers without JavaScript get. This widget builds
 * the same questions from the embedded quiz data (normref.data.quiz, the one
 * source of both) as radio groups: choosing an option checks it at once and
 * shows the explanation in a live region, then the static copies are hidden so
 * the questions do not appear twice. Radio buttons in a fieldset give keyboard
 * use (Tab into a group, arrows choose) and screen-reader semantics for free. */
nrWidgets.register("quiz", function (el, ctx) {
  "use strict";
  var L = ctx.labels, letters = "ABCDEFGH";

  function node(tag, cls, text) {
    var n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined) n.textContent = text;
    return n;
  }

  if (L.title) el.appendChild(node("p", "nr-widget__title", L.title));
  var score = node("p", "nr-quizw__score");
  var results = {};

  function tally() {
    var ids = Object.keys(results), right = ids.filter(function (k) { return results[k]; }).length;
    score.textContent = (L.score || "") + " " + right + " / " + ctx.data.length;
    el.setAttribute("data-nr-right", String(right));
  }

  ctx.data.forEach(function (q, n) {
    var fs = node("fieldset", "nr-quizw__q");
    fs.setAttribute("data-quiz-id", q.id);
    fs.appendChild(node("legend", null, (n + 1) + ". " + q.prompt));
    var name = ctx.uid(q.id);
    var verdict = node("p", "nr-quizw__verdict");
    verdict.setAttribute("aria-live", "polite");
    verdict.setAttribute("data-nr-verdict", "");
    q.options.forEach(function (text, i) {
      var lab = node("label", "nr-quizw__opt");
      var input = node("input");
      input.type = "radio"; input.name = name; input.value = String(i);
      lab.append(input, document.createTextNode(letters[i] + ". " + text));
      input.addEventListener("change", function () {
        if (!input.checked) return;
        var ok = i === q.answer;
        results[q.id] = ok;
        verdict.className = "nr-quizw__verdict nr-quizw__verdict--" + (ok ? "right" : "wrong");
        verdict.setAttribute("data-nr-verdict", ok ? "right" : "wrong");
        verdict.textContent = (ok ? "\u2713 " + L.right : "\u2717 " + L.wrong + " " + letters[q.answer] + ".") + " " + q.explain;
        tally();
      });
      fs.appendChild(lab);
    });
    fs.appendChild(verdict);
    el.appendChild(fs);
  });
  tally();
  el.appendChild(score);
  // The static copies stay in the page (search, no-JS readers); hide them now the widget shows.
  document.querySelectorAll("div.nr-quiz").forEach(function (d) { d.hidden = true; });
});
