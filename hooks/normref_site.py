"""MkDocs adapter: wires normref's figures, values and snippet outputs into the pages.

It stays thin on purpose: everything it inserts is computed by normref (or by
running a snippet); it only expands page directives and registers files.

Page directives (one per line or inline):
  [[figure: NAME]]    the figure, light and dark variants, localised alt text and caption
  [[snippet: FILE]]   snippets/FILE verbatim (pymdownx.snippets), then what it prints
  [[snippet-code: FILE]]  the same without its output: for timings, which differ
                      from run to run (two builds must give the same bytes)
  [[value: NAME]]     a number from normref.values, in the page's language
  [[data: NAME]]      JSON from normref.data for a widget, embedded as
                      <template id="nr-data-NAME"><script type="application/json">
                      (see on_page_content for why the <template>)

Formulas written with pymdownx.arithmatex are typeset here at build time with
KaTeX (PyKaTeX), so pages ship no math JavaScript at all: only KaTeX's
stylesheet, and only on pages that have math.

Notebook pages (mkdocs-jupyter) have the ~600 KB of JupyterLab CSS that
nbconvert inlines pruned to the rules their HTML can use (normref.csstrim).

An unknown figure, value or snippet, a snippet that fails, or a formula KaTeX
cannot parse fails the build, naming the page and the culprit.

Release plumbing (also here, so the address is set in one place):
  - config.extra.nr_i18n: both languages' root URLs, derived from site_url, for
    the hreflang links, the sitemap alternates and the 404 page (overrides/);
  - SOURCE_DATE_EPOCH defaults to the commit's time, so two builds of one
    commit give the same bytes (MkDocs dates the sitemap from it);
  - each notebook page gets its .ipynb (made by jupytext) next to it, to download.

NORMREF_NO_GENERATED=1 builds the same pages without the generated work:
figures are neither rendered nor registered (a directive becomes its caption)
and notebooks are converted but not executed. `make perf` compares a warm
build against it, to show that a warm build does no figure or notebook work.
"""

from __future__ import annotations

import hashlib
import html
import logging
import os
import posixpath
import re
import subprocess
import sys
import time
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

from normref import cache, csstrim, data, figures, values

log = logging.getLogger("mkdocs.hooks.normref")

ROOT = Path(__file__).resolve().parent.parent
SNIPPETS = ROOT / "snippets"
DIRECTIVE = re.compile(r"\[\[(figure|snippet-code|snippet|value|data):\s*([^\]\s]+)\s*\]\]")
SNIPPET_TIMEOUT_S = 300

_stats: dict = {}
NO_GENERATED = os.environ.get("NORMREF_NO_GENERATED", "") not in ("", "0")


def _lang(config) -> str:
    return "zh" if str(config.theme["language"]).startswith("zh") else "en"


def _rel(page, target: str) -> str:
    """Path from the page's source folder to a site-root-relative file."""
    return posixpath.relpath(target, posixpath.dirname(page.file.src_uri) or ".")


# ---------------------------------------------------------------- config / files


def _default_source_date_epoch() -> None:
    """MkDocs dates the sitemap (and the header of sitemap.xml.gz) from
    SOURCE_DATE_EPOCH, else from the clock. Default it to the time of the commit
    being built: builds of one commit then give the same bytes, and <lastmod>
    says when the content last changed. Outside a git checkout, keep the clock."""
    if os.environ.get("SOURCE_DATE_EPOCH"):
        return
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=ROOT, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return
    if out.returncode == 0 and out.stdout.strip().isdigit():
        os.environ["SOURCE_DATE_EPOCH"] = out.stdout.strip()


