"""The attention sink in SmolLM2-135M-Instruct: how much attention goes to position 0, on the 8 texts of
the drop-norm measurement (normref.experiments.sink).

Probabilities are printed as percentages. Unless a name says otherwise, a number averages the query
positions 1..T-1, every head of the blocks from ``sink.from_layer`` on and the texts. Blocks are numbered from 1, as the
drop-norm page (where these values are used) numbers them; the experiment indexes them from 0.
"""

from __future__ import annotations

from ..labels import labels
from . import Column, Table, count, fmt, register, register_tables

# The cached experiments this module reads (normref.experiments.declared): a build runs each once, first.
EXPERIMENTS = (
    'normref.experiments.sink:sink()',
)


t = labels(__name__)  # the Chinese is in normref/labels.yml


def _s() -> dict:
    from ..experiments.sink import summary

    return summary()


def _pct(v: float) -> str:
    return fmt(100 * v, 1) + "%"


def _layers(lang: str) -> Table:
    """One row per block: attention on position 0 (mean over heads and texts; the lowest and highest text's
    mean over heads), on the query's own position, and how many heads give position 0 more than half."""
    import numpy as np

    from ..experiments.sink import sink

    d = sink()
    S = np.array([x["sink"] for x in d["texts"]])  # (texts, layers, heads)
    A = np.array([x["self"] for x in d["texts"]])
    by_text = S.mean(axis=2)
    heads = S.mean(axis=0)
    cols = (Column(t(lang, "block"), "left"), Column(t(lang, "position 0")), Column(t(lang, "lowest text")),
            Column(t(lang, "highest text")), Column(t(lang, "own position")),
            Column(t(lang, "heads over 1/2 (of {{n}})", n=S.shape[2])))
    rows = tuple((str(i + 1), _pct(S[:, i].mean()), _pct(by_text[:, i].min()), _pct(by_text[:, i].max()),
                  _pct(A[:, i].mean()), count(int((heads[i] > 0.5).sum()))) for i in range(S.shape[1]))
    return Table(cols, rows)


register({
    "sink.from_layer": lambda: str(_s()["from_layer"] + 1),
    "sink.mean": lambda: _pct(_s()["mean"]),  # attention on position 0
    "sink.text_min": lambda: _pct(_s()["text_min"]),  # the lowest and highest text's mean
    "sink.text_max": lambda: _pct(_s()["text_max"]),
    "sink.uniform": lambda: _pct(_s()["uniform"]),  # position 0's share if attention were spread evenly
    "sink.over_uniform": lambda: fmt(_s()["mean"] / _s()["uniform"], 0),
    "sink.self": lambda: _pct(_s()["self"]),  # attention on the query's own position
    "sink.early": lambda: _pct(_s()["early"]),  # blocks before sink.from_layer
    "sink.max_layer": lambda: str(_s()["max_layer"] + 1),
    "sink.max_layer_mean": lambda: _pct(_s()["max_layer_mean"]),
    "sink.runner_up_layer": lambda: str(_s()["runner_up_layer"] + 1),  # the block with the next most
    "sink.runner_up_mean": lambda: _pct(_s()["runner_up_mean"]),
    "sink.n_first": lambda: count(_s()["n_first"]),  # attention on the first n_first positions together
    "sink.first": lambda: _pct(_s()["first"]),
    "sink.first_text_min": lambda: _pct(_s()["first_text_min"]),
    "sink.first_uniform": lambda: _pct(_s()["first_uniform"]),  # the first n_first positions' uniform share
    "sink.heads_over_half": lambda: count(_s()["heads_over_half"]),  # of sink.n_heads, mean over texts > 1/2
    "sink.n_heads": lambda: count(_s()["n_heads"]),
})
register_tables({"sink.layers": _layers})
