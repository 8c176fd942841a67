"""MkDocs adapter for what a reader takes home (normsite.takehome): the wheel, install lines, notebooks, links.

Thin on purpose: each event hands its file or page to normsite.takehome.TakeHome."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # normsite: beside normref, not in the wheel
from mkdocs.exceptions import PluginError  # noqa: E402
from mkdocs.plugins import event_priority  # noqa: E402
from mkdocs.structure.files import File  # noqa: E402

from normsite import SiteError, colab  # noqa: E402
from normsite.takehome import TakeHome  # noqa: E402

_state: dict = {}


def _fail_build(fn):  # a SiteError names the file and the culprit; MkDocs reports a PluginError without a traceback
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except SiteError as e:
            raise PluginError(str(e)) from e
    return wrapper


@event_priority(-50)  # after normref_site's on_config, which derives both languages' roots from site_url
@_fail_build
def on_config(config):
    lang = "zh" if str(config.theme["language"]).startswith("zh") else "en"
    th = _state["th"] = TakeHome(lang, config.docs_dir)
    roots = config.extra.get("nr_i18n", {}).get("roots", {})
    for key, value in th.configure(roots.get("zh"), config.repo_url, config.extra.get("repo_branch")).items():
        config[key] = value
    if not config.repo_url:
        config.edit_uri = None  # no repository: no edit links (MkDocs would otherwise guess one)
    return config


@event_priority(-50)  # after normref_site's on_files, which adds the .ipynb downloads
@_fail_build
def on_files(files, config):
    th: TakeHome = _state["th"]
    for uri, content in th.files():
        files.append(File.generated(config, uri, content=content))
    for f in files:
        if f.generated_by is not None and f.src_uri.startswith("notebooks/") and f.src_uri.endswith(".ipynb"):
            stem = f.src_uri.split("/")[1]
            if (Path(config.docs_dir) / "notebooks" / f"{stem}.py").is_file():
                f.content_string = th.ipynb(f"notebooks/{stem}.py")
    return files


@event_priority(50)  # before normref_site expands the snippet directives
@_fail_build
def on_page_markdown(markdown, page, config, files):
    return _state["th"].page_markdown(markdown, page.file.src_uri)


def on_pre_page(page, config, files):
    # mkdocs-jupyter (which runs first) replaced page.render with its notebook executor; name the
    # file, cell and line when a cell fails, instead of a bare traceback.
    render = page.render
    if getattr(render, "__func__", None) is None or render.__func__.__name__ != "new_render":
        return page

    def checked_render(config, files):
        try:
            return render(config, files)
        except Exception as e:
            if type(e).__name__ != "CellExecutionError":
                raise
            raise PluginError(colab.describe_failure(page.file.src_uri, page.file.abs_src_path, str(e))) from e

    page.render = checked_render
    return page


@_fail_build
def on_page_content(html, page, config, files):
    html, ids = _state["th"].notebook_headings(_state["th"].page_html(html, page.file.src_uri), page.file.src_uri)
    if ids is not None:  # the table of contents gets the ids the page's headings now have
        links = [link for top in page.toc for link in _flat(top)]
        if len(links) != len(ids):
            raise PluginError(f"{page.file.src_uri}: {len(ids)} headings on the page, {len(links)} in its contents")
        for link, new in zip(links, ids):
            link.id = new
    return html


def _flat(link):
    yield link
    for child in link.children:
        yield from _flat(child)


def on_page_context(context, page, config, nav):
    page.nr_links = _state["th"].notebook_links(page.file.src_uri)  # for overrides/main.html
    return context


@_fail_build
def on_post_build(config):
    _state["th"].post_build(config.site_dir)
