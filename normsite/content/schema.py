"""One validation layer for the project's YAML data files, on pydantic 2.

The glossary (``glossary.yml``), the quiz (``quiz.yml``) and the claim ledger
(``claims.yml``), all in this folder, and normref's figure texts
(``normref/figures/figures.yml``, :mod:`.figure_texts`) each describe their entries as :class:`Model`
subclasses built from the field types here: bilingual text, ids, lists of
strings. Only rules that relate one entry to another (a duplicate id, a see-also
target) stay hand-written in each loader.

Every problem becomes one line naming the file, the entry and the field, and
saying what was expected: ``glossary.yml: term 'rms': 'short' has no 'en' text
(both languages are required)``. :func:`validate_entries` validates a list of
entries one by one, so a loader reports every bad entry at once and can still
check the good ones against each other. pydantic is the site's dependency, not normref's: normref reads
its own YAML with plain checks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError, model_validator

from normref._yaml import yaml_load  # noqa: F401 (the loaders' reader, re-exported)
from normref.bilingual import LANGS

__all__ = ["ID", "Model", "Problem", "problem", "Text", "Paragraphs", "Sentence", "Slug", "Strings", "validate",
           "validate_entries", "entry_name", "describe", "report", "yaml_load"]

ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


class Problem(ValueError):
    """What a field's own check found; the report shows its message as written."""


def problem(message: str) -> Problem:
    """The error a validator raises: ``raise problem("must be ..., got 3")``."""
    return Problem(message)


class Model(BaseModel):
    """An entry of a data file: a mapping with exactly the declared keys.

    A key left out is validated as ``None`` (so each field's own check says what it expected),
    and unknown keys are reported with the keys that are allowed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _declared_keys(cls, data: Any) -> Any:
        keys = list(cls.model_fields)
        if not isinstance(data, dict):
            raise problem(f"expected a mapping with the keys {', '.join(keys)}, got {type(data).__name__}")
        extra = sorted(str(k) for k in set(data) - set(keys))
        if extra:
            raise problem(f"unknown key(s) {extra}; expected only {', '.join(keys)}")
        return {**{k: None for k in keys}, **data}


# ---------------------------------------------------------------- field types


def _bilingual(mode: str) -> Callable[[Any], dict[str, str]]:
    def check(value: Any) -> dict[str, str]:
        if not isinstance(value, dict):
            raise problem(f"must be a mapping with 'zh' and 'en' text, got {type(value).__name__}")
        extra = sorted(str(k) for k in set(value) - set(LANGS))
        if extra:
            raise problem(f"has unknown language(s) {extra}; expected only 'zh' and 'en'")
        out = {}
        for lang in LANGS:
            text = value.get(lang)
            if not isinstance(text, str) or not text.strip():
                raise problem(f"has no {lang!r} text (both languages are required)")
            if mode == "sentence" and "\n\n" in text.strip():
                raise problem(f"in {lang!r} must be one paragraph")
            out[lang] = text.strip() if mode == "paragraphs" else " ".join(text.split())
        return out

    return check


# {zh, en}, both non-empty; whitespace runs become one space.
Text = Annotated[dict[str, str], BeforeValidator(_bilingual("text"))]
# {zh, en} Markdown with paragraphs: only stripped.
Paragraphs = Annotated[dict[str, str], BeforeValidator(_bilingual("paragraphs"))]
# {zh, en}, one paragraph each.
Sentence = Annotated[dict[str, str], BeforeValidator(_bilingual("sentence"))]


def _slug(value: Any) -> str:
    if not isinstance(value, str) or not ID.match(value):
        raise problem(f"must be lowercase letters/digits joined by hyphens (it is the anchor), got {value!r}")
    return value


# An id: lowercase letters and digits joined by hyphens (ids become page anchors).
Slug = Annotated[str, BeforeValidator(_slug)]


def _strings(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise problem(f"must be a list of non-empty strings, got {value!r}")
    return tuple(" ".join(v.split()) for v in value)


# An optional list of non-empty strings (whitespace runs joined), as a tuple.
Strings = Annotated[tuple[str, ...], BeforeValidator(_strings)]


# ---------------------------------------------------------------- reporting


def describe(err: dict, raw: Any, where: str, names: dict[str, Callable[[int, Any], str]]) -> str:
    """One pydantic error as a sentence: ``WHERE: 'FIELD' WHAT``.

    ``where`` names the entry; ``loc`` is the field path inside it. An item of a list field
    named in ``names`` (``{"options": lambda i, item: f"option {'AB'[i]}"}``) extends ``where``
    (``question 'x', option A``) and is then the field itself (``'option'``)."""
    node, field = raw, []
    for step in err["loc"]:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            node = None
        if isinstance(step, int) and field and field[-1] in names:
            key = field.pop()
            where = f"{where}, {names[key](step, node)}"
            field = [key.rstrip("s")]
            continue
        field.append(step)
    mine = (err.get("ctx") or {}).get("error")
    msg = str(mine) if isinstance(mine, Problem) else f"{err['msg'][0].lower()}{err['msg'][1:]}, got {err.get('input')!r}"
    if not field:
        return f"{where}: {msg}"
    name = repr(field[0]) + "".join(f"[{p!r}]" for p in field[1:])
    return f"{where}: {name} {msg}"


def report(exc: ValidationError, raw: Any, where: str, names: dict) -> list[str]:
    return [describe(e, raw, where, names) for e in exc.errors()]


def validate(model: type[BaseModel], raw: Any, where: str, names: dict, errors: list[str]):
    """``model`` validated from ``raw``, or None with its problems appended to ``errors``."""
    try:
        return model.model_validate(raw)
    except ValidationError as e:
        errors.extend(report(e, raw, where, names))
        return None


def validate_entries(model: type[BaseModel], items: Iterable, name: Callable[[Any, Any], str], errors: list[str],
                     names: dict | None = None) -> list[tuple[Any, Any]]:
    """[(key, model)] for the entries of a list (key: index) or mapping (key: its key) that are valid;
    the problems of the others go to ``errors``, each naming its entry (``name(key, item)``)."""
    pairs = items.items() if isinstance(items, dict) else enumerate(items)
    out = []
    for key, item in pairs:
        m = validate(model, item, name(key, item), names or {}, errors)
        if m is not None:
            out.append((key, m))
    return out


def entry_name(kind: str) -> Callable[[Any, Any], str]:
    """``kind 'ID'`` for an entry with a string id, else ``kind #N``."""
    def name(key, item):
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            return f"{kind} {item['id']!r}"
        return f"{kind} #{key + 1}" if isinstance(key, int) else f"{kind} {key!r}"
    return name
