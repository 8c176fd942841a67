"""Page directives: what a page asks normref for, expanded into Markdown.

  [[figure: NAME]]        the figure, light and dark variants, localized alt text and caption
  [[snippet: FILE]]       snippets/FILE verbatim (pymdownx.snippets; on a Chinese page snippets/zh/FILE,
                          the same code with Chinese comments, when there is one), then what it prints
  [[snippet-code: FILE]]  the same without its output: for timings, which differ from
                          run to run (two builds must give the same bytes)
  [[value: NAME]]         a number from normref.values, in the page's language
  [[table: NAME]]         a table from normref.values (rows of data), as a Markdown table
  [[data: NAME]]          JSON from normref.data for a widget (see assets.wrap_data)
  [[ledger]]              the claim ledger (normsite.ledger), its [[value: …]] expanded
  [[quiz]]                the interview quiz (normsite.quiz)

Who runs what: ``python -m normsite.prepare`` (a fresh process per build) expands
every directive of every page (:func:`expand_one`) and writes a manifest; the
MkDocs process only substitutes it (:func:`substitute`), so importing this
module imports no registry of normref (figures, values, data are imported by the
functions that compute).

An unknown name, a missing or failing snippet raises SiteError naming the page
and the directive.

What a figure, value, table, data, ledger or quiz directive expands to is cached
(normref's cache, kind "directives"), keyed by exactly what it reads: the directive, the page's language
(and, for a figure, its folder and its own entry of figures.yml, parsed), the code that computes it (the
import closure of the module that registers the value, table, data or figure, of this module's own
module-level imports, and of the site module that renders it: normsite.ledger, normsite.practice,
normsite.quiz), the data files those modules declare (``__cache_files__``: the committed results, a content
loader's READS) and the labels.yml sections of the modules in that closure (normref.labels.key_inputs). The
ledger's key also covers both languages' pages (their anchors) and, of the test files it names, which tests
they define; the card bank's, its pages' anchors and titles. No key holds an absolute path. A warm build then runs no experiment code at all, not even to unpickle a
result, and imports no torch. ``COUNTS`` says, by kind, how many expansions this
process computed and found cached (prepare's summary line).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import html
import json
import re
from collections.abc import Callable
from pathlib import Path

from normref import cache, labels
from .content.grammar import pattern

from . import SiteError, snippets
from .assets import page_relative

# Each kind of directive names the modules its expansion calls (_step's ``modules``), so the cache follows only this
# module's module-level imports (normref.cache.closure), not the function-level imports of every kind at once.
__cache_shallow__ = True

# The directives prepare expands, by kind: does it take a NAME? One pattern finds them all (normsite.content.grammar,
# the one grammar: a kind that takes none, or a missing name, is expand_one's error, naming the page).
KINDS = {"figure": True, "snippet": True, "snippet-code": True, "value": True, "table": True, "data": True,
         "ledger": False, "quiz": False, "practice": False}
PREPARED = pattern(*KINDS, named=None)
# The ones that take a name, each with it: what a page expanded in one process asks for (expand, referenced).
DIRECTIVE = pattern(*(k for k, named in KINDS.items() if named))

# {kind: [computed, cached]} in this process ("svg": figure variants drawn, counted by prepare).
COUNTS: dict[str, list[int]] = {}

__all__ = ["DIRECTIVE", "KINDS", "PREPARED", "COUNTS", "referenced", "figure_md", "unbreakable_numbers", "table_md", "expand",
           "expand_one", "recipe", "substitute", "count", "POOLED", "step_of_directive", "expand_task", "one_pass"]


def count(kind: str, hit: bool, n: int = 1) -> None:
    COUNTS.setdefault(kind, [0, 0])[1 if hit else 0] += n


def referenced(docs_dir: str | Path, kind: str) -> dict[str, list[str]]:
    """{name: [pages that use it]} for directives of ``kind`` in a docs folder."""
    found: dict[str, list[str]] = {}
    docs = Path(docs_dir)
    for md in sorted(docs.rglob("*.md")):
        for k, name in DIRECTIVE.findall(md.read_text(encoding="utf-8")):
            if k == kind:
                found.setdefault(name, []).append(str(md.relative_to(docs)))
    return found


# A number a browser could break inside: scientific notation (1e-6), a signed one, a range (3.18–3.48).
_NUMBER = re.compile(r"(?<![\w.])[-−+]?\d+(?:\.\d+)?(?:e[-−+]?\d+|[–-][-−+]?\d+(?:\.\d+)?(?:e[-−+]?\d+)?)(?![\w.]*\d)")


def unbreakable_numbers(text: str) -> str:
    """``text`` (HTML text, no tags) with each number a browser could break inside (“1e-” / “6”) wrapped in a
    ``<span class="nr-nobr">`` (white-space: nowrap, overrides/assets/stylesheets/normref.css)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return _NUMBER.sub(lambda m: f'<span class="nr-nobr">{m.group(0)}</span>', text)


