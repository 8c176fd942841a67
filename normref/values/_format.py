"""How the pages print numbers (fixed digits, a real minus sign, thin-space groups).

Apart from the registry (normref.values) so that code outside the package can format a number the way
the pages do without depending, in its cache key, on every value module (normref.cache.closure).
"""

from __future__ import annotations

__all__ = ["fmt", "count", "fmt_vec"]


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
