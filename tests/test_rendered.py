"""What a reader sees: every built page read as text, the way a reader reads it.

The rest of the suite checks the machinery. This file reads the result: each built
page in both languages (site/**/index.html, site/en/**, glossary, print and the
notebook pages' prose) and fails, naming the page and quoting the text, when a
reader would see

- front matter or its fence as text (``description: …``, ``---``);
- raw Markdown: ``**``, ``[[``, ``{ #``, a backtick, ``---``;
- raw TeX outside the typeset math (KaTeX output), code and notebook code cells:
  ``_{``, ``^{``, ``\\frac`` and other ``\\commands``, ``$``;
- a stray ``>`` right after a closing quote (the remains of a joined ``>`` line);
- on a Chinese page, a line break that shows as a space: between two Chinese characters,
  or after Chinese punctuation and before Latin text, a digit or a formula
  (normsite.cjk joins them at build time; :func:`soft_break_findings`); the same in
  the Markdown cells of the Chinese notebooks the site offers (:func:`notebook_soft_breaks`);
- an article that does not start with its H1;
- a ``<meta name="description">`` that is the site's default or not in the page's language;
- a tooltip (a ``title`` attribute, such as a glossary link's) holding raw TeX;
- a search index entry holding raw TeX (a formula indexed once as typeset text and
  again as its TeX source);
- a link (``<a>``) with no address: no href, and no name or role that makes it something
  else (Lighthouse's "links are not crawlable"; the browser review found the home page's
  hidden PDF link).

:func:`check_html` reads one page's HTML (a string), :func:`check_site` a built
folder; both return :class:`Finding` s. The unit tests below show each rule
failing on a crafted page with the defect and passing on a clean one (no build);
``test_built_site_reads_clean`` runs it on the session's build (marked ``build``).
It also checks the sources: each page's front matter is closed by a ``---`` on a
line of its own (a fence joined onto the line above leaks onto the page).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup, NavigableString, Tag
from bs4.element import Comment, Doctype, ProcessingInstruction

from normsite.content import glossary as gl
from support import LANGS

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Finding:
    page: str
    rule: str
    text: str

    def __str__(self) -> str:
        return f"{self.page}: {self.rule}: {self.text!r}"


# ---------------------------------------------------------------- the reader's text

# Text a reader does not see as prose: code, typeset math (KaTeX's MathML and HTML,
# and arithmatex before typesetting), scripts and styles, notebook code cells and
# their outputs.
_SKIP_TAGS = frozenset("code pre kbd samp script style template noscript math annotation textarea".split())
_SKIP_CLASSES = frozenset(["katex", "katex-display", "arithmatex", "nr-math", "jp-InputArea", "jp-OutputArea",
                           "jp-Cell-outputWrapper", "highlight"])
_BLOCKS = frozenset("p li td th dt dd h1 h2 h3 h4 h5 h6 figcaption caption blockquote summary div section "
                    "article details table tr ul ol dl figure label button text".split())

FRONT_KEYS = ("title", "description", "hide", "search", "template", "icon", "status", "subtitle", "tags")

# rule -> pattern over a block's visible text
PROSE_RULES = {
    "front matter as text": re.compile(r"^\s*(?:%s)\s*:\s" % "|".join(FRONT_KEYS)),
    "raw Markdown": re.compile(r"\*\*|\[\[|\]\]|\{\s*#[\w-]|`|(?<!-)---(?!-)"),
    "raw TeX": re.compile(r"[_^]\{|\\(?:[A-Za-z]+|[,;!{}|])|\$"),
    "stray > after a quote": re.compile(r"[”\"]\s*>"),
    # "warmup took its loss from 2.14 to 2.14": two values that round alike, in a sentence about a change.
    "a change between equal numbers": re.compile(r"\bfrom (−?\d+(?:\.\d+)?)(?: [A-Za-z%]+)? to \1(?!\d|\.\d)"
                                                 r"|从\s*(−?\d+(?:\.\d+)?)\s*[降升涨提变]?到\s*\2(?!\d|\.\d)"),
}
TOOLTIP_TEX = re.compile(r"[_^]\{|\\|\$|(?<![A-Za-z0-9])[A-Za-z]_[A-Za-z0-9](?![A-Za-z0-9_])")  # x_{l+1}, \frac, $, and p_i
SEARCH_TEX = re.compile(r"[_^]\{|\\(?:[A-Za-z]+|[,;!{}|])")


def _skipped(el: Tag) -> bool:
    classes = el.get("class") or ()
    if "jp-InputArea" in classes and el.find(class_="jp-RenderedMarkdown"):  # a Markdown cell: its prose is read
        return False
    return el.name in _SKIP_TAGS or bool(_SKIP_CLASSES.intersection(classes))


def _visible_blocks(root: Tag) -> Iterator[tuple[Tag, str]]:
    """(block element, its visible text) for every block under ``root`` with text of its own."""
    texts: dict[int, tuple[Tag, list[str]]] = {}

    def walk(el: Tag, block: Tag) -> None:
        for child in el.children:
            if isinstance(child, (Comment, Doctype, ProcessingInstruction)):
                continue
            if isinstance(child, NavigableString):
                texts.setdefault(id(block), (block, []))[1].append(str(child))
            elif isinstance(child, Tag) and not _skipped(child):
                walk(child, child if child.name in _BLOCKS else block)

    walk(root, root)
    for block, parts in texts.values():
        text = re.sub(r"\s+", " ", "".join(parts)).strip()
        if text:
            yield block, text


_INLINE_OBJECT, _BREAK = "\ufffc", "\u2029"  # a formula or code in the text; a block's edge or <br>


def soft_break_findings(root: Tag, page: str) -> list[Finding]:
    """Line breaks in ``root``'s visible text that a browser shows as a space between Chinese text
    (normsite.cjk.soft_breaks): the text is read with its newlines, a formula or inline code standing
    in as one object, a block's edge or a <br> as a break no space comes from."""
    from normsite import cjk

    texts: dict[int, tuple[Tag, list[str]]] = {}

    def add(block: Tag, s: str) -> None:
        texts.setdefault(id(block), (block, []))[1].append(s)

    def walk(el: Tag, block: Tag) -> None:
        for child in el.children:
            if isinstance(child, (Comment, Doctype, ProcessingInstruction)):
                continue
            if isinstance(child, NavigableString):
                add(block, str(child))
            elif not isinstance(child, Tag):
                continue
            elif _skipped(child) or child.name in ("img", "svg", "input"):
                add(block, _BREAK if child.name in _BLOCKS or child.name in ("pre", "div") else _INLINE_OBJECT)
            elif child.name == "br":
                add(block, _BREAK)
            elif child.name in _BLOCKS or "md-button" in (child.get("class") or ()):  # a button: a box of its own
                add(block, _BREAK)
                walk(child, child)
                add(block, _BREAK)
            else:
                walk(child, block)

    walk(root, root)
    found = []
    for _, parts in texts.values():
        text = "".join(parts)
        for m in cjk.soft_breaks(text):
            a, b = max(0, m.start() - 20), min(len(text), m.end() + 20)
            shown = re.sub(r"[ \t]*\n[ \t]*", "⏎", text[a:b]).replace(_BREAK, " ").replace(_INLINE_OBJECT, "▢")
            found.append(Finding(page, "line break shows as a space in Chinese", shown.strip()))
    return found


