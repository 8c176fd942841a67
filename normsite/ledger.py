"""The claim ledger: load, validate, check and render ``normsite/content/claims.yml``.

The ledger page (``docs/<lang>/claims.md``, directive ``[[ledger]]``) lists the
claims a reader meets in lessons, folklore and on this site. Each claim has a
verdict, one sentence saying why (in both languages), a link to the section or
figure on the site that decides it, and the name of the test that keeps it
true. The data is validated up front, and two checks tie it to the project:

- :func:`check_evidence`: every evidence link names a page that exists in each
  language's docs folder and an anchor that exists on that page (a heading's
  ``{ #id }``, a figure's ``fig-NAME``, or an ``id="…"`` in the page's HTML);
- :func:`check_tests`: every named test (``tests/FILE.py::NAME`` or
  ``tests/FILE.py::Class::NAME``) is defined in that file.

Either failure raises :class:`LedgerError` naming the claim, and the build
fails with it. This module knows nothing of MkDocs; the hook only calls
:func:`expand`.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from typing import Annotated, Any

from pydantic import BeforeValidator, field_validator, model_validator

from .content import schema
from .content.grammar import names

__all__ = [
    "DATA", "LANGS", "VERDICTS", "EVIDENCE_KINDS", "CLAIM_SCALES", "DIRECTIVE", "Claim", "Group", "Ledger",
    "LedgerError", "Scale", "verdict_problems",
    "load", "parse", "anchors", "check_evidence", "check_tests", "check_values", "render_markdown", "expand",
]

# The file this loader reads, relative to its folder (a literal: the cache reads it from the source). The claims
# live with the rest of the site's content (normsite/content).
READS = __cache_files__ = ("content/claims.yml",)
DATA = Path(__file__).with_name("content") / "claims.yml"
from normref.bilingual import LANGS  # the one definition
DIRECTIVE = "[[ledger]]"

# The verdicts, in the order the legend lists them; the id is also the badge's CSS modifier.
VERDICTS: dict[str, dict[str, str]] = {
    "holds": {"zh": "成立", "en": "holds"},
    "condition": {"zh": "有条件成立", "en": "holds with a condition"},
    "corrected": {"zh": "已更正", "en": "corrected"},
    "model-dependent": {"zh": "因模型而异", "en": "depends on the model"},
    "not-reproduced": {"zh": "本站未能复现", "en": "not reproduced here"},
    "not-checkable": {"zh": "本站无法核查", "en": "not checkable here"},
}
_VERDICT_HELP = {
    "holds": {"zh": "说法成立，本站的实测或核对支持它。", "en": "The claim is right, and a measurement or check on this site supports it."},
    "condition": {"zh": "说法只在某个条件下成立，条件写在理由里。", "en": "The claim is right only under a condition, stated in the reason."},
    "corrected": {"zh": "说法不对（有的曾出现在本站），页面已改成正确的说法。", "en": "The claim is wrong (some appeared on this site before); the pages now say what is right."},
    "model-dependent": {"zh": "说法在一个模型里成立、在另一个里不成立，或只在其中一个里核查过；理由写明是哪个模型。", "en": "Whether it holds depends on the model, or it was checked in one model only; the reason names which."},
    "not-reproduced": {"zh": "论文报告了它，但本站的小规模实验没能复现。", "en": "A paper reports it, but this site's small experiment did not reproduce it."},
    "not-checkable": {"zh": "本站没有能判断它的数据或算力。", "en": "This site has neither the data nor the compute to decide it."},
}
_LABELS = {
    "zh": {"met": "出处", "evidence": "依据", "test": "对应测试", "scale": "证据规模", "colon": "：", "sep": " · ",
           "legend": "结论的含义", "open": "（", "close": "）", "plus": "＋"},
    "en": {"met": "Source", "evidence": "Evidence", "test": "Test", "scale": "Scale of evidence", "colon": ": ",
           "sep": " · ", "legend": "What the verdicts mean", "open": " (", "close": ")",
           "plus": " + "},
}

# The scale of a verdict's evidence (issue T). Each claim records what the claim speaks of (`claim`: general, a
# statement about Transformers at large, as papers, lessons and folklore make it; or ours, a statement about this
# site's own measurement, model or derivation) and the kinds of evidence behind its verdict, with their size.
EVIDENCE_KINDS: dict[str, dict[str, str]] = {
    "source": {"zh": "原始文献", "en": "a primary source"},
    "derivation": {"zh": "推导（与规模无关）", "en": "a derivation (holds at any scale)"},
    "benchmark": {"zh": "基准测量", "en": "a benchmark"},
    "model": {"zh": "一个训练好的模型", "en": "a trained model"},
    "lab": {"zh": "本站的小实验", "en": "our toy lab"},
}
CLAIM_SCALES = ("general", "ours")
# Evidence that says nothing at a general claim's own scale: a toy lab, or one model on a few texts. On such
# evidence alone a general claim can be at most not reproduced here, or depend on the model (or not be checkable).
SMALL = frozenset({"lab", "model"})
AT_MOST_ON_SMALL = ("model-dependent", "not-reproduced", "not-checkable")
def verdict_problems(verdict: str, claim_scale: str, evidence: Iterable[str]) -> list[str]:
    """What is wrong with ``verdict`` for a claim of ``claim_scale`` on ``evidence`` kinds (empty: it follows the
    rule). "corrected" needs a source, a derivation, or evidence at the claim's own scale (claim_scale "ours");
    a general claim on small evidence only (SMALL) is at most AT_MOST_ON_SMALL."""
    kinds = set(evidence)
    out = []
    if verdict == "corrected" and not kinds & {"source", "derivation"} and claim_scale != "ours":
        out.append("verdict 'corrected' needs a primary source or a derivation among its evidence, or evidence at "
                   f"the claim's own scale (claim: ours); it has {sorted(kinds)} for a {claim_scale} claim")
    if claim_scale == "general" and kinds and kinds <= SMALL and verdict not in AT_MOST_ON_SMALL:
        out.append(f"a general claim on {sorted(kinds)} alone can be at most {list(AT_MOST_ON_SMALL)}, not "
                   f"{verdict!r}")
    return out

_EVIDENCE = re.compile(r"^(?P<page>[a-z0-9][a-z0-9-]*\.md)#(?P<anchor>[A-Za-z0-9_-]+)$")
_TEST = re.compile(r"^(?P<file>tests/[A-Za-z0-9_]+\.py)::(?P<names>[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)?)$")


class LedgerError(ValueError):
    """The ledger is invalid or points at something that does not exist; the message names each claim."""


@dataclass(frozen=True)
class Group:
    id: str
    title: dict[str, str]
    claims: tuple["Claim", ...]


@dataclass(frozen=True)
class Scale:
    claim: str  # one of CLAIM_SCALES
    evidence: tuple[str, ...]  # keys of EVIDENCE_KINDS
    size: dict[str, str]  # {zh, en}: which source, which model and texts, the lab's size; may use [[value: NAME]]


@dataclass(frozen=True)
class Claim:
    id: str
    claim: dict[str, str]  # the claim as a reader meets it
    met: dict[str, str]  # where a reader meets it
    verdict: str  # a key of VERDICTS
    why: dict[str, str]  # one sentence; may use [[value: NAME]]
    evidence: str  # "page.md#anchor", relative to the docs folder of each language
    test: str  # "tests/FILE.py::NAME"
    scale: "Scale"  # what the claim speaks of, and the kind and size of the evidence behind the verdict

    @property
    def evidence_page(self) -> str:
        return self.evidence.split("#", 1)[0]

    @property
    def evidence_anchor(self) -> str:
        return self.evidence.split("#", 1)[1]


@dataclass(frozen=True)
class Ledger:
    groups: tuple[Group, ...]

    @property
    def claims(self) -> tuple[Claim, ...]:
        return tuple(c for g in self.groups for c in g.claims)

    def __len__(self) -> int:
        return len(self.claims)


# ---------------------------------------------------------------- load / validate


def _pattern(regex: re.Pattern, expected: str):
    def check(value):
        if not isinstance(value, str) or not regex.match(value):
            raise schema.problem(f"must {expected}, got {value!r}")
        return value
    return BeforeValidator(check)


class _ScaleData(schema.Model):
    claim: Any
    evidence: list[Any]
    size: schema.Sentence

    @model_validator(mode="after")
    def _known(self):
        if self.claim not in CLAIM_SCALES:
            raise schema.problem(f"scale.claim {self.claim!r} is not one of {list(CLAIM_SCALES)}")
        bad = [k for k in self.evidence if k not in EVIDENCE_KINDS]
        if bad or not self.evidence:
            raise schema.problem(f"scale.evidence must be a non-empty list of {list(EVIDENCE_KINDS)}, got {self.evidence!r}")
        return self


class _ClaimData(schema.Model):
    id: schema.Slug
    claim: schema.Sentence
    met: schema.Sentence
    verdict: Any
    why: schema.Sentence
    evidence: Annotated[str, _pattern(_EVIDENCE, "be a link 'page.md#anchor' to the section or figure that decides it")]
    test: Annotated[str, _pattern(_TEST, "name a test as 'tests/FILE.py::NAME'")]
    scale: _ScaleData

    @model_validator(mode="after")
    def _known_verdict(self):
        if self.verdict not in VERDICTS:
            raise schema.problem(f"verdict {self.verdict!r} is not one of {list(VERDICTS)}")
        problems = verdict_problems(self.verdict, self.scale.claim, self.scale.evidence)
        if problems:
            raise schema.problem("; ".join(problems))
        return self


class _GroupData(schema.Model):
    id: schema.Slug
    title: schema.Sentence
    claims: list[Any]

    @field_validator("claims", mode="before")
    @classmethod
    def _non_empty(cls, claims):
        if not isinstance(claims, list) or not claims:
            raise schema.problem("must be a non-empty list")
        return claims


class _LedgerFile(schema.Model):
    groups: list[Any]

    @field_validator("groups", mode="before")
    @classmethod
    def _non_empty(cls, groups):
        if not isinstance(groups, list) or not groups:
            raise schema.problem("must be a non-empty list")
        return groups


def parse(raw, source: str = "claim ledger") -> Ledger:
    """Validate already-parsed YAML and build the Ledger; raises LedgerError listing every problem.
    Each group and claim is checked by its schema (``normsite.content.schema``); ids are checked across groups here."""
    errors: list[str] = []
    top = schema.validate(_LedgerFile, raw, source, {}, errors)
    if top is None:
        raise LedgerError("\n".join(errors))
    groups: list[Group] = []
    seen: dict[str, str] = {}
    for _, g in schema.validate_entries(_GroupData, top.groups, schema.entry_name("group"), errors):
        claims = []
        for _, c in schema.validate_entries(_ClaimData, g.claims,
                                            _claim_name(g.id), errors):
            if c.id in seen:
                errors.append(f"claim {c.id!r}: duplicate id (also in group {seen[c.id]!r})")
            seen.setdefault(c.id, g.id)
            d = c.model_dump()
            d["scale"] = Scale(claim=d["scale"]["claim"], evidence=tuple(d["scale"]["evidence"]),
                               size=d["scale"]["size"])
            claims.append(Claim(**d))
        groups.append(Group(g.id, g.title, tuple(claims)))
    if errors:
        raise LedgerError(f"{source}: {len(errors)} problem(s):\n  " + "\n  ".join(errors))
    return Ledger(tuple(groups))


def _claim_name(group: str):
    def name(i, item):
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            return f"claim {item['id']!r}"
        return f"group {group!r}, claim #{i + 1}"
    return name


def load(path: str | Path = DATA) -> Ledger:
    """Read and validate the ledger YAML."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"claim ledger data not found: {path}")
    with path.open(encoding="utf-8") as fh:
        return parse(schema.yaml_load(fh), source=str(path))


