"""The print edition's Chinese font: a TrueType subset of Noto Sans CJK SC holding the edition's characters
(normsite.printed's docstring says why). A module of its own, so that the subset's cache key covers this code and
not the rest of the print edition's: an edit to how chapters are assembled does not cut the font again."""

from __future__ import annotations

from pathlib import Path

__all__ = ["CJK_RANGES", "CJK_FONT_PATH", "cjk_chars", "cjk_font", "cjk_font_begun"]

# What the subset covers, as an @font-face unicode-range too: CJK symbols and
# punctuation, kana, CJK ideographs (and extension A), compatibility ideographs,
# vertical and small forms, full-width forms. Not the radicals (U+2E80-U+2FDF,
# U+31C0-U+31EF): those code points are what the PDF's text must not say.
CJK_RANGES = ((0x3000, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0xFE10, 0xFE1F),
              (0xFE30, 0xFE4F), (0xFF00, 0xFFEF))
CJK_FONT_PATH = "assets/fonts/print-cjk.ttf"  # site path, linked from print.css


def cjk_chars(text: str) -> str:
    """The characters of ``text`` that the CJK font must hold, sorted, once each."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    # Each distinct character once (a page has a million characters but a few thousand distinct ones).
    return "".join(sorted(c for c in set(text) if any(lo <= ord(c) <= hi for lo, hi in CJK_RANGES)))


def _cjk_source() -> Path:
    """Noto Sans CJK SC in the mplfonts package, found without importing it (importing it imports matplotlib)."""
    import importlib.util

    spec = importlib.util.find_spec("mplfonts")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the CJK font comes from the mplfonts package, which is not installed")
    return Path(list(spec.submodule_search_locations)[0]) / "fonts" / "NotoSansCJKsc-Regular.otf"


def _font_identity(src: Path) -> str:
    """What names the source font in the key: the version of the package that ships it (pinned), the
    file's name and size. Not its 16 MB of bytes: hashing them cost more than the whole cache hit."""
    import importlib.metadata

    return f"mplfonts={importlib.metadata.version('mplfonts')};{src.name};{src.stat().st_size}"


def cjk_font(chars: str, name: str = "cjk-subset") -> bytes:
    """A TrueType subset of Noto Sans CJK SC holding ``chars`` (normsite.printed's
    docstring says why). Deterministic bytes; cached by the characters, the source
    font, this module's code and fontTools' version; ``name``: the result's name in the cache's re-run log (one per
    language). Raises ValueError when ``chars`` is empty."""
    from normref import cache

    src, step = _step(chars, name)
    return cache.step(step, lambda: _subset(src, chars))[0]


def _step(chars: str, name: str):
    """(the source font, the cache step of its subset holding ``chars``)."""
    from normref import cache

    if not isinstance(chars, str):
        raise TypeError(f"chars must be a str, got {type(chars).__name__}")
    if not chars:
        raise ValueError("chars must hold at least one character for the CJK font")
    src = _cjk_source()
    return src, cache.step_of("fonts", name, suffix=".ttf", libs=("fonttools",), code=(__name__,),
                              inputs={"characters": chars, "font": _font_identity(src)})


def cjk_font_begun(chars: str, name: str = "cjk-subset"):
    """:func:`cjk_font`, begun now: when the subset is not cached, a process of its own (``python -m
    normsite.printfont``) cuts it into the cache while this one goes on (a build: its other pages), and the function
    returned waits for it and gives the bytes. A cold build cuts the font (about 2 s) beside the rest of its work.
    If that process fails, the function cuts the font here instead."""
    import os
    import subprocess
    import sys

    from normref import cache

    _, step = _step(chars, name)
    if step.cached():
        return lambda: cjk_font(chars, name)
    cache.WHY.append(f"{step.kind}/{step.name}: {cache.why(step)}")  # the log names it, as cache.step would here
    root = str(Path(__file__).resolve().parent.parent)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]))
    proc = subprocess.Popen([sys.executable, "-m", "normsite.printfont", name], stdin=subprocess.PIPE, env=env,
                            stdout=subprocess.DEVNULL)
    proc.stdin.write(chars.encode("utf-8"))
    proc.stdin.close()

    def done() -> bytes:
        proc.wait()
        return cjk_font(chars, name)  # from the cache; cut here if that process failed

    return done


def _subset(src: Path, chars: str) -> bytes:
    """The CJK font ``src`` cut down to ``chars``, its outlines made TrueType (no cache)."""
    # fontTools only on a miss: a warm build does not import it.
    from fontTools import subset
    from fontTools.pens.cu2quPen import Cu2QuPen
    from fontTools.pens.ttGlyphPen import TTGlyphPen
    from fontTools.ttLib import TTFont, newTable

    font = TTFont(str(src), recalcTimestamp=False, recalcBBoxes=True)
    opts = subset.Options()
    opts.name_IDs = ["*"]
    opts.layout_features = ["*"]
    opts.hinting = False
    opts.notdef_outline = True
    sub = subset.Subsetter(opts)
    sub.populate(unicodes=[ord(c) for c in chars])
    sub.subset(font)
    # CFF (cubic) outlines to TrueType (quadratic) ones: Chromium embeds TrueType
    # fonts as fonts, CFF ones as Type 3 drawings.
    order = font.getGlyphOrder()
    glyphs = font.getGlyphSet()
    outlines = {}
    for name in order:
        pen = TTGlyphPen(None)
        glyphs[name].draw(Cu2QuPen(pen, max_err=1.0, reverse_direction=True))
        outlines[name] = pen.glyph()
    for table in ("CFF ", "VORG"):
        if table in font:
            del font[table]
    font["loca"] = newTable("loca")
    glyf = font["glyf"] = newTable("glyf")
    glyf.glyphOrder = order
    glyf.glyphs = outlines
    maxp = font["maxp"] = newTable("maxp")
    maxp.tableVersion = 0x00010000
    for field in ("maxZones", "maxTwilightPoints", "maxStorage", "maxFunctionDefs", "maxInstructionDefs",
                  "maxStackElements", "maxSizeOfInstructions", "maxComponentElements"):
        setattr(maxp, field, 0)
    maxp.maxZones = 1
    font["head"].glyphDataFormat = 0
    post = font["post"]
    post.formatType = 2.0
    post.extraNames, post.mapping, post.glyphOrder = [], {}, order
    font.sfntVersion = "\x00\x01\x00\x00"
    import io

    buf = io.BytesIO()
    font.save(buf)
    return buf.getvalue()


if __name__ == "__main__":  # cjk_font_begun's process: python -m normsite.printfont NAME, the characters on stdin
    import sys

    from normsite import printfont  # the module by its own name, which the cache key holds (here it is __main__)

    printfont.cjk_font(sys.stdin.buffer.read().decode("utf-8"), sys.argv[1])