def notebook_soft_breaks(nb: dict, where: str) -> list[Finding]:
    """The same in a notebook's Markdown cells (an .ipynb, parsed), read as Markdown renders them: fenced code
    and display math left out, inline code and math as one object, blockquote markers and emphasis gone,
    and a line that starts a block (a list item, a heading, a table row, HTML) not continuing the one before."""
    from normsite import cjk

    found = []
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "markdown":
            continue
        src = cell["source"]
        text = "".join(src) if isinstance(src, list) else src
        text = re.sub(r"^[ \t]*(```|~~~).*?^[ \t]*\1[^\n]*$|^[ \t]*\$\$.*?\$\$[ \t]*$", _BREAK, text, flags=re.S | re.M)
        text = re.sub(r"`[^`\n]+`|\$[^$\n]+\$", _INLINE_OBJECT, text)
        lines = []
        for line in text.split("\n"):
            line = re.sub(r"^[ \t]*(?:>[ \t]?)*", "", line)
            if re.match(r"#|\||<", line):  # a heading, a table row, HTML: a block of its own
                line = _BREAK + line + _BREAK
            elif re.match(r"[-*+][ \t]|\d+[.)][ \t]", line):  # a list item starts a block
                line = _BREAK + line
            lines.append(line)
        text = re.sub(r"\*\*|__|\[|\]\([^)\s]*\)", "", "\n".join(lines))
        for m in cjk.soft_breaks(text):
            a, b = max(0, m.start() - 20), min(len(text), m.end() + 20)
            shown = re.sub(r"[ \t]*\n[ \t]*", "⏎", text[a:b]).replace(_BREAK, " ").replace(_INLINE_OBJECT, "▢")
            found.append(Finding(f"{where} cell {i}", "line break shows as a space in Chinese", shown.strip()))
    return found


