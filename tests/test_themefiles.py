"""normsite.themefiles: MkDocs adds the same theme files when the listing skips Material's dot folders."""

from __future__ import annotations

import jinja2
import pytest

from support import ROOT

pytest.importorskip("mkdocs")


def _theme_files(config, env) -> list[tuple[str, str]]:
    from mkdocs.structure.files import Files

    files = Files([])
    files.add_files_from_theme(env, config)
    return sorted((f.src_uri, f.abs_src_path) for f in files)


def test_the_theme_files_a_build_adds_are_the_same_and_icons_still_load(monkeypatch):
    from mkdocs.config import load_config

    from normsite.themefiles import ThemeLoader, list_without_dot_folders

    monkeypatch.chdir(ROOT)
    config = load_config(str(ROOT / "mkdocs.en.yml"))
    plain = config.theme.get_env()
    assert type(plain.loader) is jinja2.FileSystemLoader
    list_without_dot_folders(config.theme)
    pruned = config.theme.get_env()
    assert isinstance(pruned.loader, ThemeLoader) and pruned.loader.searchpath == plain.loader.searchpath
    every = plain.loader.list_templates()
    listed = pruned.loader.list_templates()
    assert any(p.startswith(".icons/") for p in every) and not any("/." in "/" + p for p in listed)
    assert set(listed) < set(every)
    # what MkDocs adds from the theme is the same, file for file
    want = _theme_files(config, plain)
    assert want and _theme_files(config, pruned) == want
    # a template in a dot folder still loads (Material includes its icons as templates)
    icon = next(p for p in every if p.startswith(".icons/material/") and p.endswith(".svg"))
    assert "<svg" in pruned.get_template(icon).render()