# ---------------------------------------------------------------- checks against the project

_HEADING = re.compile(r"^(#{1,6})\s+(?P<text>.*?)\s*\{[^}]*#(?P<id>[A-Za-z0-9_-]+)[^}]*\}\s*$", re.M)
_HTML_ID = re.compile(r"""\bid\s*=\s*["']([A-Za-z0-9_-]+)["']""")


def anchors(markdown: str) -> dict[str, str]:
    """{anchor: label} for the anchors a page's Markdown source defines.

    Headings with an explicit ``{ #id }`` (every heading on this site has one)
    label themselves; a figure directive ``[[figure: NAME]]`` defines
    ``fig-NAME``, labelled with the heading of its section; so does any HTML
    ``id="…"`` written in the page.
    """
    out: dict[str, str] = {}
    section = ""
    lines = markdown.splitlines()
    for line in lines:
        h = _HEADING.match(line)
        if h:
            section = re.sub(r"[*_`]", "", h.group("text")).strip()
            out[h.group("id")] = section
            continue
        for name in names(line, "figure"):
            out.setdefault(f"fig-{name}", section)
        for hid in _HTML_ID.findall(line):
            out.setdefault(hid, section)
    return out


@functools.lru_cache(maxsize=64)
def _page_anchors(path: str, mtime_ns: int) -> dict[str, str]:
    return anchors(Path(path).read_text(encoding="utf-8"))


