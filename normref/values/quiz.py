"""The interview page's quiz (normref.data.quiz), as one block of Markdown: the static page and
the quiz widget share one source."""

from __future__ import annotations

from . import value


@value("quiz.markdown")
def _quiz_markdown(lang):
    from ..data.quiz import render_markdown

    return render_markdown(lang)