def figure_md(name: str, lang: str, src_uri: str, generated: bool = True) -> str:
    """A <figure> with the light and dark SVG (Material shows the one matching the theme)."""
    from normref import figures

    spec = figures.get(name)
    caption = f"<figcaption>{unbreakable_numbers(html.escape(spec.caption[lang], quote=False))}</figcaption>"
    if not generated:
        return f'<figure class="nr-figure" id="fig-{name}">\n{caption}\n</figure>'
    alt = spec.alt[lang].replace("[", "(").replace("]", ")")
    here = src_uri.rsplit("/", 1)[0] + "/" if "/" in src_uri else ""
    imgs = "\n".join(
        f"![{alt}]({page_relative(here, f'figures/{name}-{theme}.svg')}#only-{theme}){{ loading=lazy }}"
        for theme in figures.THEMES
    )
    return f'<figure class="nr-figure" id="fig-{name}" markdown="span">\n{imgs}\n{caption}\n</figure>'


def data_script(name: str, lang: str) -> str:
    """A widget's data as a JSON script element ("</" cannot occur inside one: escaped)."""
    from normref import data

    payload = data.to_json(data.get(name, lang)).replace("</", "<\\/")
    return f'<script type="application/json" id="nr-data-{name}">{payload}</script>'


def table_md(table) -> str:
    """A normref table as a Markdown table: labels, alignment, code cells in backticks."""

    def cell(text: str, code: bool) -> str:
        text = text.replace("|", "\\|")
        return f"`{text}`" if code and text else text

    lines = ["| " + " | ".join(c.label for c in table.columns) + " |",
             "|" + "".join("---:|" if c.align == "right" else "---|" for c in table.columns)]
    lines += ["| " + " | ".join(cell(v, c.code) for v, c in zip(row, table.columns)) + " |" for row in table.rows]
    return "\n".join(lines)


def figure_texts(name: str) -> str:
    """What a figure's expansion reads of figures.yml, parsed: its own entry and the phrases it fills in (through
    phrases, as normref.figures fills them), as JSON. A comment, or another figure's entry, leaves it unchanged."""
    from normref import figures

    t = figures.texts()
    entry = t["figures"].get(name)
    used: dict[str, dict] = {}
    todo = [text for kind in (entry or {}).values() for text in kind.values()]
    while todo:
        for m in labels.PLACEHOLDER.finditer(todo.pop()):
            if m.group(1) in t["phrases"] and m.group(1) not in used:
                used[m.group(1)] = t["phrases"][m.group(1)]
                todo.extend(used[m.group(1)].values())
    return json.dumps({"entry": entry, "phrases": used}, ensure_ascii=False, sort_keys=True)


# Within one prepare pass (one_pass) nothing a key reads changes: each directive's step is found once, when the
# pass plans its tasks (step_of_directive), and reused when the page loop reads the expansion.
_STEPS: contextvars.ContextVar[dict | None] = contextvars.ContextVar("normsite.directives.steps", default=None)


@contextlib.contextmanager
def one_pass():
    """The scope of one prepare pass: inside it, each directive's cache step is computed once."""
    token = _STEPS.set({})
    try:
        yield
    finally:
        _STEPS.reset(token)


def _step(kind: str, name: str, params: dict, modules: tuple) -> cache.Step:
    """The cache step of one directive's expansion for one language (normref.cache.step_of, the one recipe): its
    parameters, the import closure of ``modules`` (what computes it) and of this module, the data files they
    declare and their sections of labels.yml (normref.labels.key_inputs). Computes nothing."""
    memo, at = _STEPS.get(), (kind, name, tuple(sorted((k, str(v)) for k, v in params.items())), tuple(modules))
    s = memo.get(at) if memo is not None else None
    if s is None:
        code = (*modules, __name__)
        s = cache.step_of("directives", f"{kind}:{name}[{params['lang']}]", suffix=".json", code=code,
                          inputs={**{k: str(v) for k, v in params.items()}, **labels.key_inputs(cache.closure(code))})
        if memo is not None:
            memo[at] = s
    return s


