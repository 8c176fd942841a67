"""Short texts that normref's code puts on a page (table headers, row labels, a unit, "diverged"):
English in the code, Chinese in ``labels.yml`` beside this file.

A module writes ``t = labels(__name__)`` and then ``t(lang, "English text")``; in Chinese, the text is
``labels.yml``'s entry ``{module: {English: Chinese}}``, the module named relative to normref
(``values.placement``, ``experiments.placement``). ``{{field}}`` or ``{{field:spec}}`` in a text is
filled from the call's keyword arguments, in both languages. The figures keep theirs in
``figures/figures.yml`` in the same shape (:func:`normref.figures.labels`).

A result that uses these texts keys its cache entry on :func:`labels_of` its modules' import closure
(normsite's directives and normref.figures' SVGs do), so editing a Chinese text recomputes exactly
what shows it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from pathlib import Path

from .bilingual import LANGS

__all__ = ["FILE", "LabelError", "labels", "label", "labels_of", "data_files_of", "key_inputs", "texts", "check",
           "placeholders", "fill", "PLACEHOLDER"]

FILE = Path(__file__).with_name("labels.yml")
PLACEHOLDER = re.compile(r"\{\{(\w+)(?::([^{}]*))?\}\}")  # {{field}} or {{field:spec}}, here and in figures.yml


class LabelError(ValueError):
    """labels.yml is malformed, lacks a text the code asks for, or a call lacks a field."""


def placeholders(text: str) -> set[str]:
    return {m.group(1) for m in PLACEHOLDER.finditer(text)}


def fill(text: str, fields: Mapping, where: str, error: type[Exception] = None) -> str:
    """``text`` with each ``{{field}}``/``{{field:spec}}`` replaced by ``format(fields[field], spec)``; a field
    the call does not give is an ``error`` (LabelError by default) that starts with ``where``."""

    def one(m):
        if m.group(1) not in fields:
            raise (error or LabelError)(f"{where} uses {{{{{m.group(1)}}}}}, which the call does not give "
                                        f"(fields: {', '.join(sorted(fields)) or 'none'})")
        return format(fields[m.group(1)], m.group(2) or "")

    return PLACEHOLDER.sub(one, text)


def _short(module: str) -> str:
    if not isinstance(module, str) or not module.startswith("normref."):
        raise ValueError(f"module must be a module of normref such as 'normref.values.placement', got {module!r}")
    return module.removeprefix("normref.")


def parse(raw, source: str = FILE.name) -> dict[str, dict[str, str]]:
    """Validate the parsed YAML: ``{module: {English: Chinese}}``, both texts non-empty, with the same fields."""
    if not isinstance(raw, dict):
        raise LabelError(f"{source}: must map modules to {{English: Chinese}}, got {type(raw).__name__}")
    errors = []
    for module, table in raw.items():
        if not isinstance(module, str) or not re.fullmatch(r"[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)*", module):
            errors.append(f"{source}: {module!r}: expected a module of normref such as 'values.placement'")
            continue
        if not isinstance(table, dict) or not table:
            errors.append(f"{source}: {module}: must map English texts to Chinese ones, got {table!r}")
            continue
        for en, zh in table.items():
            if not (isinstance(en, str) and en.strip() and isinstance(zh, str) and zh.strip()):
                errors.append(f"{source}: {module}: maps {en!r} to {zh!r}; expected non-empty English and Chinese text")
            elif placeholders(en) != placeholders(zh):
                errors.append(f"{source}: {module}: {en!r} has the fields {sorted(placeholders(en))} but its "
                              f"Chinese {zh!r} has {sorted(placeholders(zh))}")
    if errors:
        raise LabelError("\n".join(errors))
    return {m: dict(t) for m, t in raw.items()}


def texts(path: Path | None = None) -> dict[str, dict[str, str]]:
    """labels.yml (or ``path``), loaded and validated once (see :func:`parse`)."""
    return _load(Path(path or FILE))


@functools.lru_cache(maxsize=None)
def _load(path: Path) -> dict:
    from ._yaml import yaml_load

    with path.open(encoding="utf-8") as fh:
        return parse(yaml_load(fh), path.name)


def label(module: str, lang: str, en: str, fields: Mapping) -> str:
    """The text ``en`` of ``module`` in ``lang`` (its Chinese from labels.yml), ``{{field}}`` filled from ``fields``."""
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
    short = _short(module)
    text = en
    if lang == "zh":
        table = texts().get(short, {})
        if en not in table:
            raise LabelError(f"{FILE.name}: no Chinese for {en!r} of {short.replace('.', '/')}.py; "
                             f"add it under {short}:")
        text = table[en]
    return fill(text, fields, f"{short.replace('.', '/')}.py: {en!r}")


def labels(module: str):
    """The text function of ``module``: ``t(lang, "English", **fields)``."""
    _short(module)

    def t(lang: str, en: str, /, **fields) -> str:
        return label(module, lang, en, fields)

    return t


def labels_of(modules) -> dict[str, dict[str, str]]:
    """{module: its texts in labels.yml} for the modules among ``modules`` that have some (a cache key's input)."""
    table = texts()
    return {m: table[m.removeprefix("normref.")] for m in sorted(modules)
            if m.startswith("normref.") and m.removeprefix("normref.") in table}


def data_files_of(modules) -> dict[str, str]:
    """{module: SHA-256 of its data file} for the modules among ``modules`` that read a YAML file of their own
    name beside them (experiments/smollm2_batch.yml): a cache key's input, as :func:`labels_of` is."""
    out = {}
    for m in sorted(modules):
        if m.startswith("normref.") and m != __name__ and (f := _data_file(m)) is not None:
            st = f.stat()
            out[m] = _sha256(f, st.st_mtime_ns, st.st_size)
    return out


# A prepare pass asks for every cached result's key: thousands of calls over the same few dozen modules,
# which stat'ed each module's would-be YAML file every time (1.1 s of a 1.5 s warm pass). Which modules
# have one is a fact of the source tree (a build re-imports normref, so a new file is seen next build);
# a file's digest is kept under its mtime and size, so an edit still changes the key at once.
@functools.lru_cache(maxsize=None)
def _data_file(module: str) -> Path | None:
    f = Path(__file__).parent.joinpath(*module.split(".")[1:]).with_suffix(".yml")
    return f if f.is_file() else None


@functools.lru_cache(maxsize=None)
def _sha256(path: Path, mtime_ns: int, size: int) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def key_inputs(modules) -> dict[str, str]:
    """What a cached result adds to its key for the texts that ``modules`` (its code's import closure,
    normref.cache.closure) read from data files: their labels.yml entries and their own YAML files. Empty
    when they read none, so that a result these files cannot change keeps its key."""
    out = {}
    if found := labels_of(modules):
        out["labels in normref/labels.yml"] = repr(found)
    if found := data_files_of(modules):
        out["data files beside the modules"] = repr(found)
    return out


def check(path: Path | None = None) -> None:
    """Every module of labels.yml exists, and each of its English texts is a string in that module's code
    (an entry the code no longer uses is an error, naming it)."""
    import ast

    root = Path(__file__).parent
    errors = []
    for module, table in texts(path).items():
        f = root.joinpath(*module.split(".")).with_suffix(".py")
        if not f.is_file():
            errors.append(f"{FILE.name}: {module}: no module normref/{f.relative_to(root).as_posix()}")
            continue
        strings = {n.value for n in ast.walk(ast.parse(f.read_text(encoding="utf-8")))
                   if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        errors += [f"{FILE.name}: {module}: {en!r} is not a string in {f.relative_to(root).as_posix()}"
                   for en in table if en not in strings]
    if errors:
        raise LabelError("\n".join(errors))
