"""How the pages print numbers (fixed digits, a real minus sign, thin-space groups).

Apart from the registry (normref.values) so that code outside the package can format a number the way
the pages do without depending, in its cache key, on every value module (normref.cache.closure).
"""

from __future__ import annotations

__all__ = ["fmt", "count", "fmt_vec", "approx"]


def fmt(v: float, digits: int = 2) -> str:
    """Format a number the way the pages print it: fixed digits, a real minus sign, no '-0.00'."""
    s = f"{v:.{digits}f}"
    if float(s) == 0:
        s = s.lstrip("-")
    return s.replace("-", "−")


def count(n: int) -> str:
    """A whole number the way the pages print it: five digits and more in groups of three with a thin space
    (24 318, 100 000), four digits and fewer as they are (4000, 576)."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"n must be an int, got {type(n).__name__}")
    return f"{n:,}".replace(",", "\u2009") if abs(n) >= 10_000 else str(n)


def fmt_vec(vs, digits: int = 2) -> str:
    return "[" + ", ".join(fmt(float(v), digits) for v in vs) + "]"


def approx(n: int | float, lang: str, digits: int = 2) -> str:
    """A large count rounded to ``digits`` significant digits in each language's own units: Chinese counts in
    万 and 亿 (80 619 → "8.1 万"), English in thousand and million (→ "81 thousand"). The page writes "约 …个字符" /
    "about … characters" around it."""
    if isinstance(n, bool) or not isinstance(n, (int, float)):
        raise TypeError(f"n must be a number, got {type(n).__name__}")
    if lang not in ("zh", "en"):
        raise ValueError(f"lang must be 'zh' or 'en', got {lang!r}")
    if not n >= 1000:
        raise ValueError(f"n must be at least 1000 (a smaller count is printed as it is), got {n!r}")
    units = [(1e8, " 亿"), (1e4, " 万")] if lang == "zh" else [(1e6, " million"), (1e3, " thousand")]
    scale, word = next((u, w) for u, w in units if n >= u) if n >= units[-1][0] else (1, "")
    return f"{float(f'{n / scale:.{digits}g}'):g}{word}"
