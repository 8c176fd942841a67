"""Formulas typeset at build time with KaTeX (PyKaTeX), so pages ship no math JavaScript."""

from __future__ import annotations

import html
import re

from . import SiteError

# What pymdownx.arithmatex (generic mode) leaves in the HTML, and the closing punctuation right after an
# inline formula: Chinese (and English) punctuation that must not start a line.
_MATH = re.compile(
    r'<(?P<tag>span|div) class="arithmatex">\s*(?:\\\((?P<i>.*?)\\\)|\\\[(?P<d>.*?)\\\])\s*</(?P=tag)>'
    r'(?P<after>[，。、；：！？）》」』】〉”’…,.;:!?)\]]*)', re.S
)
NOBR = "nr-nobr"  # overrides/assets/stylesheets/normref.css: white-space: nowrap


_BASE = '<span class="base">'
_END = "</span></span>"  # katex-html's and katex's


def _keep_last_box(katex_html: str, after: str) -> str:
    """KaTeX's HTML for an inline formula, then ``after`` (the closing punctuation that follows it), with the
    formula's last box (``.base``, the unit KaTeX lets a line break between) moved out into a formula of its
    own, shown only (aria-hidden: the first keeps the MathML, which reads the whole formula), and put with
    the punctuation in a ``<span class="nr-nobr">`` (white-space: nowrap). Chromium breaks after an inline
    box before “：” or “；” even when the box's parent does not wrap, and ignores U+2060 there; it does not
    break inside a no-wrap span. Wrapping the whole formula with the punctuation would keep a long formula
    from breaking inside, so only its last box goes."""
    i = katex_html.rfind(_BASE)
    if i < 0 or katex_html.find(_BASE) == i or not katex_html.endswith(_END):
        # One box (W_q, √d) cannot break inside anyway: the whole formula goes with the punctuation, and the
        # reader's formula keeps its size (a split would leave the first .katex holding only the MathML).
        return f'<span class="{NOBR}">{katex_html}{after}</span>'
    end = len(katex_html) - len(_END)
    return (f'{katex_html[:i]}{_END}<span class="{NOBR}"><span class="katex nr-math-tail">'
            f'<span class="katex-html" aria-hidden="true">{katex_html[i:end]}{_END}{after}</span>')


def typeset(html_text: str, where: str) -> tuple[str, int]:
    """Replace every arithmatex formula with KaTeX's HTML; (new html, formulas typeset).

    An inline formula followed by closing punctuation (“ε）”, “f(x)，”) keeps its last box with the
    punctuation (:func:`_keep_last_box`): the punctuation never starts a line on its own, which Chinese
    typesetting forbids and Chromium did (browser review D4).
    A formula KaTeX cannot parse raises SiteError naming ``where`` and the TeX."""
    import pykatex

    def render(m):
        display = m.group("d") is not None
        tex = html.unescape(m.group("d") if display else m.group("i"))
        try:
            out = pykatex.renderToString(tex, displayMode=display, throwOnError=True)
        except Exception as e:  # pykatex.ParseError and friends
            raise SiteError(f"{where}: KaTeX cannot typeset {tex!r}: {e}") from e
        after = m.group("after")
        if display:
            return f'<div class="nr-math">{out}</div>{after}'
        return _keep_last_box(out, after) if after else out

    return _MATH.subn(render, html_text)


# ---------------------------------------------------------------- formulas as text, for the search index
#
# KaTeX writes each formula three times: MathML (its text), the TeX source (the
# MathML's <annotation>) and the visible HTML. Material's search plugin reads all
# the text of a page, so a preview showed "d\sqrt{d}d". The index gets one readable
# copy instead: the TeX written out in Unicode, with <sub>/<sup> (which the plugin
# keeps), e.g. x<sub>l+1</sub> = LN(x<sub>l</sub> + f(x<sub>l</sub>)), √d.

_SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π", "rho": "ρ",
    "sigma": "σ", "tau": "τ", "phi": "φ", "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω", "ell": "ℓ",
    "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Sigma": "Σ", "Pi": "Π", "Phi": "Φ", "Omega": "Ω",
    "cdot": "·", "times": "×", "odot": "⊙", "otimes": "⊗", "pm": "±", "approx": "≈", "sim": "∼", "le": "≤",
    "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "equiv": "≡", "propto": "∝", "to": "→",
    "rightarrow": "→", "leftarrow": "←", "Rightarrow": "⇒", "Longrightarrow": "⟹", "uparrow": "↑",
    "downarrow": "↓", "infty": "∞", "partial": "∂", "nabla": "∇", "sum": "∑", "prod": "∏", "in": "∈", "top": "⊤",
    "lVert": "‖", "rVert": "‖", "Vert": "‖", "|": "‖", "lvert": "|", "rvert": "|", "mid": "|", "langle": "⟨",
    "rangle": "⟩", "dots": "…", "ldots": "…", "cdots": "⋯", "{": "{", "}": "}", "_": "_", "%": "%", "#": "#",
    "&": "&", ",": " ", ";": " ", ":": " ", " ": " ", "quad": " ", "qquad": "  ", "!": "", "\\": "; ",
}
_NAMES = frozenset("ln log exp max min lim arg sin cos tanh det".split())
_DROP = frozenset("big Big bigg Bigg bigl bigr Bigl Bigr biggl biggr left right displaystyle textstyle nonumber".split())
_CONTENT = frozenset("mathrm text operatorname mathbf mathit mathcal mathbb mathsf boldsymbol textrm textbf".split())
_ACCENTS = {"hat": "\u0302", "bar": "\u0304", "tilde": "\u0303", "vec": "\u20d7", "dot": "\u0307"}
_FRACS = frozenset("frac tfrac dfrac".split())
_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|\s+|.", re.S)


