"""The site figures' colors, for plots of your own (the site's notebooks use them).

    import matplotlib.pyplot as plt
    import normref.figures.palette as palette

    plt.rcParams.update(palette.rc())       # the figures' look, on no background
    ax.plot(x, y, color=palette.POST_LN)    # Post-LN and Pre-LN as in every figure

Importing this module does not import matplotlib (nor set its backend), so a
notebook's inline plots keep working. figures/_style.py draws the site's
figures with the same PALETTES.
"""

from __future__ import annotations

THEMES = ("light", "dark")
# Material's palette: text colors match the page in each scheme, and the
# figure background is transparent so the page shows through.
PALETTES = {
    "light": {"fg": "#1f2328", "muted": "#6a737d", "grid": "#d0d7de",
              "c": ["#c2185b", "#1565c0", "#2e7d32", "#ef6c00", "#6a1b9a", "#00838f"]},
    "dark": {"fg": "#e3e6ea", "muted": "#9aa4ad", "grid": "#3d444d",
             "c": ["#f48fb1", "#90caf9", "#a5d6a7", "#ffcc80", "#ce93d8", "#80deea"]},
}
# The figures' roles for the series colors (light scheme; PALETTES["dark"]["c"] in the same order).
POST_LN, PRE_LN = PALETTES["light"]["c"][0], PALETTES["light"]["c"][1]


def rc(theme: str = "light") -> dict:
    """matplotlib rcParams for the figures' look in ``theme``: the series colors in the figures'
    order (Post-LN first, Pre-LN second), text and grid colors, and a transparent background."""
    if theme not in THEMES:
        raise ValueError(f"theme must be one of {THEMES}, got {theme!r}")
    from matplotlib import cycler  # matplotlib.cycler: the notebooks install matplotlib (the plot extra)

    p = PALETTES[theme]
    return {
        "axes.prop_cycle": cycler(color=p["c"]),
        "text.color": p["fg"], "axes.labelcolor": p["fg"], "axes.edgecolor": p["muted"],
        "xtick.color": p["muted"], "ytick.color": p["muted"],
        "xtick.labelcolor": p["fg"], "ytick.labelcolor": p["fg"],
        "grid.color": p["grid"], "legend.frameon": False,
        "figure.facecolor": "none", "axes.facecolor": "none", "savefig.transparent": True,
    }
