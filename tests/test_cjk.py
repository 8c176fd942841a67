"""A line break between two Chinese characters is joined; code, lists, tables and English are left alone."""

from normsite.cjk import join_soft_breaks


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
