"""The interview quiz as page Markdown (the ``[[quiz]]`` directive).

The questions come from ``normsite.content.quiz`` (validated data); this module
only writes them into the page: each question in a ``div.nr-quiz``, its
options as a list, and the answer with its explanation in a collapsed
``??? question`` block, so the quiz works without JavaScript. The quiz widget
(``overrides/assets/javascripts/widgets/quiz.js``) reads the same questions
from the ``quiz`` dataset and replaces the static copies when it runs.
"""

from __future__ import annotations

import html

__all__ = ["render_markdown", "LABELS"]

LABELS = {"zh": {"show": "看答案"}, "en": {"show": "Show the answer"}}
LETTERS = "ABCDEFGH"


def render_markdown(lang: str, questions: list[dict] | None = None) -> str:
    """Markdown for the quiz in ``lang``; ``questions`` defaults to normref's quiz data in that language.

    Each question is a dict with ``id``, ``prompt``, ``options`` (strings),
    ``answer`` (index) and ``explain``, as ``normsite.content.quiz.quiz(lang)``
    returns them.
    """
    if lang not in LABELS:
        raise ValueError(f"lang must be one of {tuple(LABELS)}, got {lang!r}")
    if questions is None:
        from .content.quiz import quiz

        questions = quiz(lang)
    show = LABELS[lang]["show"]
    blocks = []
    for n, q in enumerate(questions, 1):
        if not 0 <= q["answer"] < len(q["options"]):
            raise ValueError(f"quiz question {q['id']!r}: answer {q['answer']!r} is not one of its options")
        opts = "\n".join(f'<li data-option="{i}"><span class="nr-quiz-letter">{LETTERS[i]}.</span> {html.escape(o)}</li>'
                         for i, o in enumerate(q["options"]))
        blocks.append(
            f'<div class="nr-quiz" id="quiz-{q["id"]}" data-quiz-id="{q["id"]}" markdown>\n\n'
            f"**{n}. {html.escape(q['prompt'], quote=False)}**\n\n"
            f'<ul class="nr-quiz-options">\n{opts}\n</ul>\n\n'
            f'??? question "{show}"\n'
            f"    **{LETTERS[q['answer']]}.** {html.escape(q['explain'], quote=False)}\n\n"
            "</div>"
        )
    return "\n\n".join(blocks)