def _anchors_of(page: Path) -> dict[str, str]:
    return _page_anchors(str(page), page.stat().st_mtime_ns)


def check_evidence(ledger: Ledger, docs_dirs: Mapping[str, str | Path]) -> None:
    """Every evidence link resolves in every language: the page exists and defines the anchor.

    ``docs_dirs`` maps a language to its docs folder (``{"zh": "docs/zh", "en": "docs/en"}``).
    """
    errors = []
    for c in ledger.claims:
        for lang, folder in docs_dirs.items():
            page = Path(folder) / c.evidence_page
            if not page.is_file():
                errors.append(f"claim {c.id!r}: evidence page {c.evidence_page!r} does not exist in {folder}")
            elif c.evidence_anchor not in _anchors_of(page):
                errors.append(f"claim {c.id!r}: evidence anchor #{c.evidence_anchor} is not on {page}")
    if errors:
        raise LedgerError("claim ledger: broken evidence link(s):\n  " + "\n  ".join(errors))


def _defined(tree: ast.Module, names: list[str]) -> bool:
    body = tree.body
    for i, name in enumerate(names):
        last = i == len(names) - 1
        found = None
        for node in body:
            kinds = (ast.FunctionDef, ast.AsyncFunctionDef) if last else (ast.ClassDef,)
            if isinstance(node, kinds) and node.name == name:
                found = node
        if found is None:
            return False
        body = getattr(found, "body", [])
    return True


