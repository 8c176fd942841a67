"""The card bank as a candidate says it (issue T): lengths, openers, repeats and numbers across languages."""

import pytest

from normsite.content import cards


def test_spoken_units_counts_han_characters_and_latin_runs_as_one():
    assert cards.spoken_units("RMSNorm 去掉减均值。", "zh") == 1 + 5
    assert cards.spoken_units("比值是 [[value: bench.ratio.composed]] 倍", "zh") == 3 + 1 + 1
    assert cards.spoken_units("见[形式](formulas.md#rmsnorm)一节", "zh") == 5


def test_spoken_units_counts_english_words_values_and_link_text():
    assert cards.spoken_units("It takes [[value: bench.ratio.composed]]× the time.", "en") == 5
    assert cards.spoken_units("See [the formulas](formulas.md#rmsnorm) — twice.", "en") == 4


@pytest.mark.parametrize("args, exc, word", [(("x", "fr"), ValueError, "lang"), ((3, "en"), TypeError, "text")])
def test_spoken_units_rejects_bad_input_naming_the_parameter(args, exc, word):
    with pytest.raises(exc, match=word):
        cards.spoken_units(*args)


def test_speakable_problems_finds_each_kind_of_fault():
    bank = cards.parse({
        "topics": [{"id": "t", "title": {"zh": "题", "en": "T"}}],
        "cards": [
            {"id": "a", "topic": "t", "source": "formulas.md#rmsnorm",
             "question": {"zh": "RMSNorm 去掉了什么？", "en": "What does RMSNorm drop?"},
             "short": {"zh": "已更正。本页说它去掉了均值。", "en": "Corrected. This page says the mean."},
             "deep": {"zh": "均值。", "en": "The mean."},
             "followups": [{"q": {"zh": "本站怎么测的？", "en": "How did the site measure it?"},
                            "a": {"zh": "用 [[value: x.y]]。", "en": "With the mean."}}],
             "evidence": ["formulas.md#rmsnorm"]},
            {"id": "b", "topic": "t", "source": "formulas.md#rmsnorm",
             "question": {"zh": "什么是 RMSNorm？", "en": "What does RMSNorm drop, then?"},
             "short": {"zh": "一种归一化。", "en": "A norm."}, "deep": {"zh": "一种归一化。", "en": "A norm."},
             "followups": [{"q": {"zh": "RMSNorm 去掉了什么？", "en": "What does RMSNorm drop?"},
                            "a": {"zh": "均值。", "en": "The mean."}}],
             "evidence": ["formulas.md#rmsnorm"]},
        ]})
    found = "\n".join(cards.speakable_problems(bank))
    assert "'a': short.zh is" in found and "'a': deep.en is" in found
    assert "'a': short.zh opens with a ledger verdict" in found and "short.en opens with a ledger verdict" in found
    assert "'a': zh says 'this page'" in found and "'a': en says 'this page'" in found
    assert "'a': a zh follow-up asks about the site" in found and "a en follow-up asks about the site" in found
    assert "'a': followup 1 uses values ['x.y'] in zh and [] in en" in found
    assert "'b': a zh follow-up repeats card 'a''s question" in found
    assert "'b': its question repeats card 'a''s" in found
    assert cards.speakable_problems(bank, ids={"b"}) and not any("'a'" in p.split(":")[0]
                                                                 for p in cards.speakable_problems(bank, ids={"b"}))


def test_the_whole_card_bank_can_be_said_out_loud():
    """Issue T: every card's 30-second and deep answers within their lengths, no ledger-verdict opener, no
    'this page', follow-ups about the subject that repeat no card's question, the same values in both languages."""
    problems = cards.speakable_problems()
    assert not problems, "\n".join(problems)
