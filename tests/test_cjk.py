"""A line break between two Chinese characters is joined; code, lists, tables and English are left alone."""

import pytest

from normsite.cjk import join_notebook, join_soft_breaks, soft_breaks


def test_chinese_lines_join_without_a_space():
    assert join_soft_breaks("残差流随深度\n变长。") == "残差流随深度变长。"
    assert join_soft_breaks("它是**输出**一侧，\n  在聚合之后。") == "它是**输出**一侧，在聚合之后。"


def test_english_lists_tables_directives_and_blank_lines_are_kept():
    for text in ("the residual\nstream", "中文\n- 列表", "中文\n| a | b |", "中文\n[[value: x]]", "中文\n\n新段落",
                 "中文\n<div>", "English\n中文"):
        assert join_soft_breaks(text) == text


def test_fenced_code_is_never_joined():
    text = "```python\n# 中文\n# 注释\n```\n中文\n继续"
    assert join_soft_breaks(text) == "```python\n# 中文\n# 注释\n```\n中文继续"


def test_blockquote_lines_join_inside_the_quote():
    assert join_soft_breaks("> 残差流上每一层的梯度都要乘一个雅可比，\n> 初始化时靠近输出的层梯度偏大。") == \
        "> 残差流上每一层的梯度都要乘一个雅可比，初始化时靠近输出的层梯度偏大。"
    assert join_soft_breaks("    > 引文\n    > 继续") == "    > 引文继续"  # in an admonition
    assert join_soft_breaks("> 引文\n继续") == "> 引文继续"  # a lazy continuation line
    for text in ("> 引文\n>\n> 新段落", "> 一\n>> 二", "正文\n> 引文", "> 引文\n> - 列表"):
        assert join_soft_breaks(text) == text


def test_after_chinese_punctuation_any_text_joins():
    assert join_soft_breaks("注意力前、\nMLP 前") == "注意力前、MLP 前"
    assert join_soft_breaks("两者不同：\ntanh 逐个元素地压") == "两者不同：tanh 逐个元素地压"
    assert join_soft_breaks("LayerNorm 2.94，\nDyT 2.97") == "LayerNorm 2.94，DyT 2.97"
    assert join_soft_breaks("最大差为：\n[[value: dropnorm.equiv_diff]]。") == "最大差为：[[value: dropnorm.equiv_diff]]。"
    assert join_soft_breaks("都乘以 $c$，\n$q$ 也是") == "都乘以 $c$，$q$ 也是"
    assert join_soft_breaks("（§3.1：\n“LayerNorm(x + Sublayer(x))”）") == "（§3.1：“LayerNorm(x + Sublayer(x))”）"
    # After a Chinese character, Latin text keeps its break: it shows as the space between Chinese and Latin.
    assert join_soft_breaks("残差流\nRMSNorm 之后") == "残差流\nRMSNorm 之后"
    assert join_soft_breaks("中文\n$x$ 之后") == "中文\n$x$ 之后"


def test_curly_quotes_emphasis_and_links_count_as_what_they_show():
    assert join_soft_breaks("用 DyT 的模型\n“能达到或超过”") == "用 DyT 的模型“能达到或超过”"
    assert join_soft_breaks("“引文”\n然后") == "“引文”然后"
    assert join_soft_breaks("有效。\n**谁在用：**T5") == "有效。**谁在用：**T5"
    assert join_soft_breaks("**加粗**\n继续") == "**加粗**继续"
    assert join_soft_breaks("见[上一节](#a)\n继续") == "见[上一节](#a)继续"
    assert join_soft_breaks("用 `x`\n继续") == "用 `x`\n继续"  # code shows Latin: the break is its space


def test_blocks_headings_directives_and_hard_breaks_are_kept():
    for text in ("第一，\n- 列表", "第一，\n1. 列表", "## 标题\n正文", "说明：\n[[figure: s_curve]]", "说明：\n!!! note \"注\"",
                 "说明：\n<div>", "说明：\n| a | b |", "中文，  \n下一行", "中文，\\\n下一行", "说明：\n[^1]: 脚注"):
        assert join_soft_breaks(text) == text


def test_code_and_display_math_are_untouched():
    for text in ("```python\n# 注释，\nx = 1\n```", "~~~\n中文\n文字\n~~~", "$$\n\\text{中}\n\\text{文}\n$$",
                 "> ```\n> 中文，\n> abc\n> ```", "    ```\n    中文\n    文字\n    ```"):
        assert join_soft_breaks(text) == text
    assert join_soft_breaks("$$\nx\n$$\n正文，\nRMSNorm") == "$$\nx\n$$\n正文，RMSNorm"


def test_english_is_untouched():
    text = "The residual stream,\nRMSNorm; the “quote”\nand `code`.\n> a quote\n> goes on"
    assert join_soft_breaks(text) == text


def test_bad_input():
    with pytest.raises(TypeError, match="markdown"):
        join_soft_breaks(None)


def test_soft_breaks_finds_what_shows_as_a_space():
    assert [m.group(0) for m in soft_breaks("雅可比，\n初始化时；不同：\ntanh；中文\nRMSNorm；公式，\n\ufffc。")] == \
        ["，\n初", "：\nt", "，\n\ufffc"]
    assert soft_breaks("中文\n\n新段落 and English\nwords") == []


def test_notebook_markdown_cells_join_and_code_cells_do_not():
    import jupytext

    from normsite import notebooks

    text = "# %% [markdown]\n# 第一行，\n# RMSNorm 第二行\n# 继续\n# 写完。\n\n# %%\n# 注释，\n# 继续\nx = 1\n"
    nb = join_notebook(jupytext.reads(text, fmt="py:percent"))
    assert nb.cells[0].source == "第一行，RMSNorm 第二行继续写完。"
    assert nb.cells[1].source == "# 注释，\n# 继续\nx = 1"
    assert notebooks.language("docs/zh/notebooks/x.py") == "zh" and notebooks.language("docs/en/notebooks/x.py") == "en"
    assert notebooks.language("elsewhere/x.py") == ""
    en = jupytext.reads(text, fmt="py:percent")
    assert notebooks.for_reader(en, "docs/en/notebooks/x.py").cells[0].source == "第一行，\nRMSNorm 第二行\n继续\n写完。"


def test_the_site_and_colab_notebooks_are_joined(tmp_path):
    """The .ipynb the site offers and Colab opens (notebooks.ipynb_text) has the Chinese Markdown joined."""
    import json

    from normsite import notebooks

    src = tmp_path / "docs" / "zh" / "notebooks" / "x.py"
    src.parent.mkdir(parents=True)
    src.write_text("# %% [markdown]\n# 第一行，\n# 第二行\n\n# %%\nx = 1\n", encoding="utf-8")
    cells = json.loads(notebooks.ipynb_text(src, "https://example.org/normref.whl"))["cells"]
    assert "".join(cells[0]["source"]) == "第一行，第二行"