def _quote(text: str, m: re.Match, width: int = 40) -> str:
    a, b = max(0, m.start() - width), min(len(text), m.end() + width)
    return ("…" if a else "") + text[a:b] + ("…" if b < len(text) else "")


def _cjk_share(text: str) -> float:
    letters = [c for c in text if c.isalpha()]
    return sum(gl.is_han(c) for c in letters) / len(letters) if letters else 0.0


def _first_content(root: Tag) -> Tag | None:
    """The first element under ``root`` a reader sees (stylesheets, scripts and Material's buttons aside)."""
    for child in root.children:
        if isinstance(child, NavigableString):
            if str(child).strip() and not isinstance(child, Comment):
                return None
            continue
        if child.name in ("link", "script", "style", "meta", "noscript", "template"):
            continue
        if child.name == "a" and "md-content__button" in (child.get("class") or ()):
            continue
        if child.name == "div" and not child.get_text(strip=True) and not child.find(["img", "svg"]):
            continue
        return child
    return None


def check_html(html: str, page: str = "<page>", lang: str | None = None,
               default_descriptions: Iterable[str] = ()) -> list[Finding]:
    """What a reader of this page would see that they should not; [] for a clean page.

    ``lang``: the page's language (default: the <html lang>); ``default_descriptions``:
    the sites' own descriptions, which a page's <meta name="description"> must not fall back to."""
    soup = BeautifulSoup(html, "html.parser")
    found: list[Finding] = []
    if lang is None:
        lang = (soup.html.get("lang", "") if soup.html else "")[:2] or None
    article = soup.find("article") or soup.body or soup

    # The article's visible text, block by block.
    for _, text in _visible_blocks(article):
        for rule, pat in PROSE_RULES.items():
            m = pat.search(text)  # the first in each block: one finding per rule and paragraph
            if m:
                found.append(Finding(page, rule, _quote(text, m)))

    # Line breaks that show as spaces between Chinese text.
    if lang == "zh":
        found += soft_break_findings(article, page)

    # Its first element is the H1 (a notebook page: the notebook's first cell, after the site's download bar).
    start = article.find("div", class_="jp-Notebook") or article
    if start.name == "div":
        cell = start.find("div", class_="jp-Cell")
        start = cell.find(class_="jp-RenderedMarkdown") if cell and cell.find(class_="jp-RenderedMarkdown") else start
    first = _first_content(start)
    if first is None or first.name != "h1":
        seen = first.get_text(" ", strip=True)[:80] if isinstance(first, Tag) else "(nothing)"
        found.append(Finding(page, "article does not start with its H1", f"<{getattr(first, 'name', '')}> {seen}"))

    # Tooltips: every title attribute on the page's content.
    for el in article.find_all(title=True):
        m = TOOLTIP_TEX.search(el["title"])
        if m:
            found.append(Finding(page, "raw TeX in a tooltip", _quote(el["title"], m)))

    # Links: every <a> on the page has an address, unless a name (a target) or a role makes it
    # something else (Lighthouse's crawlable-anchors rule; a script may add the <a> later instead).
    for a in soup.find_all("a"):
        if not (a.get("href") or "").strip() and not a.get("name") and not a.get("role"):
            found.append(Finding(page, "link without an address", a.get_text(" ", strip=True)[:80] or str(a)[:80]))

    # The page's description for search engines and link previews.
    meta = soup.find("meta", attrs={"name": "description"})
    desc = (meta.get("content") or "").strip() if meta else ""
    if not desc:
        found.append(Finding(page, "no description", ""))
    elif desc in {d.strip() for d in default_descriptions}:
        found.append(Finding(page, "description is the site default", desc))
    elif lang == "zh" and _cjk_share(desc) == 0:
        found.append(Finding(page, "description not in the page's language (zh)", desc))
    elif lang == "en" and _cjk_share(desc) > 0.5:
        found.append(Finding(page, "description not in the page's language (en)", desc))
    return found


