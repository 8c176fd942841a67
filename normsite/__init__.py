"""normsite: the site layer of normref docs.

It turns what ``normref`` computes into a site: directive expansion, the snippet
runner, math, notebook export, glossary linking and rendering, CSS trimming,
the reader's wheel, the print edition. It is importable and knows nothing of
MkDocs; ``hooks/*.py`` are thin adapters that call it.

The arrows point one way: ``normsite`` imports ``normref``; ``normref`` never
imports ``normsite`` (a test enforces this). ``normsite`` is not part of the
normref wheel that readers install.
"""