def on_config(config):
    _default_source_date_epoch()
    _stats.clear()
    _stats.update(t0=time.perf_counter(), fig_hit=0, fig_miss=0, snip_hit=0, snip_miss=0)
    cache.STATS.update(hit=0, miss=0)
    # The site address is set once (mkdocs.yml, or NORMREF_SITE_URL); the
    # English build inherits it and lives one folder down.
    if _lang(config) == "en" and config.site_url and not config.site_url.rstrip("/").endswith("/en"):
        config.site_url = config.site_url.rstrip("/") + "/en/"
    base = (config.site_url or "/").rstrip("/") + "/"
    if _lang(config) == "en":
        base = base[: -len("en/")]
    config.extra["nr_i18n"] = {"lang": _lang(config), "roots": {"zh": base, "en": base + "en/"}}
    # mkdocs-jupyter keys its cache by the notebook text alone; a notebook also
    # depends on normref, so fold normref's source hash into its cache folder.
    # One folder per language, or the two builds evict each other's entries.
    nb = config.plugins.get("mkdocs-jupyter")
    if nb is not None:
        # Under normref's cache folder, so NORMREF_CACHE moves both (a cold build
        # in a test is then one environment variable away).
        nb.config["cache_dir"] = str(cache.cache_dir() / "jupyter" / _lang(config) / cache.package_hash()[:16])
        if NO_GENERATED:
            # Its own cache folder: mkdocs-jupyter evicts every entry a build did not use,
            # so sharing one would make each kind of build evict the other's.
            nb.config["execute"] = False
            nb.config["cache_dir"] += "-noexec"
    return config


def _referenced(config, kind: str) -> dict[str, list[str]]:
    """{name: [pages that use it]} for directives of ``kind`` in the docs folder."""
    found: dict[str, list[str]] = {}
    docs = Path(config.docs_dir)
    for md in sorted(docs.rglob("*.md")):
        for k, name in DIRECTIVE.findall(md.read_text(encoding="utf-8")):
            if k == kind:
                found.setdefault(name, []).append(str(md.relative_to(docs)))
    return found


def on_files(files, config):
    if NO_GENERATED:
        return files
    lang = _lang(config)
    known = set(figures.names())
    for name, pages in _referenced(config, "figure").items():
        if name not in known:
            raise PluginError(f"unknown figure {name!r} referenced in {', '.join(pages)}; known: {', '.join(sorted(known))}")
        for theme in figures.THEMES:
            svg, hit = figures.render_cached(name, lang, theme)
            _stats["fig_hit" if hit else "fig_miss"] += 1
            files.append(File.generated(config, f"figures/{name}-{theme}.svg", content=svg))
    for f in list(files):
        if _is_notebook(f.src_uri) and f.src_uri.endswith(".py"):
            files.append(File.generated(config, _ipynb_uri(f.src_uri), content=notebook_ipynb(f.abs_src_path)))
    return files


def _is_notebook(src_uri: str) -> bool:
    return src_uri.startswith("notebooks/") and src_uri.endswith((".py", ".ipynb"))


def _ipynb_uri(src_uri: str) -> str:
    """notebooks/NAME.py (page at notebooks/NAME/) -> notebooks/NAME/NAME.ipynb, beside the
    .py that mkdocs-jupyter's include_source copies there."""
    stem = posixpath.splitext(src_uri)[0]
    return f"{stem}/{posixpath.basename(stem)}.ipynb"


def notebook_ipynb(path: str) -> str:
    """The jupytext notebook at ``path`` as .ipynb text, unexecuted, byte-stable.

    nbformat gives each new cell a random id; number them instead, or every
    build would differ. The jupytext pairing header is dropped: the download is
    a plain notebook."""
    import jupytext

    nb = jupytext.read(path)
    nb.metadata.pop("jupytext", None)
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i}"
    return jupytext.writes(nb, fmt="ipynb")


# ---------------------------------------------------------------- page markdown


def _figure_md(name: str, lang: str, page) -> str:
    spec = figures.get(name)
    if NO_GENERATED:
        return f'<figure class="nr-figure" id="fig-{name}">\n<figcaption>{html.escape(spec.caption[lang], quote=False)}</figcaption>\n</figure>'
    alt = spec.alt[lang].replace("[", "(").replace("]", ")")
    imgs = "\n".join(
        f"![{alt}]({_rel(page, f'figures/{name}-{theme}.svg')}#only-{theme}){{ loading=lazy }}" for theme in figures.THEMES
    )
    return (
        f'<figure class="nr-figure" id="fig-{name}" markdown="span">\n{imgs}\n'
        f"<figcaption>{html.escape(spec.caption[lang], quote=False)}</figcaption>\n</figure>"
    )