def check_search_index(data: dict, where: str = "search_index.json") -> list[Finding]:
    """Entries of a search index (Material's search_index.json, parsed) whose text holds raw TeX."""
    found = []
    for doc in data.get("docs", []):
        for field in ("title", "text"):
            soup = BeautifulSoup(doc.get(field) or "", "html.parser")
            for code in soup.find_all(["pre", "code"]):  # code is indexed as code, TeX in it included
                code.decompose()
            text = soup.get_text().replace("\u200b", "")  # jieba's segment marks
            m = SEARCH_TEX.search(text)
            if m:
                found.append(Finding(f"{where} {doc.get('location', '')!r}", f"raw TeX in the search {field}",
                                     _quote(text, m)))
    return found


def site_descriptions() -> dict[str, str]:
    """The site_description of each language's mkdocs config."""
    out = {}
    for lang, cfg in (("zh", "mkdocs.yml"), ("en", "mkdocs.en.yml")):
        m = re.search(r"^site_description:\s*(.+)$", (ROOT / cfg).read_text(encoding="utf-8"), re.M)
        out[lang] = m.group(1).strip() if m else ""
    return out


def site_pages(folder: Path) -> list[tuple[str, Path]]:
    """(language, file) of every built page: zh under folder/, en under folder/en/."""
    pages = []
    for path in sorted(folder.rglob("index.html")):
        rel = path.relative_to(folder)
        if rel.parts[0] in ("assets", "search", "wheels", "figures"):
            continue
        pages.append(("en" if rel.parts[0] == "en" else "zh", path))
    return pages


def check_site(folder: Path) -> list[Finding]:
    """Every finding on a built site (both languages), its pages and its search indexes."""
    folder = Path(folder)
    defaults = site_descriptions().values()
    found = []
    for lang, path in site_pages(folder):
        found += check_html(path.read_text(encoding="utf-8"), str(path.relative_to(folder)), lang, defaults)
    for nb in sorted(folder.glob("notebooks/*/*.ipynb")):  # the Chinese notebooks' downloads (what Colab opens)
        found += notebook_soft_breaks(json.loads(nb.read_text(encoding="utf-8")), str(nb.relative_to(folder)))
    for index in (folder / "search/search_index.json", folder / "en/search/search_index.json"):
        if index.exists():
            found += check_search_index(json.loads(index.read_text(encoding="utf-8")), str(index.relative_to(folder)))
    return found


def report(found: list[Finding]) -> str:
    return f"{len(found)} finding(s):\n  " + "\n  ".join(map(str, found))


# ---------------------------------------------------------------- the sources


def front_matter_problems(md: str) -> list[str]:
    """A page's front matter, if it opens with ``---``, closes with ``---`` on a line of its own and parses."""
    if not md.startswith("---"):
        return []
    lines = md.split("\n")
    if lines[0].strip() != "---":
        return [f"line 1 is {lines[0]!r}, not the fence '---' alone"]
    for i, line in enumerate(lines[1:], start=2):
        if line.strip() == "---":
            try:
                meta = yaml.safe_load("\n".join(lines[1:i - 1]))
            except yaml.YAMLError as e:
                return [f"front matter does not parse: {e}"]
            if not isinstance(meta, dict):
                return [f"front matter is not a mapping: {meta!r}"]
            return [f"line {j}: {ln!r} holds a joined fence" for j, ln in enumerate(lines[1:i - 1], start=2)
                    if ln.rstrip().endswith("---")]
        if line.rstrip().endswith("---"):
            return [f"line {i}: the closing fence is joined onto the text: {line[-60:]!r}"]
        if not line.strip() or not re.match(r"^(\s|[\w-]+\s*:)", line):
            return [f"line {i}: front matter never closed by '---' on its own line before {line[:60]!r}"]
    return ["front matter never closed"]


# ---------------------------------------------------------------- tests: the rules on crafted pages

DEFAULTS = ("站点默认描述。", "The site's default description.")


def page(body: str, lang: str = "zh", desc: str = "这一页讲 RMSNorm 如何缩放隐藏向量。") -> str:
    return (f'<!doctype html><html lang="{lang}"><head><meta name="description" content="{desc}"></head>'
            f'<body><article class="md-content__inner md-typeset">'
            f'<link rel="stylesheet" href="x.css">{body}</article></body></html>')


CLEAN = page(
    '<h1 id="t">标题</h1>'
    '<p>正文用 <strong>粗体</strong>，公式 <span class="katex"><span class="katex-mathml"><math><semantics>'
    '<mrow><mi>x</mi></mrow><annotation encoding="application/x-tex">x_{l+1} = \\frac{a}{b}</annotation>'
    '</semantics></math></span><span class="katex-html" aria-hidden="true">x</span></span>，代码 '
    '<code>a ** 2 $HOME `x`</code>，引文“routing weights”。</p>'
    '<div class="highlight"><pre><code>--- $x_{1}$</code></pre></div>'
    '<p>术语 <a class="nr-term" href="g/#pre-ln" title="xₗ₊₁ = xₗ + f(LN(xₗ))">Pre-LN</a>——长破折号可以。</p>'
)


