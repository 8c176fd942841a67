"""normsite: the site layer of normref docs.

It turns what ``normref`` computes into a site: directive expansion, the snippet
runner, math, notebook export, glossary linking and rendering, CSS trimming,
the reader's wheel, the print edition. It is importable and knows nothing of
MkDocs; ``hooks/*.py`` are thin adapters that call it.

The arrows point one way: ``normsite`` imports ``normref``; ``normref`` never
imports ``normsite`` (a test enforces this). ``normsite`` is not part of the
normref wheel that readers install.

The site's content (glossary, cards, quiz, claims, their pydantic schema and the directive grammar)
is the subpackage :mod:`normsite.content`. Importing normsite plugs the content's values and widget data
into normref's registries (``normref._registry.plug``: normref imports them by name when a registry loads).

A build computes each result once without locks: its prepare pass plans every result as one task per
key, the experiments those read as tasks of their own that run first (:mod:`normsite.ahead`,
:mod:`normsite.pool`), and the MkDocs builds that follow find all of it in the cache.
"""

from normref.bilingual import LANGS  # noqa: E402  (the one definition: normref.bilingual)

from normref._registry import plug as _plug  # noqa: E402

_plug("normref.values", "normsite.content.values")
_plug("normref.data", "normsite.content.datasets")


class SiteError(Exception):
    """A page cannot be built: the message names the page and the culprit (a bad
    directive, a failing snippet, a formula KaTeX cannot parse). The MkDocs hooks
    turn it into a failed build."""
