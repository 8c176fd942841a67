"""MkDocs adapter: each event hands its page or files to normsite (normsite.build.Site), where the logic lives."""

from __future__ import annotations

import functools
import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # normsite: beside normref, not in the wheel
from mkdocs.exceptions import PluginError  # noqa: E402
from mkdocs.structure.files import File, Files  # noqa: E402

from normsite import SiteError  # noqa: E402
from normsite.build import Site  # noqa: E402

_state: dict = {}


def _fail_build(fn):  # a SiteError names the page and the culprit; MkDocs reports a PluginError without a traceback
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except SiteError as e:
            raise PluginError(str(e)) from e
    return wrapper


@_fail_build
def on_config(config):
    site = _state["site"] = Site("zh" if str(config.theme["language"]).startswith("zh") else "en", config.docs_dir, config.site_dir)
    config.site_url, config.extra["nr_i18n"] = site.configure(config.site_url, config.repo_url, config.extra.get("repo_branch"))
    config.edit_uri, config.repo_name = site.repository["edit_uri"], site.repository["repo_name"]  # None: no repo
    config.extra["scope"] = site.scope  # one palette key for / and /en/ (Material's extra.scope)
    site.plugins(config.plugins)  # after theirs: MkDocs runs the hooks' on_config last
    return config


@_fail_build
def on_files(files: Files, config):
    for uri, content in _state["site"].generated({f.src_uri: f.abs_src_path for f in files}, config.theme.dirs):
        files.append(File.generated(config, uri, content=content))
    return files


@_fail_build
def on_page_markdown(markdown, page, config, files: Files):
    pages = [f.src_uri for f in files.documentation_pages()]
    page.render = _fail_build(_state["site"].checked_render(page.render, page.file.src_uri, page.file.abs_src_path))
    return _state["site"].page_markdown(markdown, page.file.src_uri, pages, config.nav)


@_fail_build
def on_page_content(html, page, config, files: Files):
    glossary = files.get_file_from_path("glossary.md")
    return _state["site"].page_html(html, page.file.src_uri, page.url, glossary.url if glossary else None, page.toc)


def on_page_context(context, page, config, nav):
    page.nr_notebook = _state["site"].notebook_downloads(page.file.src_uri)  # for overrides/main.html
    _state["site"].describe_notebook(page.file.src_uri, page.content, page.meta)  # its <meta name="description">
    return context


@_fail_build
def on_post_page(output, page, config):
    output = _state["site"].post_page(output, page.file.src_uri)
    return _state["site"].cite(output, page.file.src_uri, page.title, [a.title for a in reversed(page.ancestors)],
                               page.canonical_url or page.abs_url, page.url, config.site_name)


@_fail_build
def on_post_build(config):
    logging.getLogger("mkdocs.hooks.normref").info(_state["site"].post_build(config.site_dir))
