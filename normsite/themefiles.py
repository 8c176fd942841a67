"""The theme's static files, listed without Material's icon folder.

MkDocs adds a theme's static files by listing every file under the theme's folders (``Files.add_files_from_theme``:
jinja2's ``FileSystemLoader.list_templates``), then dropping, one path at a time, any that lies in a dot folder
(its filter's ``'.*'`` and ``'*/.*'``). Material keeps about 14,000 SVG icons in ``templates/.icons``, so a build
walked and filtered 14,500 paths to keep about 160: a fifth of a second of every warm build and of every rebuild
under `make serve`. Neither MkDocs nor jinja2 has a setting to skip a folder, hence this loader: it lists the same
paths but does not descend into dot folders, whose files the filter drops anyway (tests/test_themefiles.py
compares the two listings). Templates still load from every folder, ``.icons`` included (``get_source`` is
jinja2's own).
"""

from __future__ import annotations

import os

import jinja2

__all__ = ["ThemeLoader", "list_without_dot_folders"]


class ThemeLoader(jinja2.FileSystemLoader):
    """jinja2's FileSystemLoader, whose list_templates skips dot folders (its code otherwise, jinja2 3.1)."""

    def list_templates(self) -> list[str]:
        found = set()
        for searchpath in self.searchpath:
            for dirpath, dirnames, filenames in os.walk(searchpath, followlinks=self.followlinks):
                dirnames[:] = [d for d in dirnames if not d.startswith(".")]
                for filename in filenames:
                    template = os.path.join(dirpath, filename)[len(searchpath):].strip(os.path.sep).replace(os.path.sep, "/")
                    found.add(template[2:] if template[:2] == "./" else template)
        return sorted(found)


def list_without_dot_folders(theme) -> None:
    """Make ``theme`` (MkDocs' Theme) hand out environments whose loader is a :class:`ThemeLoader` over its folders:
    MkDocs' build, and Material's plugins, call ``theme.get_env()`` for each build."""
    get_env = type(theme).get_env

    def env():
        e = get_env(theme)
        e.loader = ThemeLoader(theme.dirs)
        return e

    theme.get_env = env
