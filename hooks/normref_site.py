"""MkDocs adapter: each event hands its page or files to normsite (normsite.build.Site), where the logic lives.

What normref computes comes from the prepare pass (normsite.prepare: a fresh process, once for both languages, none
when nothing it reads changed); under
`mkdocs serve` each rebuild also re-imports the site layer, so every edit shows on the next rebuild."""

from __future__ import annotations

import functools
import importlib
import logging
import sys
from pathlib import Path

# normsite lives beside normref, not in the wheel. MkDocs puts sys.path back as it was after it loads a hook
# (config_options.Hooks), so the root goes on it again before each import of the site layer (_root_on_path):
# with the `mkdocs` console script, not `python -m mkdocs`, nothing else puts it there.
ROOT = str(Path(__file__).resolve().parent.parent)
sys.path.insert(0, ROOT)
from mkdocs.exceptions import PluginError  # noqa: E402
from mkdocs.plugins import event_priority  # noqa: E402
from mkdocs.structure.files import File, Files  # noqa: E402
from mkdocs.structure.toc import AnchorLink, TableOfContents  # noqa: E402

_state: dict = {}


def _fail_build(fn):  # a SiteError names the page and the culprit; MkDocs reports a PluginError without a traceback
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except importlib.import_module("normsite").SiteError as e:  # the class of the site layer as now imported
            raise PluginError(str(e)) from e
    return wrapper


def _root_on_path() -> None:
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)


def on_startup(command, dirty):
    _state["serve"] = command == "serve"


@_fail_build
def on_config(config):
    _root_on_path()
    rebuild = bool(_state.get("serve") and "site" in _state)
    if rebuild:  # a rebuild under `mkdocs serve`: the site layer as it is now
        for name in [m for m in sys.modules if m.split(".")[0] in ("normsite", "normref")]:
            del sys.modules[name]
    Site = importlib.import_module("normsite.build").Site
    site = _state["site"] = Site("zh" if str(config.theme["language"]).startswith("zh") else "en", config.docs_dir,
                                 config.site_dir, rebuild=rebuild)
    config.site_url, config.extra["nr_i18n"] = site.configure(config.site_url, config.repo_url, config.extra.get("repo_branch"))
    config.edit_uri, config.repo_name = site.repository["edit_uri"], site.repository["repo_name"]  # None: no repo
    config.extra["scope"] = site.scope  # one palette key for / and /en/ (Material's extra.scope)
    site.plugins(config.plugins)  # after theirs: MkDocs runs the hooks' on_config last
    importlib.import_module("normsite.themefiles").list_without_dot_folders(config.theme)
    return config


class _ExecutedNotebook(File):
    """A notebook page whose source is its executed .ipynb: still a page (MkDocs would copy a .py as a file)."""

    def is_documentation_page(self) -> bool:
        return True


@event_priority(-50)  # after mkdocs-jupyter's on_files: a notebook page's source is its executed .ipynb
@_fail_build
def on_files(files: Files, config):
    site = _state["site"]
    for uri, content in site.generated({f.src_uri: f.abs_src_path for f in files}, config.theme.dirs):
        files.append(File.generated(config, uri, content=content))
    # Each notebook page's source becomes its executed .ipynb (normsite.nbexec) through MkDocs' documented
    # File.generated(abs_src_path=...), with the same src_uri: the same URL, nav entry and edit link.
    # mkdocs-jupyter takes the page by that file (its include "*.ipynb") and only converts it.
    for uri, executed in site.executed.items():
        page = files.get_file_from_path(uri)
        swapped = _ExecutedNotebook.generated(config, uri, abs_src_path=executed, inclusion=page.inclusion)
        swapped.edit_uri = page.edit_uri
        files.remove(page)
        files.append(swapped)
    logging.getLogger("mkdocs.hooks.normref").info(_state["site"].prepare_log)  # the prepare pass's counts
    return files


def on_env(env, config, files):
    env.bytecode_cache = _state["site"].template_cache()  # Material's templates compiled once, not per build
    return env


@_fail_build
def on_page_markdown(markdown, page, config, files: Files):
    pages = [f.src_uri for f in files.documentation_pages()]
    return _state["site"].page_markdown(markdown, page.file.src_uri, pages, config.nav)


def on_pre_page(page, config, files: Files):
    if "render" not in vars(page):  # mkdocs-jupyter renders a notebook page itself (it replaces page.render)
        plain = page.render
        page.render = lambda config, files: _state["site"].render(page, config, files, plain,
                                                                  (AnchorLink, TableOfContents))
    return page


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