# The directives whose expansion computes normref results (values, tables, widget data, the ledger, the card bank,
# the quiz, a figure's caption, whose fields may read an experiment): the prepare pass hands the missing ones to the
# pool (normsite.ahead), beside the figures. Its workers have torch loaded; the pass's own process then only reads
# the cache (a cold pass that expanded its figures itself spent about 2 s importing torch for their captions).
POOLED = ("value", "table", "data", "ledger", "practice", "quiz", "figure")


def step_of_directive(kind: str, name: str | None, lang: str, src_uri: str, *, kinds: tuple = POOLED,
                      **kw) -> cache.Step | None:
    """The cache step of one directive's expansion (:func:`expand_one`'s arguments), found without computing
    it (:func:`recipe`'s key); None for a kind not among ``kinds`` or not cached (or an error, which the page
    loop then reports)."""
    if kind not in kinds:
        return None
    try:
        got = recipe(kind, name, lang, src_uri, **kw)
    except SiteError:
        return None
    return got[0] if got is not None else None


def expand_task(kind: str, name: str | None, lang: str, src_uri: str, kw: dict) -> dict[str, list[int]]:
    """A pool task: expand one directive into the cache; what it computed and found cached, by kind (the
    directives it expands inside, such as the ledger's values, included), as :data:`COUNTS` counts."""
    before = {k: list(v) for k, v in COUNTS.items()}
    try:
        expand_one(kind, name, lang, src_uri, **kw)
        return {k: [v[0] - before.get(k, [0, 0])[0], v[1] - before.get(k, [0, 0])[1]] for k, v in COUNTS.items()
                if v != before.get(k)}
    finally:  # the caller counts from what it returns (a pool of one runs the task in the caller's process)
        COUNTS.clear()
        COUNTS.update(before)


def expand(markdown: str, lang: str, src_uri: str, *, generated: bool = True,
           on_snippet: Callable[[str, bool], None] | None = None) -> str:
    """Expand every directive of a page. ``on_snippet(name, was_cached)`` is told about each snippet run."""

    def one(m):
        return expand_one(m.group(1), m.group(2), lang, src_uri, generated=generated, on_snippet=on_snippet)

    return DIRECTIVE.sub(lambda m: _indented(markdown, m, one(m)), markdown)


def _indented(markdown: str, m: re.Match, out: str) -> str:
    """A directive alone on an indented line (in a list or an admonition, e.g. a worked solution's
    ``??? success`` block): its expansion's further lines get the same indentation, to stay in that block."""
    prefix = markdown[markdown.rfind("\n", 0, m.start()) + 1:m.start()]
    return out.replace("\n", "\n" + prefix) if prefix and not prefix.strip() else out


def _check_kind(kind: str, name: str | None, src_uri: str) -> None:
    if kind not in KINDS or KINDS[kind] != (name is not None):
        shown = f"[[{kind}: {name}]]" if name is not None else f"[[{kind}]]"
        raise SiteError(f"{src_uri}: bad {shown}: " + (f"unknown directive; known: {', '.join(KINDS)}" if kind not in KINDS
                        else "takes a name" if KINDS[kind] else "takes no name"))


def _named(kind: str, name: str, src_uri: str, fn: Callable[[], object]):
    """``fn()``, a problem with a named directive raised as SiteError naming the page and the directive."""
    try:
        return fn()
    except (KeyError, ValueError, FileNotFoundError, SiteError) as e:
        raise SiteError(f"{src_uri}: bad [[{kind}: {name}]]: {e}") from e