def run_snippet(name: str) -> tuple[str, bool]:
    """Run snippets/NAME and return (stdout, was_cached). Raises RuntimeError on failure."""
    path = SNIPPETS / name
    if not path.is_file():
        raise FileNotFoundError(f"snippet {name!r} not found in {SNIPPETS}")
    key = cache.make_key("snippet", name, hashlib.sha256(path.read_bytes()).hexdigest(), ())
    key = hashlib.sha256((key + cache.package_hash()).encode()).hexdigest()
    out = cache.get("snippets", key, ".txt")
    if out is not None:
        return out.decode("utf-8"), True
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg", PYTHONHASHSEED="0")
    proc = subprocess.run([sys.executable, str(path)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=SNIPPET_TIMEOUT_S)
    if proc.returncode != 0:
        raise RuntimeError(f"snippet {name} exited with {proc.returncode}:\n{proc.stderr[-2000:]}")
    cache.put("snippets", key, proc.stdout.encode("utf-8"), ".txt")
    return proc.stdout, False


def _snippet_code_md(name: str) -> str:
    # For a snippet whose output is a timing on the reader's machine: its output is
    # not reproducible, so the page shows the code only (the tests still run it).
    if not (SNIPPETS / name).is_file():
        raise FileNotFoundError(f"snippet {name!r} not found in {SNIPPETS}")
    return f'```python title="snippets/{name}"\n--8<-- "{name}"\n```'


def _snippet_md(name: str, lang: str) -> str:
    out, hit = run_snippet(name)
    _stats["snip_hit" if hit else "snip_miss"] += 1
    label = "输出" if lang == "zh" else "Output"
    return (
        f'```python title="snippets/{name}"\n--8<-- "{name}"\n```\n\n'
        f'```text title="{label}" linenums="0"\n{out.rstrip()}\n```'
    )


def on_page_markdown(markdown, page, config, files):
    lang = _lang(config)

    def expand(m):
        kind, name = m.group(1), m.group(2)
        try:
            if kind == "figure":
                return _figure_md(name, lang, page)
            if kind == "snippet":
                return _snippet_md(name, lang)
            if kind == "snippet-code":
                return _snippet_code_md(name)
            if kind == "data":
                # "</" cannot occur inside a script element; escape it in the JSON.
                payload = data.to_json(data.get(name, lang)).replace("</", "<\\/")
                return f'<script type="application/json" id="nr-data-{name}">{payload}</script>'
            return values.get(name, lang)
        except (KeyError, FileNotFoundError, RuntimeError, subprocess.TimeoutExpired) as e:
            raise PluginError(f"{page.file.src_uri}: bad [[{kind}: {name}]]: {e}") from e

    return DIRECTIVE.sub(expand, markdown)


# ---------------------------------------------------------------- math

_MATH = re.compile(
    r'<(?P<tag>span|div) class="arithmatex">\s*(?:\\\((?P<i>.*?)\\\)|\\\[(?P<d>.*?)\\\])\s*</(?P=tag)>', re.S
)


# Material's instant navigation re-creates every inline <script> of the new
# page with its text only, dropping `type` and `id`: a JSON data block would
# lose its id and be run as JavaScript (a SyntaxError). Scripts inside a
# <template> are inert and not in the document's script list, so the data is
# wrapped in one (after Markdown, which would treat <template> as inline HTML).
_DATA = re.compile(r'<script type="application/json" id="nr-data-([\w-]+)">(.*?)</script>', re.S)


def _wrap_data(html_text: str) -> str:
    return _DATA.sub(lambda m: f'<template class="nr-data" id="nr-data-{m.group(1)}">'
                               f'<script type="application/json">{m.group(2)}</script></template>', html_text)


def on_page_content(html_text, page, config, files):
    import pykatex

    html_text = _wrap_data(html_text)

    def render(m):
        display = m.group("d") is not None
        tex = html.unescape(m.group("d") if display else m.group("i"))
        try:
            out = pykatex.renderToString(tex, displayMode=display, throwOnError=True)
        except Exception as e:  # pykatex.ParseError and friends
            raise PluginError(f"{page.file.src_uri}: KaTeX cannot typeset {tex!r}: {e}") from e
        return f'<div class="nr-math">{out}</div>' if display else out

    new, n = _MATH.subn(render, html_text)
    # Math and widget assets go only into the pages that use them, and into the
    # body, not the head: Material's instant navigation swaps the body only (and
    # runs its scripts again), and a head-only stylesheet would be missing after it.
    if n:
        new = f'<link rel="stylesheet" href="{_asset(page, "katex/katex.min.css")}">\n' + new
    if "data-nr-widget=" in new:
        new = (f'<link rel="stylesheet" href="{_asset(page, "stylesheets/widgets.css")}">\n' + new
               + f'\n<script src="{_asset(page, "javascripts/widgets.js")}" defer></script>\n')
    return new


def _asset(page, path: str) -> str:
    """assets/<path> relative to the page, so the site works under any sub-path."""
    url = page.url or ""
    here = (url if url.endswith("/") else posixpath.dirname(url)).rstrip("/") or "."
    return posixpath.relpath("assets/" + path, here)


# ---------------------------------------------------------------- notebook pages

# nbconvert's template loads MathJax from a URL (empty here: a request for the
# page itself) and carries a mermaid loader that imports from a CDN. Our
# notebooks use neither, and the site must make no request to another host.
_NB_MATHJAX = re.compile(r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->", re.S)
_NB_MERMAID = re.compile(r'<script type="module">(?:(?!</script>).)*?mermaid(?:(?!</script>).)*</script>', re.S)


# nbconvert writes each cell's id into the page; jupytext's cells get random ones.
_NB_CELL_ID = re.compile(r"cell-id=([A-Za-z0-9_-]+)")


def _stable_cell_ids(output: str) -> str:
    ids: dict[str, str] = {}
    return _NB_CELL_ID.sub(lambda m: "cell-id=" + ids.setdefault(m.group(1), f"cell-{len(ids)}"), output)


def on_page_context(context, page, config, nav):
    # For overrides/main.html: the notebook's downloads, relative to its page.
    if _is_notebook(page.file.src_uri):
        src = posixpath.basename(page.file.src_uri)
        ipynb = src if src.endswith(".ipynb") else posixpath.basename(_ipynb_uri(page.file.src_uri))
        page.nr_notebook = {"ipynb": ipynb, "source": src}
    return context


def on_post_page(output, page, config):
    if _is_notebook(page.file.src_uri):
        output = _stable_cell_ids(_NB_MERMAID.sub("", _NB_MATHJAX.sub("", output)))
        # A code cell that scrolls sideways must take keyboard focus (WCAG 2.1.1),
        # as Material's own code blocks do.
        output = output.replace('<div class="highlight-ipynb ', '<div tabindex="0" class="highlight-ipynb ')
        if "mathjax" in output.lower() or "cdnjs" in output:
            raise PluginError(f"{page.file.src_uri}: could not strip nbconvert's MathJax/mermaid loaders; "
                              "the notebook template changed")
    if 'class="jupyter-wrapper"' in output:
        output = csstrim.trim_html(output)
    return output


# ---------------------------------------------------------------- report


def on_post_build(config):
    s, c = _stats, cache.STATS
    log.info(
        "normref [%s]: figures %d rendered, %d from cache; snippets %d run, %d from cache; %.1f s",
        _lang(config), s.get("fig_miss", 0), s.get("fig_hit", 0), s.get("snip_miss", 0), s.get("snip_hit", 0),
        time.perf_counter() - s.get("t0", time.perf_counter()),
    )
