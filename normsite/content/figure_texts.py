"""The schema of normref's figure texts (``normref/figures/figures.yml``), on pydantic: the site validates the
file whole at build and test time.

normref reads the file with plain checks of its own (:func:`normref.figures.parse_texts`), enough to fail
clearly, so that the reader's normref needs no validation library; this is the full schema, with every
problem named by the file, the entry and the field (:mod:`.schema`). :func:`check` runs it, then normref's
own checks that tie the texts to the registered figures (every figure has an entry, every placeholder
resolves).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import BeforeValidator, field_validator

from normref.labels import placeholders

from . import schema

__all__ = ["READS", "parse", "load", "check"]

# The file this schema reads: normref's, outside this folder (normref.figures.TEXTS).
READS = ("../../normref/figures/figures.yml",)


def _error() -> type[ValueError]:
    """normref.figures.FigureTextError (imported when a problem is reported: normref.figures is the prepare
    pass's, not the MkDocs process's)."""
    from normref.figures import FigureTextError

    return FigureTextError


_FigText = schema.Paragraphs  # {zh, en}, only stripped (the YAML folds the lines)


class _FigureEntry(schema.Model):
    alt: _FigText
    caption: _FigText


def _label_table(value):
    """{English label: Chinese label} of one figure module; both non-empty, with the same {{fields}}."""
    if not isinstance(value, dict):
        raise schema.problem(f"must map English labels to Chinese ones, got {type(value).__name__}")
    for en, zh in value.items():
        if not (isinstance(en, str) and en.strip() and isinstance(zh, str) and zh.strip()):
            raise schema.problem(f"maps {en!r} to {zh!r}; expected non-empty English and Chinese text")
        if placeholders(en) != placeholders(zh):
            raise schema.problem(f"label {en!r} has the fields {sorted(placeholders(en))} but its Chinese "
                                 f"{zh!r} has {sorted(placeholders(zh))}")
    return value


class _TextsFile(schema.Model):
    phrases: dict[str, _FigText] | None
    labels: dict[str, Annotated[dict[str, str], BeforeValidator(_label_table)]] | None
    figures: dict[str, Any]

    @field_validator("figures", mode="before")
    @classmethod
    def _figures_mapping(cls, value):
        if not isinstance(value, dict):
            raise schema.problem(f"must be a mapping {{figure name: {{alt, caption}}}}, got {type(value).__name__}")
        return value


def parse(raw, source: str = "figures.yml") -> dict:
    """Validate the parsed YAML: {"phrases": {name: {lang: text}}, "labels": {module: {en: zh}},
    "figures": {name: {kind: {lang: text}}}}; normref.figures.FigureTextError listing every problem."""
    errors: list[str] = []
    top = schema.validate(_TextsFile, raw, source, {}, errors)
    figs = {}
    if top is not None:
        figs = {str(k): e.model_dump() for k, e in schema.validate_entries(
            _FigureEntry, top.figures, lambda k, _: f"{source}: figure {k!r}", errors)}
    if errors:
        raise _error()("\n".join(errors))
    return {"phrases": dict(top.phrases or {}), "labels": dict(top.labels or {}), "figures": figs}


def load(path: str | Path | None = None) -> dict:
    """figures.yml (normref's, or ``path``), validated by the schema."""
    from normref import figures

    path = Path(path or figures.TEXTS)
    with path.open(encoding="utf-8") as fh:
        return parse(schema.yaml_load(fh), path.name)


def check(path: str | Path | None = None) -> None:
    """The schema, then normref's own checks against the registered figures (normref.figures.check_texts)."""
    from normref import figures

    load(path)
    figures.check_texts(Path(path) if path else None)