def recipe(kind: str, name: str | None, lang: str, src_uri: str, *, generated: bool = True,
           docs_dirs: dict | None = None, root: Path | None = None, **_) -> tuple[cache.Step, Callable[[], str]] | None:
    """(the cache step of one directive's expansion, the function that computes it), apart: the step (its key)
    is found without computing anything, so the prepare pass plans its tasks from the keys alone. None for a
    snippet, whose output is cached by normsite.snippets. SiteError naming the page and the directive when
    its key cannot be made (an unknown name)."""
    from normref import data, figures, values

    _check_kind(kind, name, src_uri)
    if kind == "ledger":
        return _ledger(lang, src_uri, docs_dirs, root)
    if kind == "practice":
        return _practice(lang, src_uri, docs_dirs, generated)
    if kind == "quiz":
        from . import quiz

        return (_step("quiz", "quiz", {"lang": lang}, ("normsite.quiz",)),
                lambda: expand(quiz.render_markdown(lang), lang, src_uri, generated=generated))
    if kind in ("snippet", "snippet-code"):
        return None
    if kind == "figure":
        here = src_uri.rsplit("/", 1)[0] if "/" in src_uri else ""
        params = {"lang": lang, "page folder": here, "generated": generated}
        step = _named(kind, name, src_uri, lambda: _step(
            "figure", name, {**params, "its texts in normref/figures/figures.yml": figure_texts(name)},
            (figures.module_of(name),)))
        return step, lambda: _named(kind, name, src_uri, lambda: figure_md(name, lang, src_uri, generated))
    if kind == "data":
        # normref.data's modules, and the module that registered this one (normref's, or the site's content)
        step = _named(kind, name, src_uri, lambda: _step("data", name, {"lang": lang}, (data.__name__, data.module_of(name))))
        return step, lambda: _named(kind, name, src_uri, lambda: data_script(name, lang))
    if kind == "table":
        step = _named(kind, name, src_uri, lambda: _step("table", name, {"lang": lang}, (values.module_of(name, "table"),)))
        return step, lambda: _named(kind, name, src_uri, lambda: table_md(values.table(name, lang)))
    step = _named(kind, name, src_uri, lambda: _step("value", name, {"lang": lang}, (values.module_of(name),)))
    return step, lambda: _named(kind, name, src_uri, lambda: values.get(name, lang))


def expand_one(kind: str, name: str | None, lang: str, src_uri: str, *, generated: bool = True,
               on_snippet: Callable[[str, bool], None] | None = None,
               docs_dirs: dict | None = None, root: Path | None = None) -> str:
    """What one directive of a page expands to (``name`` None for [[ledger]] and [[quiz]]): its :func:`recipe`'s
    result, from the cache when there; SiteError naming the page and the directive when it cannot. ``docs_dirs``
    ({lang: docs folder}) and ``root`` (the repository: the tests the ledger names) are the ledger's."""
    got = recipe(kind, name, lang, src_uri, generated=generated, docs_dirs=docs_dirs, root=root)
    if got is None:
        if kind == "snippet-code":
            return _named(kind, name, src_uri, lambda: snippets.code_block(name, lang))
        out, hit = _named(kind, name, src_uri, lambda: snippets.run(name))
        count("snippet", hit)
        if on_snippet:
            on_snippet(name, hit)
        return snippets.code_block(name, lang) + "\n\n" + snippets.output_block(out, lang)
    step, compute = got
    value, hit = cache.step(step, compute, lambda v: json.dumps(v).encode(), json.loads)
    count(kind, hit)
    return value


def page_titles(docs_dir: str | Path) -> dict[str, str]:
    """{page: its H1} of a language's pages (the practice page's evidence labels; the nav's titles are
    the MkDocs process's, and the pages' H1s are what the nav shows)."""
    out = {}
    for md in sorted(Path(docs_dir).rglob("*.md")):
        if (title := page_title(md.read_text(encoding="utf-8"))) is not None:
            out[md.relative_to(docs_dir).as_posix()] = title
    return out


_H1 = re.compile(r"^# (.+?)(?:\s*\{[^}]*\})?\s*$", re.M)


def page_title(markdown: str) -> str | None:
    """A page's H1, as its Markdown source writes it (None when it has none)."""
    m = _H1.search(markdown)
    return m.group(1).strip() if m else None


def _practice(lang: str, src_uri: str, docs_dirs: dict | None, generated: bool) -> tuple[cache.Step, Callable[[], str]]:
    """The card bank (normsite.practice), checked (its evidence anchors, claims and values) and with its
    [[value: …]] expanded; cached by the cards, the pages and normref.values' code."""
    from .content import cards

    from . import practice

    if docs_dirs is None:
        raise SiteError(f"{src_uri}: [[practice]] needs the docs folders")
    here = Path(docs_dirs[lang])
    pages = sorted(here.rglob("*.md"))
    # cards.yml, spoken.yml and claims.yml: the READS of the loaders in normsite.practice's closure
    inputs = {"page titles": json.dumps(page_titles(here)), "page anchors": _anchor_table(pages, here.parent)}
    return (_step("practice", "practice", {"lang": lang, **inputs, "generated": generated},
                  ("normref.values", "normsite.practice", "normsite.ledger")),
            lambda: expand(practice.expand(practice.DIRECTIVE, lang, here, page_titles(here)), lang, src_uri,
                           generated=generated))