def test_clean_page_passes():
    assert check_html(CLEAN, "clean", default_descriptions=DEFAULTS) == []


@pytest.mark.parametrize("body,rule,quoted", [
    ("<hr><p>description: RMSNorm 对隐藏向量做了什么。---</p><h1>标题</h1>",
     ["front matter as text", "raw Markdown", "article does not start with its H1"], "description:"),
    ("<h1>标题</h1><p>这是 **粗体** 吗</p>", "raw Markdown", "**"),
    ("<h1>标题</h1><p>值是 [[value: x]]。</p>", "raw Markdown", "[[value"),
    ("<h1>标题</h1><h2>小节 { #sec }</h2>", "raw Markdown", "{ #sec"),
    ("<h1>标题</h1><p>用 `code` 写</p>", "raw Markdown", "`code"),
    ("<h1>标题</h1><p>上面---下面</p>", "raw Markdown", "---"),
    ("<h1>标题</h1><p>残差 x_{l+1} 在此</p>", "raw TeX", "x_{l+1}"),
    ("<h1>标题</h1><p>增益 g^{2} 在此</p>", "raw TeX", "g^{2}"),
    ("<h1>标题</h1><p>比值 \\frac{a}{b}</p>", "raw TeX", "\\frac"),
    ("<h1>标题</h1><p>公式 $x$ 没排版</p>", "raw TeX", "$x$"),
    ("<h1>标题</h1><blockquote><p>“their routing weights”&gt;（译文）</p></blockquote>", "stray > after a quote", "weights”>"),
    ("<h1>Title</h1><p>warmup took its loss from 2.14 to 2.14, still far behind.</p>", "a change between equal numbers",
     "from 2.14 to 2.14"),
    ("<h1>Title</h1><p>it fell from 2.14 nats to 2.14.</p>", "a change between equal numbers", "2.14 nats to 2.14"),
    ("<h1>标题</h1><p>预热把损失从 2.14 降到 2.14。</p>", "a change between equal numbers", "从 2.14 降到 2.14"),
    ("<p>开头一段。</p><h1>标题</h1>", "article does not start with its H1", "开头一段"),
    ('<h1>标题</h1><p><a class="nr-term" href="g/" title="x_{l+1} = LN(x_l)">Post-LN</a></p>', "raw TeX in a tooltip", "x_{l+1}"),
    ('<h1>标题</h1><p><a class="nr-term" href="g/" title="权重 p_i 加权">路由权重</a></p>', "raw TeX in a tooltip", "p_i"),
    ('<h1>标题</h1><p><a class="nr-term" href="g/" title="除以 \\sqrt{d}">RMS</a></p>', "raw TeX in a tooltip", "\\sqrt"),
    ('<h1>标题</h1><p>打印版：<a class="nr-pdf" hidden>下载 PDF</a></p>', "link without an address", "下载 PDF"),
])
def test_each_rule_fails_on_a_crafted_page(body, rule, quoted):
    found = check_html(page(body), "bad", default_descriptions=DEFAULTS)
    assert [f.rule for f in found] == (rule if isinstance(rule, list) else [rule]), report(found)
    assert quoted in found[0].text and found[0].page == "bad"


@pytest.mark.parametrize("text", ["from 2.14 to 2.145", "from 2.1 to 2.14", "from 3 to 30", "from 0.5 to −0.5",
                                  "从 2.14 降到 2.04", "从 3 到 30 层", "layers 2.14 to 2.14"])
def test_a_change_between_different_numbers_passes(text):
    assert check_html(page(f"<h1>标题</h1><p>{text}</p>"), "ok", default_descriptions=DEFAULTS) == []


@pytest.mark.parametrize("lang,desc,rule", [
    ("zh", DEFAULTS[0], "description is the site default"),
    ("zh", "What RMSNorm does to a hidden vector.", "description not in the page's language (zh)"),
    ("en", "RMSNorm 对隐藏向量做了什么、为什么让深层模型训得动。", "description not in the page's language (en)"),
    ("en", "", "no description"),
])
def test_description_rules(lang, desc, rule):
    found = check_html(page("<h1>T</h1>", lang, desc), "bad", default_descriptions=DEFAULTS)
    assert [f.rule for f in found] == [rule], report(found)
    assert check_html(page("<h1>T</h1>", "en", "What RMSNorm does to a hidden vector (RMSNorm 均方根归一化)."),
                      default_descriptions=DEFAULTS) == []


