"""The interview page's multiple-choice quiz, loaded from ``quiz.yml`` and validated.

The questions live in a data file (``quiz.yml``, beside this module), not in Python.
This module loads and checks them (a question missing a language, a
duplicate id, an answer index out of range: ValueError naming the question)
and gives the quiz widget its data (:func:`quiz`, the dataset "quiz" of :mod:`.datasets`). Turning the
questions into page Markdown is the site layer's job (``normsite.quiz``).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from pydantic import field_validator, model_validator

from normref.bilingual import LANGS  # the one definition

from . import schema

__all__ = ["READS", "DATA", "LANGS", "LETTERS", "QUIZ", "QuizError", "load", "parse", "quiz"]

# The files this loader reads, relative to its folder (a literal: the cache reads it from the source).
READS = __cache_files__ = ("quiz.yml",)
DATA = Path(__file__).with_name("quiz.yml")
LETTERS = "ABCDEFGH"


class QuizError(ValueError):
    """The quiz data is invalid; the message names every bad question."""


class _Question(schema.Model):
    id: schema.Slug
    prompt: schema.Text
    options: list[schema.Text]
    answer: Any
    explain: schema.Text

    @field_validator("options", mode="before")
    @classmethod
    def _two_to_eight(cls, options):
        if not isinstance(options, list) or not 2 <= len(options) <= len(LETTERS):
            raise schema.problem(f"must be a list of 2 to {len(LETTERS)} options")
        return options

    @model_validator(mode="after")
    def _answer_is_an_option(self):
        a = self.answer
        if isinstance(a, bool) or not isinstance(a, int) or not 0 <= a < len(self.options):
            raise schema.problem(f"'answer' must be the index of one of its {len(self.options)} options, got {a!r}")
        return self


class _QuizFile(schema.Model):
    questions: list[Any]

    @field_validator("questions", mode="before")
    @classmethod
    def _non_empty(cls, questions):
        if not isinstance(questions, list) or not questions:
            raise schema.problem("must be a non-empty list")
        return questions


def parse(raw, source: str = "quiz data") -> list[dict]:
    """Validate already-parsed YAML and return the questions; raises QuizError listing every problem."""
    errors: list[str] = []
    top = schema.validate(_QuizFile, raw, source, {}, errors)
    if top is None:
        raise QuizError("\n".join(errors))
    out, seen = [], set()
    for _, q in schema.validate_entries(_Question, top.questions, schema.entry_name("quiz question"), errors,
                                        {"options": lambda k, _: f"option {LETTERS[k] if k < len(LETTERS) else k}"}):
        if q.id in seen:
            errors.append(f"quiz question {q.id!r}: duplicate id")
        seen.add(q.id)
        out.append(q.model_dump())
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
        return parse(schema.yaml_load(fh), source=str(path))


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


def quiz(lang):
    """The questions in one language: id, prompt, options, answer index, explanation."""
    lang = _lang(lang)
    return [{"id": q["id"], "prompt": q["prompt"][lang], "options": [o[lang] for o in q["options"]],
             "answer": q["answer"], "explain": q["explain"][lang]} for q in _default()]
