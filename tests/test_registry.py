"""The registries of figures, values, tables and widget data against the pages that use them.

Every registered name is used by some page (no orphans: a figure nobody shows
is work the build does for nothing, and a value nobody states is a fact nobody
checks), and every name a page uses is registered.
"""

from __future__ import annotations

import pytest

from support import ROOT
from normref import data, figures, values
from normsite import directives, ledger

KINDS = {"figure": figures.names, "value": values.names, "table": values.table_names, "data": data.names}


def _used() -> dict[str, dict[str, list[str]]]:
    """{kind: {name: [files that use it]}} over both languages' pages and notebooks, and the claim ledger's
    reasons and scales (the ledger page shows them through [[ledger]])."""
    used: dict[str, dict[str, list[str]]] = {k: {} for k in KINDS}
    for lang in ("zh", "en"):
        for f in sorted((ROOT / "docs" / lang).rglob("*")):
            if f.suffix in (".md", ".py", ".ipynb") and f.is_file():
                for kind, name in directives.DIRECTIVE.findall(f.read_text(encoding="utf-8")):
                    if kind in used:
                        used[kind].setdefault(name, []).append(str(f.relative_to(ROOT)))
    where = str(ledger.DATA.relative_to(ROOT))
    for claim in ledger.load().claims:
        for lang in ("zh", "en"):
            for kind, name in directives.DIRECTIVE.findall(claim.why[lang] + " " + claim.scale.size[lang]):
                if kind in used:
                    used[kind].setdefault(name, []).append(f"{where} ({claim.id})")
    return used


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_registered_name_is_used_by_a_page(kind):
    orphans = sorted(set(KINDS[kind]()) - set(_used()[kind]))
    assert not orphans, f"registered {kind}s that no page uses (use them or delete them): {', '.join(orphans)}"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_name_a_page_uses_is_registered(kind):
    unknown = {n: pages for n, pages in _used()[kind].items() if n not in set(KINDS[kind]())}
    assert not unknown, f"pages use unknown {kind}s: {unknown}"


def test_the_orphan_check_sees_an_unused_value(monkeypatch):
    values.names()  # load the registry first
    monkeypatch.setitem(values._REGISTRY._items, "nobody.uses.this", lambda lang: "1")
    with pytest.raises(AssertionError, match="nobody.uses.this"):
        test_every_registered_name_is_used_by_a_page("value")


def test_a_value_computes_without_or_with_lang():
    with pytest.raises(TypeError, match="takes no argument or just lang"):
        values.register({"bad.value": lambda lang, x: "1"})
    with pytest.raises(TypeError, match="expected a function"):
        values.register({"bad.value": "1"})
    with pytest.raises(ValueError, match="lang must be one of"):
        values.get("worked.x", "fr")


def test_a_table_renders_as_markdown():
    t = values.Table((values.Column("name", "left", code=True), values.Column("time")),
                     (("F.rms_norm", "1.5 ms"), ("a|b", ""), ("", "2 ms")))
    assert directives.table_md(t) == ("| name | time |\n|---|---:|\n| `F.rms_norm` | 1.5 ms |\n| `a\\|b` |  |\n"
                                      "|  | 2 ms |")
    with pytest.raises(ValueError, match="a row has 1 cells for 2 columns"):
        values.Table(t.columns, (("x",),))
    with pytest.raises(ValueError, match="align must be"):
        values.Column("x", "centre")


def test_an_unknown_table_fails_the_page():
    from normsite import SiteError

    with pytest.raises(SiteError, match=r"page.md: bad \[\[table: nope\]\]: .*unknown table 'nope'"):
        directives.expand("[[table: nope]]", "en", "page.md")


def test_a_figure_without_texts_fails_the_page_naming_it(tmp_path, monkeypatch):
    from normsite import SiteError

    empty = tmp_path / "figures.yml"
    empty.write_text("figures: {}\n", encoding="utf-8")
    monkeypatch.setattr(figures, "TEXTS", empty)
    with pytest.raises(SiteError, match=r"page.md: bad \[\[figure: scale_invariance\]\]: figures.yml: no alt text and caption .*scale_invariance"):
        directives.expand("[[figure: scale_invariance]]", "en", "page.md")