def test_notebook_code_cells_are_skipped_but_their_prose_is_read():
    nb = ('<p class="nr-notebook-download">下载</p><div class="jp-Notebook">'
          '<div class="jp-Cell jp-MarkdownCell"><div class="jp-RenderedMarkdown"><h1>笔记本</h1><p>PROSE</p></div></div>'
          '<div class="jp-Cell jp-CodeCell"><div class="jp-InputArea"><div class="highlight"><pre>x = "$a_{1}$"  # **</pre>'
          '</div></div><div class="jp-OutputArea"><pre>\\frac ---</pre></div></div></div>')
    assert check_html(page(nb.replace("PROSE", "正文。")), default_descriptions=DEFAULTS) == []
    found = check_html(page(nb.replace("PROSE", "正文 $x_{1}$。")), "nb", default_descriptions=DEFAULTS)
    assert {f.rule for f in found} == {"raw TeX"}, report(found)
    found = check_html(page(nb.replace("PROSE", "正文。").replace("<h1>笔记本</h1>", "")), "nb", default_descriptions=DEFAULTS)
    assert [f.rule for f in found] == ["article does not start with its H1"], report(found)


def test_soft_line_break_rule():
    """A newline between Chinese text shows as a space; English, a formula after a Chinese character, a block's
    edge and the gap between two buttons do not count."""
    found = check_html(page("<h1>标题</h1><blockquote><p>雅可比，\n初始化时</p></blockquote><p>不同：\ntanh 逐个</p>"
                            '<p>乘以 <span class="katex">c</span>，\n<span class="katex">q</span> 也是</p>'),
                       "bad", default_descriptions=DEFAULTS)
    assert [f.rule for f in found] == ["line break shows as a space in Chinese"] * 3, report(found)
    assert [f.text for f in found] == ["雅可比，⏎初始化时", "不同：⏎tanh 逐个", "乘以 ▢，⏎▢ 也是"], report(found)
    clean = ("<h1>标题</h1><p>残差流\nRMSNorm 之后，其中\n<span class=\"katex\">x</span> 是向量。</p><p>第一段，</p>\n<p>第二段</p>"
             "<p>换行<br>\n继续</p><p class=\"nr-notebook-download\">\n<a class=\"md-button\" href=\"a.ipynb\">下载（.ipynb）</a>\n"
             "<a class=\"md-button\" href=\"a.py\">下载源码</a>\n</p><pre>代码，\nabc</pre>")
    assert check_html(page(clean), default_descriptions=DEFAULTS) == []
    assert check_html(page("<h1>T</h1><p>the residual,\nstream</p>", "en", "An English page."), "en",
                      default_descriptions=DEFAULTS) == []
    nb = ('<div class="jp-Notebook"><div class="jp-Cell jp-MarkdownCell"><div class="jp-InputArea">'
          '<div class="jp-RenderedMarkdown"><h1>笔记本</h1><p>训练了一个\n玩具模型</p></div></div></div></div>')
    found = check_html(page(nb), "nb", default_descriptions=DEFAULTS)
    assert [f.text for f in found] == ["训练了一个⏎玩具模型"], report(found)


def test_notebook_soft_break_rule():
    cells = [{"cell_type": "markdown", "source": ["# 标题\n", "训练了一个\n", "玩具模型，\n", "RMSNorm 之后。\n"]},
             {"cell_type": "markdown", "source": "```\n代码，\nabc\n```\n列表：\n- 第一\n- 第二\n\n> 引文，\n> `x` 继续"},
             {"cell_type": "code", "source": "# 注释\n# 继续\n"}]
    found = notebook_soft_breaks({"cells": cells}, "x.ipynb")
    assert [f.page for f in found] == ["x.ipynb cell 0"] * 2 + ["x.ipynb cell 1"], report(found)
    assert "训练了一个⏎玩具模型" in found[0].text and "模型，⏎RMSNorm" in found[1].text, report(found)
    assert "引文，⏎▢ 继续" in found[2].text and "代码" not in found[2].text, report(found)


