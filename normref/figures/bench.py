"""Figures of the performance page, drawn from the committed benchmark run.

Nothing is timed here: every number comes from ``normref/results/bench-cpu.json``
(a full ``python -m normref bench`` run), whose bytes are part of the cache key
of these figures through ``normref.results``.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator, PercentFormatter

from . import figure, labels
from ._style import PALETTES, colors
from ..results import bench_cpu

t = labels(__name__)  # the labels: English here, Chinese in figures.yml (labels:)


# family -> (label, color index); the copy is drawn separately.
FAMILY_LABEL = {
    "composed": ("composed ops", 3),
    "functional": ("F.*_norm", 1),
    "module": ("torch.nn modules", 5),
    "compiled": ("torch.compile", 4),
    "normref": ("normref", 0),
}
MODE_LABEL = {"forward": "forward", "forward+backward": "forward + backward"}
NORM_STYLE = {"rms": "-", "ln": "--"}


def _machine(lang: str, rep: dict) -> str:
    m = rep["machine"]
    date = m["date"][:10]
    return t(lang, "measured: {{cpu_model}}, {{torch_threads}} threads, torch {{torch}}, {{date}}",
             cpu_model=m["cpu_model"], torch_threads=m["torch_threads"], torch=m["torch"], date=date)


def _rows(rep, mode="forward", dtype="float32"):
    return [r for r in rep["results"] if r["device"] == "cpu" and r["mode"] == mode and r["dtype"] == dtype]


def _families(rows):
    return [f for f in FAMILY_LABEL if any(r["family"] == f for r in rows)]


def _series(rows, family, norm, key):
    pts = sorted((r["d"], key(r)) for r in rows if r["family"] == family and r["norm"] == norm)
    return [p[0] for p in pts], [p[1] for p in pts]


def _dims_axis(ax, dims):
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(dims))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([str(d) for d in dims])


@figure("bench_time")
def bench_time(lang: str, theme: str):
    rep = bench_cpu()
    rows = _rows(rep)
    c, p = colors(theme), PALETTES[theme]
    fig, ax = plt.subplots(figsize=(7.2, 4.2))
    dims, copy = _series(rows, "copy", "copy", lambda r: r["time_s"]["median"] * 1e3)
    ax.plot(dims, copy, color=p["muted"], lw=2, ls=":", label=t(lang, "copy x.clone() (roofline)"))
    for fam in _families(rows):
        label, ci = FAMILY_LABEL[fam]
        for norm in ("rms", "ln"):
            ds, ms = _series(rows, fam, norm, lambda r: r["time_s"]["median"] * 1e3)
            if ds:
                name = "RMSNorm" if norm == "rms" else "LayerNorm"
                ax.plot(ds, ms, color=c[ci], ls=NORM_STYLE[norm], lw=1.8, marker="o", ms=3,
                        label=f"{t(lang, label)} · {name}")
    _dims_axis(ax, dims)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if str(f"{v:g}")[0] in "25" else ""))
    ax.set_xlabel(t(lang, "hidden size d (rows = total elements / d)"))
    ax.set_ylabel(t(lang, "forward time (ms, median, log scale)"))
    ax.set_title(t(lang, "Same bytes, several-fold apart: the kernel matters, not the formula"),
                 fontsize=10)
    ax.legend(fontsize=7, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.17))
    fig.text(0.01, 0.005, _machine(lang, rep), fontsize=7, color=p["muted"])
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    return fig


@figure("bench_roofline")
def bench_roofline(lang: str, theme: str):
    rep = bench_cpu()
    c, p = colors(theme), PALETTES[theme]
    d = 4096 if any(r["d"] == 4096 for r in rep["results"]) else max(r["d"] for r in rep["results"])
    modes = [m for m in ("forward", "forward+backward") if any(r["mode"] == m for r in _rows(rep, m))]
    fig, axes = plt.subplots(1, len(modes), figsize=(7.2, 3.9), sharey=True, squeeze=False)
    axes[0][0].invert_yaxis()  # first bar on top (the axes share y: invert once)
    for ax, mode in zip(axes[0], modes):
        rows = [r for r in _rows(rep, mode) if r["d"] == d and r["family"] != "copy"]
        labels, vals, cols, hatches = [], [], [], []
        for fam in _families(rows):
            label, ci = FAMILY_LABEL[fam]
            for norm in ("rms", "ln"):
                hit = [r for r in rows if r["family"] == fam and r["norm"] == norm]
                if hit:
                    labels.append(f"{t(lang, label)} · {'RMS' if norm == 'rms' else 'LN'}")
                    vals.append(hit[0]["copy_fraction"] * 100)
                    cols.append(c[ci])
                    hatches.append("" if norm == "rms" else "//")
        y = range(len(vals))
        bars = ax.barh(list(y), vals, color=cols, edgecolor=p["fg"], linewidth=0.3)
        for bar, h in zip(bars, hatches):
            bar.set_hatch(h)
        for yi, v in zip(y, vals):
            ax.text(v + 1.5, yi, f"{v:.0f}%", va="center", fontsize=7, color=p["fg"])
        ax.axvline(100, color=p["muted"], ls=":", lw=1.2)
        ax.set_yticks(list(y))
        ax.set_yticklabels(labels, fontsize=8)
        ax.xaxis.set_major_formatter(PercentFormatter())
        ax.set_xlim(0, max(115, max(vals) + 20))
        ax.set_title(t(lang, MODE_LABEL[mode]), fontsize=10)
        ax.set_xlabel(t(lang, "share of the copy bandwidth"))
        ax.grid(axis="y", visible=False)
    fig.suptitle(t(lang, "How close to the roofline (d = {{d}})", d=d), fontsize=11)
    fig.text(0.01, 0.005, _machine(lang, rep), fontsize=7, color=p["muted"])
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


@figure("bench_ratio")
def bench_ratio(lang: str, theme: str):
    rep = bench_cpu()
    c, p = colors(theme), PALETTES[theme]
    rs = [r for r in rep["ratios"] if r["device"] == "cpu" and r["dtype"] == "float32" and r["mode"] == "forward"]
    fig, ax = plt.subplots(figsize=(7.2, 3.9))
    dims = sorted({r["d"] for r in rs})
    for fam in [f for f in FAMILY_LABEL if any(r["family"] == f for r in rs)]:
        label, ci = FAMILY_LABEL[fam]
        pts = sorted((r["d"], r["rms_over_ln"]) for r in rs if r["family"] == fam)
        ax.plot([q[0] for q in pts], [q[1] for q in pts], color=c[ci], lw=2, marker="o", ms=3, label=t(lang, label))
    ax.axhline(1, color=p["muted"], ls=":", lw=1.2)
    ax.annotate(t(lang, "RMSNorm faster ↓"), (dims[0], 1), xytext=(2, -12),
                textcoords="offset points", fontsize=8, color=p["muted"])
    _dims_axis(ax, dims)
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(FixedLocator([0.25, 0.5, 1, 2, 4]))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_yticklabels(["0.25", "0.5", "1", "2", "4"])
    ax.set_xlabel(t(lang, "hidden size d"))
    ax.set_ylabel(t(lang, "RMSNorm time ÷ LayerNorm time"))
    ax.set_title(t(lang, "Whether RMSNorm is faster depends on the implementation you get"),
                 fontsize=10)
    ax.legend(fontsize=8, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.2))
    fig.text(0.01, 0.005, _machine(lang, rep), fontsize=7, color=p["muted"])
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    return fig
