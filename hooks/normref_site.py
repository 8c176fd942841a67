"""MkDocs adapter: each event hands MkDocs' objects to this build's normsite.build.Site, where the logic lives.

The site layer is importable and MkDocs-free (it duck-types MkDocs' config and pages). This hook keeps what needs
MkDocs itself: its File and table-of-contents classes, its PluginError, its event order, and a fresh import of the
site layer for each rebuild under `mkdocs serve`, so that every edit shows on the next rebuild."""

from __future__ import annotations

import importlib
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

# normsite lives beside normref, not in the wheel. MkDocs puts sys.path back as it was after it loads a hook
# (config_options.Hooks), so the root goes on it again before each import of the site layer (on_config):
# with the `mkdocs` console script, not `python -m mkdocs`, nothing else puts it there.
ROOT = str(Path(__file__).resolve().parent.parent)
sys.path.insert(0, ROOT)
from mkdocs.exceptions import PluginError  # noqa: E402
from mkdocs.plugins import event_priority  # noqa: E402
from mkdocs.structure.files import File, Files  # noqa: E402
from mkdocs.structure.toc import AnchorLink, TableOfContents  # noqa: E402

if TYPE_CHECKING:
    from jinja2 import Environment
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.pages import Page

_state: dict[str, Any] = {}


def _site(method: str, *args: Any, **kwargs: Any) -> Any:
    """The one dispatch: ``method`` of this build's Site (of the class, for ``from_config``). A SiteError names
    the page and the culprit; MkDocs reports it as a PluginError, without a traceback."""
    site = _state.get("site") or importlib.import_module("normsite.build").Site
    try:
        return getattr(site, method)(*args, **kwargs)
    except sys.modules["normsite"].SiteError as e:  # the class of the site layer as now imported
        raise PluginError(str(e)) from e


class _ExecutedNotebook(File):
    """A notebook page whose source is its executed .ipynb: still a page (MkDocs would copy a .py as a file)."""

    def is_documentation_page(self) -> bool:
        return True


def on_startup(command: str, dirty: bool) -> None:
    _state["serve"] = command == "serve"


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    # A rebuild under `mkdocs serve` (after any earlier build, even one that failed) imports the site layer anew.
    rebuild = _state.get("serve", False) and _state.get("configured", False)
    _state["configured"] = True
    if rebuild:
        for name in [m for m in sys.modules if m.split(".")[0] in ("normsite", "normref")]:
            del sys.modules[name]
    _state.pop("site", None)  # _site("from_config") asks the class
    _state["site"] = _site("from_config", config, rebuild=rebuild)
    return config


@event_priority(-50)  # after mkdocs-jupyter's on_files: a notebook page's source is its executed .ipynb
def on_files(files: Files, config: MkDocsConfig) -> Files:
    for uri, content in _site("generated", {f.src_uri: f.abs_src_path for f in files}, config.theme.dirs):
        files.append(File.generated(config, uri, content=content))
    # Each notebook page's source becomes its executed .ipynb (normsite.nbexec) through MkDocs' documented
    # File.generated(abs_src_path=...), with the same src_uri: the same URL, nav entry and edit link.
    # mkdocs-jupyter takes the page by that file (its include "*.ipynb") and only converts it.
    for uri, executed in _state["site"].executed.items():
        page = files.get_file_from_path(uri)
        swapped = _ExecutedNotebook.generated(config, uri, abs_src_path=executed, inclusion=page.inclusion)
        swapped.edit_uri = page.edit_uri
        files.remove(page)
        files.append(swapped)
    logging.getLogger("mkdocs.hooks.normref").info(_state["site"].prepare_log)  # the prepare pass's counts
    return files


def on_env(env: Environment, config: MkDocsConfig, files: Files) -> Environment:
    env.bytecode_cache = _site("template_cache")  # Material's templates compiled once, not per build
    return env


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    return _site("page_markdown", markdown, page.file.src_uri, [f.src_uri for f in files.documentation_pages()],
                 config.nav)


def on_pre_page(page: Page, config: MkDocsConfig, files: Files) -> Page:
    if "render" not in vars(page):  # mkdocs-jupyter renders a notebook page itself (it replaces page.render)
        plain = page.render
        page.render = lambda config, files: _site("render", page, config, files, plain, (AnchorLink, TableOfContents))
    return page


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    glossary = files.get_file_from_path("glossary.md")
    return _site("page_html", html, page.file.src_uri, page.url, glossary.url if glossary else None, page.toc)


def on_page_context(context: dict, page: Page, config: MkDocsConfig, nav: Any) -> dict:
    _site("page_context", page)
    return context


def on_post_page(output: str, page: Page, config: MkDocsConfig) -> str:
    return _site("finish_page", output, page, config.site_name)


def on_post_build(config: MkDocsConfig) -> None:
    logging.getLogger("mkdocs.hooks.normref").info(_site("post_build", config.site_dir))