def test_search_index_rule():
    clean = {"docs": [{"location": "#a", "title": "公式", "text": "<p>长度 √d，x<sub>l+1</sub> = xₗ</p>"
                                                                    '<pre><code>label=r"$\\hat{x}$"</code></pre>'}]}
    assert check_search_index(clean) == []
    twice = {"docs": [{"location": "#home", "title": "首页", "text": "<p>恰好是 d\\sqrt{d}d（只差 ε\\varepsilonε）</p>"}]}
    found = check_search_index(twice)
    assert [f.rule for f in found] == ["raw TeX in the search text"] and "\\sqrt{d}" in found[0].text, report(found)


def test_front_matter_source_rule():
    assert front_matter_problems("---\ndescription: 好。\n---\n\n# 标题 { #t }\n") == []
    assert front_matter_problems("# 标题\n") == []
    bad = front_matter_problems("---\ndescription: RMSNorm 做了什么。---\n\n# 标题 { #t }\n")
    assert bad and "joined" in bad[0]
    assert front_matter_problems("---\ndescription: 好。\n\n# 标题\n")


@pytest.mark.parametrize("lang", LANGS)
def test_front_matter_is_closed_on_its_own_line(lang):
    bad = {str(p.relative_to(ROOT)): front_matter_problems(p.read_text(encoding="utf-8"))
           for p in sorted((ROOT / "docs" / lang).rglob("*.md"))}
    assert not {k: v for k, v in bad.items() if v}, bad


def test_glossary_tooltips_hold_no_tex():
    """Every short text becomes a title attribute, shown as plain text: write formulas in Unicode (xₗ₊₁)."""
    bad = [(t.id, lang, t.short[lang]) for t in gl.default().terms for lang in LANGS if TOOLTIP_TEX.search(t.short[lang])]
    assert not bad, bad


# ---------------------------------------------------------------- the fixes behind the findings


def test_search_reads_each_formula_once_and_readably():
    """KaTeX's output holds a formula three times (MathML, TeX, HTML); the search plugin reads one readable copy."""
    from material.plugins.search.plugin import Parser

    from normsite import mathtex

    html = "<h1 id='t'>T</h1><p>长度恰好是 \\(\\sqrt{d}\\)，而 \\(x_{l+1} = \\mathrm{LN}(x_l + f(x_l))\\)。</p>"
    html = html.replace("\\(", '<span class="arithmatex">\\(').replace("\\)", '\\)</span>')
    typeset, n = mathtex.typeset(html, "t")
    assert n == 2

    def indexed(content):
        parser = Parser()
        parser.feed(content)
        parser.close()
        return "".join(parser.data[0].text)

    assert "\\sqrt{d}" in indexed(typeset)  # the defect: the TeX source reaches the index
    text = indexed(mathtex.for_search(typeset))
    assert text == "<p>长度恰好是 √d，而 x<sub>l+1</sub> = LN(x<sub>l</sub> + f(x<sub>l</sub>))。</p>", text
    assert check_search_index({"docs": [{"location": "#t", "text": text}]}) == []


def test_search_leaves_out_what_no_reader_sees():
    """mkdocs-jupyter keeps a hidden copy of each code cell for the clipboard: the index held the code twice."""
    from normsite.searchcache import search_html

    cell = ('<div class="zeroclipboard-container"><span class="notice" hidden>Copied!</span></div>'
            '<div class="clipboard-copy-txt" id="cell-5">label=r"$\\hat{x}$"</div>'
            '<div class="highlight-ipynb"><pre>label=r"$\\hat{x}$"</pre></div>')
    out = search_html(cell)
    assert "clipboard-copy-txt" not in out and "Copied!" not in out and out.count("hat{x}") == 1, out


def test_notebook_pages_describe_themselves():
    """A notebook page has no front matter: its description is its opening sentence, not the site's."""
    from normsite import notebooks

    page_html = ('<div class="jp-Cell jp-MarkdownCell"><div class="jp-RenderedHTMLCommon jp-RenderedMarkdown">'
                 '<h1 id="nb">Notebook</h1><p>Kimi K3 puts an RMSNorm before the up-projection '
                 '<span class="katex"><annotation encoding="application/x-tex">W_\\uparrow</annotation></span> (Eq. 11). '
                 'More follows.</p></div></div>')
    assert notebooks.description(page_html) == "Kimi K3 puts an RMSNorm before the up-projection W↑ (Eq. 11)."
    assert notebooks.description("<p>no notebook</p>") is None
    long = page_html.replace("More follows.", "").replace("(Eq. 11).", "and " + "then more, " * 30 + "end.")
    said = notebooks.description(long)
    assert said.endswith("…") and len(said) <= 161, said