def check_tests(ledger: Ledger, root: str | Path) -> None:
    """Every named test is defined in its file (``root`` is the repository root)."""
    errors = []
    trees: dict[str, ast.Module | None] = {}
    for c in ledger.claims:
        m = _TEST.match(c.test)
        file, names = m.group("file"), m.group("names").split("::")
        if file not in trees:
            path = Path(root) / file
            trees[file] = ast.parse(path.read_text(encoding="utf-8"), filename=str(path)) if path.is_file() else None
        tree = trees[file]
        if tree is None:
            errors.append(f"claim {c.id!r}: test file {file} does not exist")
        elif not names[-1].startswith("test") or not _defined(tree, names):
            errors.append(f"claim {c.id!r}: test {c.test} is not defined (pytest would not collect it)")
    if errors:
        raise LedgerError("claim ledger: missing test(s):\n  " + "\n  ".join(errors))


def check_values(ledger: Ledger, known: Iterable[str]) -> None:
    """Every ``[[value: NAME]]`` in a reason names a known value."""
    known = set(known)
    errors = [f"claim {c.id!r}: unknown value {name!r} in its {what} ({lang})"
              for c in ledger.claims for lang in LANGS
              for what, text in (("reason", c.why[lang]), ("scale", c.scale.size[lang]))
              for name in names(text, "value") if name not in known]
    if errors:
        raise LedgerError("claim ledger: " + "\n  ".join(errors))