def _anchor_table(pages: list[Path], docs_root: Path) -> str:
    """What the ledger and the card bank read of the pages: each page's anchors and their labels
    (normsite.ledger.anchors), by its path under ``docs_root`` (the folder of the languages' docs folders:
    "en/formulas.md"). A prose edit that moves no anchor does not re-check them."""
    from . import ledger

    return json.dumps({Path(p).relative_to(docs_root).as_posix(): ledger._anchors_of(p) for p in pages},
                      ensure_ascii=False, sort_keys=True)


_TEST_FILE = re.compile(rb"tests/[A-Za-z0-9_]+\.py")


def _tests_defined(claims: bytes, root: Path) -> str:
    """What the ledger reads of the tests: for each test file claims.yml names, the tests it defines
    (normsite.ledger.check_tests: functions, classes and their methods), or that it is missing. A comment
    or a test's body leaves this unchanged."""
    out = {}
    for rel in sorted({m.group(0).decode() for m in _TEST_FILE.finditer(claims)}):
        p = Path(root) / rel
        out[rel] = _defined_in(p, p.stat().st_mtime_ns, p.stat().st_size) if p.is_file() else None
    return json.dumps(out, sort_keys=True)


@functools.lru_cache(maxsize=None)
def _defined_in(path: Path, mtime_ns: int, size: int) -> list[str]:
    # Once per process and version of the file; parsed once for every process (normref.cache.source_facts).
    return cache.source_facts(path, _definitions, path.name)


def _definitions(data: bytes, filename: str) -> list[str]:
    import ast

    def names(body, prefix=""):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield f"def {prefix}{node.name}"
            elif isinstance(node, ast.ClassDef):
                yield f"class {prefix}{node.name}"
                yield from names(node.body, f"{prefix}{node.name}::")

    return sorted(names(ast.parse(data, filename).body))


def _ledger(lang: str, src_uri: str, docs_dirs: dict | None, root: Path | None) -> tuple[cache.Step, Callable[[], str]]:
    """The ledger, checked (evidence in every language's pages, the tests it names, its values) and with its
    [[value: …]] expanded; cached by those inputs (claims.yml, the pages, the tests, normref.values' code)."""
    from normref import values

    from . import ledger

    if docs_dirs is None or root is None:
        raise SiteError(f"{src_uri}: [[ledger]] needs the docs folders and the repository")
    here = Path(docs_dirs[lang])
    pages = [p for d in docs_dirs.values() for p in sorted(Path(d).rglob("*.md"))]
    # claims.yml: normsite.ledger's READS, in the key through its code
    inputs = {"page anchors": _anchor_table(pages, here.parent),
              "tests it names": _tests_defined(ledger.DATA.read_bytes(), Path(root))}

    def compute() -> str:
        try:
            md = ledger.expand(ledger.DIRECTIVE, lang, here, root, known_values=values.names(), langs_dirs=docs_dirs)
        except (ledger.LedgerError, FileNotFoundError) as e:
            raise SiteError(f"{src_uri}: {e}") from e
        return expand(md, lang, src_uri)

    return _step("ledger", "ledger", {"lang": lang, **inputs}, ("normref.values", "normsite.ledger")), compute


def substitute(markdown: str, expansions: dict, src_uri: str) -> str:
    """Replace each prepared directive of a page by its expansion ({directive text: Markdown, or {"error": …}},
    as normsite.prepare computed it). SiteError for one prepare could not expand, or did not see."""

    def one(m):
        got = expansions.get(m.group(0))
        if got is None:
            raise SiteError(f"{src_uri}: {m.group(0)} was not prepared (python -m normsite.prepare did not see "
                            "this page: is it under docs/<lang>/?)")
        if isinstance(got, dict):
            raise SiteError(got["error"])
        return _indented(markdown, m, got)

    return PREPARED.sub(one, markdown)
