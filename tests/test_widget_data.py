"""The datasets the content-page widgets read (no browser): glossary filter terms, softmax sweep."""

from __future__ import annotations

import numpy as np
import pytest

from normref import data as nrdata
from normsite.content.glossary import default


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_glossary_dataset_lists_every_term_with_all_spellings(lang):
    got = nrdata.get("glossary", lang)
    g = default()
    assert sorted(t["id"] for t in got) == sorted(g.ids())
    for t in got:
        term = g.get(t["id"])
        assert t["forms"] == term.forms() and t["group"] == term.group
    # Page order: grouped in the glossary's group order, as render_markdown writes them.
    groups = [grp.id for grp in g.groups]
    assert [groups.index(t["group"]) for t in got] == sorted(groups.index(t["group"]) for t in got)


def test_glossary_dataset_rejects_unknown_language():
    with pytest.raises(ValueError, match="lang"):
        nrdata.get("glossary", "fr")


def test_softmax_dataset_is_normrefs_sweep():
    from normref.experiments.softmax import SCORES, SHOWN_SCALES, softmax

    d = nrdata.get("softmax_saturation", "en")
    scales = np.asarray(d["scales"], dtype=float)
    assert set(SHOWN_SCALES) <= set(scales.tolist())
    p = softmax(scales[:, None] * SCORES[None, :])
    assert np.allclose(np.asarray(d["p"], dtype=float), p, atol=1e-6)
    assert np.allclose(np.asarray(d["top"], dtype=float), p.max(axis=1), atol=1e-6)