# ---------------------------------------------------------------- page


def _badge(verdict: str, lang: str) -> str:
    return f'<span class="nr-verdict nr-verdict--{verdict}">{VERDICTS[verdict][lang]}</span>'


def render_markdown(ledger: Ledger, lang: str, docs_dir: str | Path | None = None) -> str:
    """The ledger as page Markdown in ``lang``: a legend, then one section per group, one per claim.

    Each claim is a heading with the anchor ``claim-<id>`` (the same in both
    languages), its verdict badge, where it is met, why, the evidence link
    (labelled with the target section's heading when ``docs_dir`` is given)
    and the test that keeps it true. Reasons may hold ``[[value: NAME]]``
    directives; the build expands them after this.
    """
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
    lab = _LABELS[lang]
    counts = {v: sum(1 for c in ledger.claims if c.verdict == v) for v in VERDICTS}
    out = [f"**{lab['legend']}**\n"]
    for v in VERDICTS:
        out.append(f"- {_badge(v, lang)}{lab['open']}{counts[v]}{lab['close']}{lab['colon']}{_VERDICT_HELP[v][lang]}")
    out.append("")
    for g in ledger.groups:
        out.append(f"## {g.title[lang]} {{ #claims-{g.id} }}\n")
        for c in g.claims:
            label = c.evidence
            if docs_dir is not None:
                page = Path(docs_dir) / c.evidence_page
                if page.is_file():
                    label = _anchors_of(page).get(c.evidence_anchor) or c.evidence
            out.append(f"### {c.claim[lang]} {{ #claim-{c.id} }}\n")
            out.append(f"{_badge(c.verdict, lang)}{lab['sep']}{lab['met']}{lab['colon']}{c.met[lang]}\n")
            out.append(f"{c.why[lang]}\n")
            kinds = lab["plus"].join(EVIDENCE_KINDS[k][lang] for k in c.scale.evidence)
            out.append(f"{lab['scale']}{lab['colon']}{kinds}{lab['open']}{c.scale.size[lang]}{lab['close']}\n")
            out.append(f"{lab['evidence']}{lab['colon']}[{label}]({c.evidence}){lab['sep']}"
                       f"{lab['test']}{lab['colon']}`{c.test}`\n")
    return "\n".join(out)


def expand(markdown: str, lang: str, docs_dir: str | Path, root: str | Path,
           known_values: Iterable[str] | None = None, ledger: Ledger | None = None,
           langs_dirs: Mapping[str, str | Path] | None = None) -> str:
    """Replace ``[[ledger]]`` in a page with the rendered ledger, after checking it.

    Runs every check first (evidence in every language's docs folder, tests
    under ``root``, values if ``known_values`` is given), so a broken link or
    a missing test fails the build naming the claim. Pages without the
    directive are returned unchanged.
    """
    if DIRECTIVE not in markdown:
        return markdown
    ledger = ledger or load(DATA)
    docs_dir = Path(docs_dir)
    dirs = langs_dirs or {code: docs_dir.parent / code for code in LANGS}
    check_evidence(ledger, dirs)
    check_tests(ledger, root)
    if known_values is not None:
        check_values(ledger, known_values)
    return markdown.replace(DIRECTIVE, render_markdown(ledger, lang, docs_dir))
