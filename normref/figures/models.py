"""Figures of the real-model page: SmolLM2-135M (Pre-RMSNorm) and MiniLM-L6 (Post-LN), measured."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from . import figure, labels
from ._style import PALETTES, colors
from ..experiments.models import PROMPTS, run
from ..models.measurement import layer_rows

# The cached experiments this module reads (normref.experiments.declared): a build runs each once, first.
EXPERIMENTS = (
    "normref.experiments.models:run('smollm2-135m', 'en')",
    "normref.experiments.models:run('smollm2-135m', 'zh')",
    "normref.experiments.models:run('minilm-l6', 'en')",
)


t = labels(__name__)  # the labels: English here, Chinese in figures.yml (labels:)


def _prompts() -> dict:
    """The texts' placeholders: the page prompts (the English caption names the Chinese
    prompt without quoting it, so the English pages and their search index hold no Chinese)."""
    return {"prompt_en": PROMPTS["en"], "prompt_zh": PROMPTS["zh"]}


# ---------------------------------------------------------------- the forward-pass strip


@figure("models_forward_strip")
def models_forward_strip(lang: str, theme: str):
    # Drawn top to bottom, 7.2 in wide: the page shows it about at its own size, so its
    # smallest text stays at least 9 px on a desktop (tests/test_figures_browser.py).
    m = run("smollm2-135m", "en")["model"]
    p, c = PALETTES[theme], colors(theme)
    fig, ax = plt.subplots(figsize=(7.2, 5.4))
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 100)
    ax.axis("off")
    ax.grid(False)
    fs = 8.6

    def box(x, y, w, h, text, color, bold=False):
        ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.3,rounding_size=1.2", lw=1.6 if bold else 1.0,
                                    ec=color, fc=color + ("33" if bold else "14")))
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fs, color=p["fg"])

    def arrow(x0, y0, x1, y1):
        ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), arrowstyle="-|>", mutation_scale=9, lw=1, color=p["muted"]))

    norm_c, other_c, stream_c = c[0], c[1], c[2]
    xs = 30  # the residual stream runs down this line
    # Before the stack.
    box(xs - 13, 90, 26, 9, t(lang, "tokenize\nbyte-level BPE"), other_c)
    arrow(xs, 89.2, xs, 86.6)
    box(xs - 13, 77, 26, 9, t(lang, "embedding lookup\n{{vocab_size}} × {{d}}", vocab_size=m['vocab_size'], d=m['d']),
        other_c)
    ax.text(62, 88, t(lang, "RMSNorm(x) = x / √(mean(x²) + ε) · g\nε = {{eps:.0e}}, g has {{d}} entries", eps=m['eps'], d=m['d']),
            ha="left", va="center", fontsize=fs, color=norm_c)
    # The repeated block: the stream passes straight through; two branches read normalized copies.
    ax.add_patch(FancyBboxPatch((3, 22), 94, 50, boxstyle="round,pad=0.3,rounding_size=1.5", lw=1.2, ls="--",
                                ec=p["muted"], fc="none"))
    ax.text(96, 73.2, t(lang, "× {{n_layer}} layers (d = {{d}})", n_layer=m['n_layer'], d=m['d']),
            ha="right", va="bottom", fontsize=9.5, color=p["fg"])
    ax.plot([xs, xs], [76.4, 18], color=stream_c, lw=2.4, zorder=1)
    ax.text(xs - 3, 47, t(lang, "residual stream:\nnever normalized\ninside the stack"),
            ha="right", va="center", fontsize=fs, color=stream_c)
    for yb, y_add, label in (
        (62, 49, t(lang, "attention\n{{n_head}} Q / {{n_kv_head}} KV heads\nRoPE", n_head=m['n_head'], n_kv_head=m['n_kv_head'])),
        (39, 27, t(lang, "SwiGLU MLP\n{{d}} → {{d_ff}} → {{d}}", d=m['d'], d_ff=m['d_ff'])),
    ):
        ax.plot([xs, xs + 4], [yb, yb], color=p["muted"], lw=1)
        arrow(xs + 4, yb, xs + 6.6, yb)
        box(xs + 7, yb - 3.5, 17, 7, "RMSNorm", norm_c, bold=True)
        arrow(xs + 24.6, yb, xs + 28.4, yb)
        box(xs + 29, yb - 6, 28, 12, label, other_c)
        ax.plot([xs + 57.6, xs + 61, xs + 61, xs + 1.5], [yb, yb, y_add, y_add], color=p["muted"], lw=1)
        ax.text(xs, y_add, "⊕", ha="center", va="center", fontsize=16, color=stream_c, zorder=3)
    # After the stack.
    arrow(xs, 18, xs, 15.4)
    box(xs - 13, 3, 26, 11.5, t(lang, "final\nRMSNorm"), norm_c, bold=True)
    arrow(xs + 13.6, 8.75, xs + 17.4, 8.75)
    tied = t(lang, "\ntied to the embedding") if m.get("tied_head") else ""
    box(xs + 18, 2.5, 30, 12.5, t(lang, "LM head{{tied}}\n{{d}} → {{vocab_size}}", tied=tied, d=m['d'], vocab_size=m['vocab_size']),
        other_c)
    arrow(xs + 48.6, 8.75, xs + 53, 8.75)
    ax.text(xs + 54, 8.75, t(lang, "sample"), ha="left", va="center", fontsize=fs, color=p["fg"])
    fig.tight_layout(pad=0.2)
    return fig


# ---------------------------------------------------------------- L2 per token across layers


def _smol_panel(ax, doc, lang, c, p, title):
    rows = layer_rows(doc)
    x = np.array([r["layer"] for r in rows])
    n = doc["model"]["n_layer"]
    fin = doc["final"]
    stream = [r["stream"] for r in rows] + [fin["stream_in"]["l2_excl0"]]
    ax.semilogy(np.append(x, n), stream, color=c[2], lw=2.4, marker="o", ms=3,
                label=t(lang, "residual stream (entering the layer)"))
    ax.semilogy(x, [r["n1_pre"] for r in rows], color=c[0], lw=2.4,
                label=t(lang, "attention RMSNorm, before the gain"))
    ax.semilogy(x, [r["n1_post"] for r in rows], color=c[0], lw=1.4, ls="--",
                label=t(lang, "attention RMSNorm, after the gain"))
    ax.semilogy(x, [r["n2_post"] for r in rows], color=c[3], lw=1.4, ls=":",
                label=t(lang, "MLP RMSNorm, after the gain"))
    fn = fin["norms"][0]
    ax.plot([n], [fn["post_gain"]["l2_excl0"]], marker="D", color=c[4], ms=5, ls="none",
            label=t(lang, "final RMSNorm, after the gain"))
    ax.axhline(doc["sqrt_d"], color=p["muted"], lw=0.8, ls="-.")
    ax.annotate(f"√{doc['model']['d']} = {doc['sqrt_d']:g}", (n * 0.55, doc["sqrt_d"]), xytext=(0, 4),
                textcoords="offset points", color=c[0], fontsize=8.5)
    ax.set_xticks(list(range(0, n, 5)) + [n], [str(i) for i in range(0, n, 5)] + [t(lang, "end")])
    ax.set_xlabel(t(lang, "layer"))
    ax.set_title(title, fontsize=10)


def _mini_panel(ax, doc, lang, c, p, title):
    rows = layer_rows(doc)
    x = np.array([r["layer"] for r in rows])
    n = doc["model"]["n_layer"]
    stream = [r["stream"] for r in rows] + [doc["final"]["stream_in"]["l2_excl0"]]
    ax.semilogy(np.append(x, n), stream, color=c[2], lw=2.4, marker="o", ms=3,
                label=t(lang, "stream = output of the previous LayerNorm"))
    ax.semilogy(x, [r["n1_in"] for r in rows], color=c[1], lw=1.4, ls="--", marker=".",
                label=t(lang, "LayerNorm input x + attention(x)"))
    ax.semilogy(x, [r["n1_pre"] for r in rows], color=c[0], lw=2.4,
                label=t(lang, "LayerNorm, before γ and β"))
    ax.axhline(doc["sqrt_d"], color=p["muted"], lw=0.8, ls="-.")
    ax.annotate(f"√{doc['model']['d']} ≈ {doc['sqrt_d']:.1f}", (0, doc["sqrt_d"]), xytext=(0, 4),
                textcoords="offset points", color=c[0], fontsize=8.5)
    ax.set_xticks(list(range(n)) + [n], [str(i) for i in range(n)] + [t(lang, "end")])
    ax.set_xlabel(t(lang, "layer"))
    ax.set_title(title, fontsize=10)


@figure("models_l2_layers", fields=_prompts)
def models_l2_layers(lang: str, theme: str):
    c, p = colors(theme), PALETTES[theme]
    # Two rows at 7.2 in (shown at about its own size, so its smallest text stays at least 9 px):
    # the two SmolLM2 prompts side by side, then MiniLM beside the legends.
    fig, ax = plt.subplot_mosaic([["en", "zh"], ["mini", "legend"]], figsize=(7.2, 7.0))
    axes = [ax["en"], ax["zh"], ax["mini"]]
    _smol_panel(axes[0], run("smollm2-135m", "en"), lang, c, p,
                t(lang, "SmolLM2-135M · English prompt\n(Pre-RMSNorm)"))
    _smol_panel(axes[1], run("smollm2-135m", "zh"), lang, c, p,
                t(lang, "SmolLM2-135M · Chinese prompt"))
    _mini_panel(axes[2], run("minilm-l6", "en"), lang, c, p,
                t(lang, "MiniLM-L6 · English (Post-LN)"))
    for a in (axes[0], axes[2]):
        a.set_ylabel(t(lang, "mean L2 per token\n(position 0 excluded)"))
    # One y scale for all three panels, so that "grows" and "stays put" compare at a glance.
    lo = min(a.get_ylim()[0] for a in axes)
    hi = max(a.get_ylim()[1] for a in axes)
    for a in axes:
        a.set_ylim(lo, hi)
    axes[1].tick_params(labelleft=False)
    leg = ax["legend"]
    leg.axis("off")
    h, l = axes[0].get_legend_handles_labels()
    first = leg.legend(h, l, loc="upper left", fontsize=8.5, title="SmolLM2-135M", title_fontsize=9, borderaxespad=0)
    leg.add_artist(first)
    h, l = axes[2].get_legend_handles_labels()
    leg.legend(h, l, loc="lower left", fontsize=8.5, title="MiniLM-L6", title_fontsize=9, borderaxespad=0)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------- the learned gains


@figure("models_gains")
def models_gains(lang: str, theme: str):
    c, p = colors(theme), PALETTES[theme]
    doc = run("smollm2-135m", "en")
    n = doc["model"]["n_layer"]
    # Two rows at 7.2 in: shown at about its own size, its smallest text stays at least 9 px.
    fig, (a, b) = plt.subplots(2, 1, figsize=(7.2, 7.4), gridspec_kw={"height_ratios": [1.2, 1]})
    x = np.arange(n)
    for k, (name, col, lab) in enumerate((
        ("attn_norm", c[0], t(lang, "attention RMSNorm")),
        ("ffn_norm", c[1], t(lang, "MLP RMSNorm")),
    )):
        g = [L["norms"][k]["gain"] for L in doc["layers"]]
        a.fill_between(x, [v["min"] for v in g], [v["max"] for v in g], color=col, alpha=0.16, lw=0)
        a.plot(x, [v["median"] for v in g], color=col, lw=2.2, marker="o", ms=3,
               label=t(lang, "{{lab}}: median (band: min to max)", lab=lab))
    a.axhline(1.0, color=p["muted"], lw=1, ls="--")
    a.annotate(t(lang, "g = 1: the initial value, and the center of the Chinese lesson's synthetic picture"),
               (n - 1, 1.0), xytext=(0, 5), textcoords="offset points", color=p["muted"], fontsize=8.5, ha="right")
    a.set_xticks(list(range(0, n, 5)))
    a.set_xlabel(t(lang, "layer"))
    a.set_ylabel(t(lang, "gain value g"))
    a.set_title(t(lang, "Gain distribution per layer"), fontsize=10)
    a.legend(fontsize=8, loc="upper left")

    gains = doc["gains"]
    block = np.concatenate([gains[s]["weight"] for s in gains if s.startswith("blk.")])
    final = np.asarray(gains["final_norm"]["weight"])
    both = np.concatenate([block, final])
    lo = min(float(np.percentile(both, 0.1)), 0.0)
    hi = max(float(np.percentile(both, 99.9)), 1.1)
    bins = np.linspace(lo, hi, 70)
    b.hist(np.clip(block, lo, hi), bins=bins, density=True, color=c[1], alpha=0.55,
           label=t(lang, "{{n}} block gains", n=len(block)))
    b.hist(np.clip(final, lo, hi), bins=bins, density=True, histtype="step", lw=2, color=c[4],
           label=t(lang, "{{n}} final-norm gains", n=len(final)))
    b.axvline(1.0, color=p["muted"], lw=1, ls="--")
    b.set_xlabel(t(lang, "gain g (the rare values beyond 0.1 % / 99.9 % are piled at the edges)"))
    b.set_ylabel(t(lang, "density"))
    b.set_title(t(lang, "All gains"), fontsize=10)
    b.legend(fontsize=8)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------- position 0


@figure("models_massive", fields=_prompts)
def models_massive(lang: str, theme: str):
    c, p = colors(theme), PALETTES[theme]
    # Two rows at 7.2 in: shown at about its own size, its smallest text stays at least 9 px.
    fig, (a, b) = plt.subplots(2, 1, figsize=(7.2, 6.8), sharex=True)
    for pl, col, name in (("en", c[0], t(lang, "English")), ("zh", c[1], t(lang, "Chinese"))):
        doc = run("smollm2-135m", pl)
        rows = layer_rows(doc)
        x = [r["layer"] for r in rows]
        a.semilogy(x, [r["pos0"] for r in rows], color=col, lw=2.2,
                   label=t(lang, "position 0 ({{name}})", name=name))
        a.semilogy(x, [r["stream"] for r in rows], color=col, lw=1.3, ls="--",
                   label=t(lang, "mean of the others ({{name}})", name=name))
        b.plot(x, [r["pos0_share"] for r in rows], color=col, lw=2.2,
               label=t(lang, "position 0 ({{name}})", name=name))
        others = [float(np.median(L["stream_in"]["top_share"][1:])) for L in doc["layers"]]
        b.plot(x, others, color=col, lw=1.3, ls="--", label=t(lang, "median of the others ({{name}})", name=name))
    dims = sorted({r["pos0_dim"] for r in layer_rows(run("smollm2-135m", "en")) if r["pos0_share"] > 0.5})
    a.set_xlabel(t(lang, "layer (stream entering it)"))
    a.set_ylabel(t(lang, "L2 per token"))
    a.set_title(t(lang, "Length of position 0"), fontsize=10)
    a.legend(fontsize=8)
    b.set_ylim(0, 1.02)
    b.set_xlabel(t(lang, "layer"))
    b.set_ylabel(t(lang, "share of norm² in the largest dimension"))
    b.set_title(t(lang, "Almost all in one dimension: dim {{dims}}", dims=', '.join(map(str, dims))), fontsize=10)
    b.legend(fontsize=8)
    fig.tight_layout()
    return fig
