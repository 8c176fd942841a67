"""Shared look of the figures: fonts (CJK from pip), light/dark palettes, helpers."""

from __future__ import annotations

import contextlib
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # figures are rendered headless, at build time
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import font_manager  # noqa: E402

from .palette import PALETTES  # noqa: E402  (one palette for the figures and the notebooks)

_CJK = "Noto Sans CJK SC"


def _register_cjk_font() -> None:
    """Register Noto Sans CJK SC shipped by the mplfonts wheel (no system font needed)."""
    import mplfonts

    path = Path(mplfonts.__file__).parent / "fonts" / "NotoSansCJKsc-Regular.otf"
    if not path.exists():
        raise FileNotFoundError(f"CJK font not found at {path}; is mplfonts installed?")
    if _CJK not in {f.name for f in font_manager.fontManager.ttflist}:
        font_manager.fontManager.addfont(str(path))


def colors(theme: str) -> list[str]:
    return PALETTES[theme]["c"]


@contextlib.contextmanager
def context(lang: str, theme: str):
    _register_cjk_font()
    p = PALETTES[theme]
    rc = {
        # DejaVu Sans for Latin, falling back per glyph to Noto Sans CJK SC.
        "font.family": ["DejaVu Sans", _CJK],
        "font.size": 10,
        "axes.unicode_minus": True,
        "text.color": p["fg"], "axes.labelcolor": p["fg"], "axes.edgecolor": p["muted"],
        "xtick.color": p["muted"], "ytick.color": p["muted"],
        "xtick.labelcolor": p["fg"], "ytick.labelcolor": p["fg"],
        "grid.color": p["grid"], "axes.grid": True, "grid.linewidth": 0.6,
        "axes.spines.top": False, "axes.spines.right": False,
        "axes.prop_cycle": matplotlib.cycler(color=p["c"]),
        "legend.frameon": False, "figure.dpi": 100,
        "svg.hashsalt": "normref",  # stable ids: two builds give the same bytes
        "svg.fonttype": "path",  # glyphs as paths: the reader needs no CJK font
        "path.simplify": True,
    }
    with plt.rc_context(rc):
        yield