def _wrap(s: str) -> str:
    """An argument of more than one symbol keeps its parentheses (a/(b+c), √(d_k))."""
    plain = re.sub(r"<[^>]+>", "", s)
    return s if len(plain) <= 1 or (plain[0] + plain[-1]) in ("()", "[]", "⟨⟩", "‖‖") else f"({s})"


class _TexReader:
    """:func:`readable`'s recursive reader: the formula's tokens and the position of the next one."""

    def __init__(self, tex: str):
        self.tokens = _TOKEN.findall(tex)
        self.pos = 0

    def group(self, until: str | None) -> str:
        """The text up to the closing ``until`` ("}"), consumed; None: up to the end."""
        out = []
        while self.pos < len(self.tokens):
            t = self.tokens[self.pos]
            if t == "}" and until == "}":
                self.pos += 1
                break
            self.pos += 1
            out.append(self.token(t))
        return "".join(out)

    def arg(self) -> str:
        """A command's argument: the next {group} or single token, spaces before it skipped ("" at the end)."""
        while self.pos < len(self.tokens) and self.tokens[self.pos].isspace():
            self.pos += 1
        if self.pos >= len(self.tokens):
            return ""
        t = self.tokens[self.pos]
        self.pos += 1
        return self.group("}") if t == "{" else self.token(t)

    def token(self, t: str) -> str:
        if t == "{":
            return self.group("}")
        if t == "}" or t == "&":
            return ""
        if t.isspace():
            return " "
        if t in ("_", "^"):
            tag = "sub" if t == "_" else "sup"
            return f"<{tag}>{self.arg()}</{tag}>"
        if not t.startswith("\\"):
            return html.escape(t, quote=False)
        return self.command(t[1:])

    def command(self, name: str) -> str:
        """\\name, its arguments read."""
        if name in _SYMBOLS:
            return html.escape(_SYMBOLS[name], quote=False)
        if name in _NAMES:
            return name
        if name in _DROP:
            return ""
        if name in _CONTENT:
            return self.arg()
        if name in ("begin", "end"):
            self.arg()
            return ""
        if name == "sqrt":
            return "√" + _wrap(self.arg())
        if name in _FRACS:
            num, den = self.arg(), self.arg()
            return f"{_wrap(num)}/{_wrap(den)}"
        if name in _ACCENTS:
            a = self.arg()
            return a + _ACCENTS[name] if len(a) == 1 else a
        return name  # an unknown command: its name, never a backslash


def readable(tex: str) -> str:
    """A TeX formula as readable HTML text: Unicode symbols, <sub>/<sup>, no backslashes.

    For a search preview, not for typesetting: \\frac{a}{b} becomes a/b, \\sqrt{d} √d."""
    if not isinstance(tex, str):
        raise TypeError(f"tex must be a str, got {type(tex).__name__}")
    text = _TexReader(tex).group(None)
    return re.sub(r" {2,}", " ", text).strip()


_KATEX_OPEN = re.compile(r'<span class="katex(?: nr-math-tail)?">')  # a formula, or its last box (_keep_last_box)
_SPAN = re.compile(r"<span\b|</span>")
_ANNOTATION = re.compile(r'<annotation encoding="application/x-tex">(.*?)</annotation>', re.S)


def for_search(html_text: str) -> str:
    """The page's HTML with each KaTeX formula replaced by one readable copy (:func:`readable`)."""
    out, pos = [], 0
    for m in _KATEX_OPEN.finditer(html_text):
        if m.start() < pos:
            continue  # nested inside a formula already replaced
        depth, end = 0, None
        for s in _SPAN.finditer(html_text, m.start()):
            depth += 1 if s.group(0) != "</span>" else -1
            if depth == 0:
                end = s.end()
                break
        if end is None:
            break
        tex = _ANNOTATION.search(html_text, m.start(), end)
        out.append(html_text[pos:m.start()])
        if tex:  # a formula's last box kept with its punctuation has none: the formula's text has it
            out.append(f'<span class="nr-math-text">{readable(html.unescape(tex.group(1)))}</span>')
        pos = end
    out.append(html_text[pos:])
    return "".join(out)