@pytest.mark.parametrize("tex,text", [
    (r"\sqrt{d}", "√d"),
    (r"\frac{1}{d}\sum_i x_i^2", "1/d∑<sub>i</sub> x<sub>i</sub><sup>2</sup>"),
    (r"\hat{x} \odot g", "x̂ ⊙ g"),
    (r"\lVert x \rVert_2 \approx \sqrt{d}\,\varepsilon", "‖ x ‖<sub>2</sub> ≈ √d ε"),
    (r"W_\uparrow\,\mathrm{RMSNorm}(u)", "W<sub>↑</sub> RMSNorm(u)"),
    (r"a < b", "a &lt; b"),
])
def test_readable_formulas(tex, text):
    from normsite import mathtex

    assert mathtex.readable(tex) == text
    with pytest.raises(TypeError, match="tex"):
        mathtex.readable(None)


def _links(html):
    return [(a.get_text(), a["href"].split("#")[1]) for a in BeautifulSoup(html, "html.parser").find_all("a")]


def test_a_link_never_splits_a_chinese_word():
    from normsite import glossary as sg

    g = gl.default()
    # 减去 is one word for jieba: 去均值 (an alias of mean-centering) is not linked inside 减去均值,
    # and the search goes on: 均值 (mean) is its own word there.
    out, _ = sg.link_terms("<p>RMSNorm 不减去均值。</p>", g, "zh", "g/")
    assert ("去均值", "mean-centering") not in _links(out) and ("均值", "mean") in _links(out), out
    assert "减去<a" in out
    out, _ = sg.link_terms("<p>先去均值，再缩放。</p>", g, "zh", "g/")
    assert ("去均值", "mean-centering") in _links(out), out
    out, _ = sg.link_terms("<p>RMSNorm 不减去均值。</p>", g, "zh", "g/")
    assert "去均值" not in [t for t, _ in _links(out)], out
    out, _ = sg.link_terms("<p>协方差矩阵不是方差。</p>", g, "zh", "g/")
    assert "协<a" not in out and ("方差", "variance") in _links(out), out
    # An accidental pairing in jieba's dictionary (向 + 量变 + 长) does not refuse a term that is a word itself.
    out, _ = sg.link_terms("<p>若一个隐藏向量变长，同一个词元换一批上下文。</p>", g, "zh", "g/")
    assert ("隐藏向量", "hidden-state") in _links(out) and ("词元", "token") in _links(out), out
    assert sg.split_cost("减去均值", 1, 4) > sg.SPLIT_COST > sg.split_cost("若一个隐藏向量变长", 3, 7)
    assert sg.split_cost("先去均值，再缩放", 1, 4) == 0 and sg.split_cost("RMSNorm 去均值", 8, 11) == 0
    # jieba decides, not a list: no `avoid` entry names 减去均值.
    assert not any("减去均值" in t.avoid for t in g.terms)


def test_quoted_english_in_chinese_is_not_linked():
    from normsite import glossary as sg

    g = gl.default()
    html = "<blockquote><p>“whose scale can vary with their routing weights”</p><p>（随路由权重而变化。）</p></blockquote>"
    out, _ = sg.link_terms(html, g, "zh", "g/")
    assert _links(out) == [("路由权重", "routing-weights")], out
    out, _ = sg.link_terms(html.replace("“", "").replace("”", ""), g, "zh", "g/")
    assert ("routing weights", "routing-weights") in _links(out), out  # unquoted, it is linked
    out, _ = sg.link_terms('<p>"their routing weights"</p>', g, "en", "g/")
    assert _links(out) == [("routing weights", "routing-weights")], out  # en pages: unchanged


# ---------------------------------------------------------------- the built site


def test_built_site_reads_clean(site):
    pages = site_pages(site)
    assert {lang for lang, _ in pages} == set(LANGS) and len(pages) > 20, pages
    assert any(p.parent.name == "print" for _, p in pages) and any(p.parent.name == "glossary" for _, p in pages)
    found = check_site(site)
    assert not found, report(found)


def test_footer_speaks_the_page_language(site):
    """Material writes "Made with" in English whatever theme.language says: overrides/partials/copyright.html."""
    for lang, path in site_pages(site):
        footer = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser").select_one(".md-copyright")
        text = re.sub(r"\s+", " ", footer.get_text(" ")).strip() if footer else ""
        want = "本站用 Material for MkDocs 构建" if lang == "zh" else "Made with Material for MkDocs"
        assert want in text and ("Made with" not in text if lang == "zh" else True), (path, text)
