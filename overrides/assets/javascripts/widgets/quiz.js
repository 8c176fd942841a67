/* Interactive quiz (interview page). The page renders the questions
 * statically (div.nr-quiz: options as a list, the answer in a collapsed
 * <details>), which is what readers without JavaScript get. This widget builds
 * the same questions from the embedded quiz data (the one source of both) as
 * radio groups, then hides the static copies so the questions do not appear
 * twice. Radio buttons in a fieldset give keyboard use (Tab into a group,
 * arrows move the choice) and screen-reader semantics for free; since arrows
 * both move and choose, choosing never grades: the question's own "check"
 * button does. Its verdict (one short sentence) is the question's live region;
 * the explanation follows it, not live. Choosing another option afterwards
 * clears the verdict, so what is shown always grades what is chosen. */
nrWidgets.register("quiz", function (w, ctx) {
  "use strict";
  var L = ctx.labels, el = ctx.el, letters = "ABCDEFGH";
  var results = {}, updates = 0;

  var score = el("p", { class: "nr-quizw__score" });
  function tally() {
    var right = Object.keys(results).filter(function (k) { return results[k]; }).length;
    score.textContent = (L.score || "") + " " + right + " / " + ctx.data.length;
    w.setAttribute("data-nr-right", String(right));
    w.setAttribute("data-nr-updates", String(++updates));
  }

  if (L.title) w.appendChild(el("p", { class: "nr-widget__title" }, L.title));
  ctx.data.forEach(function (q, n) {
    var name = ctx.uid(q.id);
    var verdict = el("p", { class: "nr-quizw__verdict", "aria-live": "polite", "data-nr-verdict": "" });
    var explain = el("p", { class: "nr-quizw__explain", hidden: true }, q.explain);
    var radios = q.options.map(function (text, i) {
      return el("input", { type: "radio", name: name, value: i, onchange: clear });
    });

    function chosen() {
      for (var i = 0; i < radios.length; i++) if (radios[i].checked) return i;
      return -1;
    }
    function show(kind, text) {
      verdict.className = "nr-quizw__verdict" + (kind ? " nr-quizw__verdict--" + kind : "");
      verdict.setAttribute("data-nr-verdict", kind);
      verdict.textContent = text;
    }
    function clear() {
      if (!verdict.getAttribute("data-nr-verdict") && !verdict.textContent) return;
      show("", "");
      explain.hidden = true;
      delete results[q.id];
      tally();
    }
    function check() {
      var i = chosen();
      if (i < 0) { show("", L.choose || ""); explain.hidden = true; return; }
      var ok = i === q.answer;
      results[q.id] = ok;
      show(ok ? "right" : "wrong", ok ? "\u2713 " + L.right : "\u2717 " + L.wrong + " " + letters[q.answer] + ".");
      explain.hidden = false;
      tally();
    }

    w.appendChild(el("fieldset", { class: "nr-quizw__q", "data-quiz-id": q.id }, [
      el("legend", null, (n + 1) + ". " + q.prompt),
      q.options.map(function (text, i) {
        return el("label", { class: "nr-quizw__opt" }, [radios[i], letters[i] + ". " + text]);
      }),
      el("button", { type: "button", class: "nr-quizw__check", onclick: check }, L.check),
      verdict, explain
    ]));
  });
  tally();
  w.appendChild(score);
  // The static copies stay in the page (search, no-JS readers); hide them now the widget shows.
  document.querySelectorAll("div.nr-quiz").forEach(function (d) { d.hidden = true; });
});
