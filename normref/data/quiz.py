"""The interview page's multiple-choice quiz, loaded from ``quiz.yml`` and validated.

The questions live in a data file (``normref/data/quiz.yml``), not in Python.
This module loads and checks them (a question missing a language, a
duplicate id, an answer index out of range: ValueError naming the question)
and gives the quiz widget its data through ``@dataset("quiz")``. Turning the
questions into page Markdown is the site layer's job (``normsite.quiz``).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from . import dataset
from ..bilingual import bilingual_text

__all__ = ["DATA", "LANGS", "LETTERS", "QUIZ", "QuizError", "load", "parse", "quiz"]

DATA = Path(__file__).with_name("quiz.yml")
from ..bilingual import LANGS  # the one definition
LETTERS = "ABCDEFGH"
_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_KEYS = {"id", "prompt", "options", "answer", "explain"}


class QuizError(ValueError):
    """The quiz data is invalid; the message names every bad question."""


def parse(raw, source: str = "quiz data") -> list[dict]:
    """Validate already-parsed YAML and return the questions; raises QuizError listing every problem."""
    if not isinstance(raw, dict) or set(raw) != {"questions"}:
        raise QuizError(f"{source}: expected a mapping with one key, 'questions'")
    items = raw["questions"]
    if not isinstance(items, list) or not items:
        raise QuizError(f"{source}: 'questions' must be a non-empty list")
    errors: list[str] = []
    out, seen = [], set()
    for i, q in enumerate(items):
        if not isinstance(q, dict):
            errors.append(f"question #{i + 1}: expected a mapping, got {type(q).__name__}")
            continue
        qid = q.get("id")
        where = f"quiz question {qid!r}" if isinstance(qid, str) else f"quiz question #{i + 1}"
        if not isinstance(qid, str) or not _ID.match(qid):
            errors.append(f"{where}: 'id' must be lowercase letters/digits joined by hyphens, got {qid!r}")
        elif qid in seen:
            errors.append(f"{where}: duplicate id")
        seen.add(qid)
        extra = sorted(set(q) - _KEYS)
        if extra:
            errors.append(f"{where}: unknown key(s) {extra}")
        prompt = bilingual_text(errors, where, "prompt", q.get("prompt"))
        explain = bilingual_text(errors, where, "explain", q.get("explain"))
        raw_opts = q.get("options")
        if not isinstance(raw_opts, list) or len(raw_opts) < 2 or len(raw_opts) > len(LETTERS):
            errors.append(f"{where}: 'options' must be a list of 2 to {len(LETTERS)} options")
            raw_opts = []
        options = [bilingual_text(errors, f"{where}, option {LETTERS[k] if k < len(LETTERS) else k}", "option", o)
                   for k, o in enumerate(raw_opts)]
        answer = q.get("answer")
        if isinstance(answer, bool) or not isinstance(answer, int) or not 0 <= answer < max(len(options), 1):
            errors.append(f"{where}: 'answer' must be the index of one of its {len(options)} options, got {answer!r}")
        out.append({"id": qid, "prompt": prompt, "options": options, "answer": answer, "explain": explain})
    if errors:
        raise QuizError(f"{source}: {len(errors)} problem(s):\n  " + "\n  ".join(errors))
    return out


def load(path: str | Path = DATA) -> list[dict]:
    """Read and validate a quiz YAML file."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"quiz data not found: {path}")
    with path.open(encoding="utf-8") as fh:
        return parse(yaml.safe_load(fh), source=str(path))


@functools.lru_cache(maxsize=1)
def _default() -> tuple:
    return tuple(load(DATA))


def __getattr__(name):  # QUIZ, loaded on first use (importing the package stays cheap)
    if name == "QUIZ":
        return list(_default())
    raise AttributeError(name)


def _lang(lang: str) -> str:
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
    return lang


@dataset("quiz")
def quiz(lang):
    """The questions in one language: id, prompt, options, answer index, explanation."""
    lang = _lang(lang)
    return [{"id": q["id"], "prompt": q["prompt"][lang], "options": [o[lang] for o in q["options"]],
             "answer": q["answer"], "explain": q["explain"][lang]} for q in _default()]
