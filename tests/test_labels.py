"""normref.labels: the short texts of values and experiments, English in the code and Chinese in labels.yml,
validated, and part of the cache keys of what shows them (tables, values, figures)."""

from __future__ import annotations

import copy

import pytest
import yaml

from normref import cache, figures, labels, values
from normref.experiments import dropnorm, placement, smollm2_batch
from normsite import directives


def test_every_entry_of_labels_yml_is_used_and_well_formed():
    labels.check()  # every module exists and each English text is a string in its code
    assert labels.texts()["values.placement"]["layout"] == "接法"


def test_a_text_is_english_from_the_code_and_chinese_from_labels_yml():
    t = labels.labels("normref.values.placement")
    assert t("en", "layout") == "layout" and t("zh", "layout") == "接法"
    assert t("en", "lr {{lr}}, warmup", lr="0.003") == "lr 0.003, warmup"
    assert t("zh", "lr {{lr}}, warmup", lr="0.003") == "学习率 0.003，预热"
    assert placement.variant_name("output+qk", "zh") == "输出端归一化 + QK-norm（OLMo 2 式）"
    assert dropnorm.arm_name("dyt0.5", "zh") == "DyT（α₀ = 0.5）" and dropnorm.arm_name("dyt0.5") == "DyT (α₀ = 0.5)"


def test_a_missing_chinese_text_or_field_is_an_error_naming_file_module_and_text():
    t = labels.labels("normref.values.placement")
    with pytest.raises(labels.LabelError, match=r"labels\.yml: no Chinese for 'no such text' of values/placement\.py; "
                                                r"add it under values\.placement:"):
        t("zh", "no such text")
    assert t("en", "no such text") == "no such text"  # English needs no entry
    with pytest.raises(labels.LabelError, match=r"values/placement\.py: 'lr \{\{lr\}\}, warmup' uses \{\{lr\}\}, "
                                                r"which the call does not give"):
        t("en", "lr {{lr}}, warmup")
    with pytest.raises(ValueError, match="lang must be one of"):
        t("fr", "layout")
    with pytest.raises(ValueError, match="module must be a module of normref"):
        labels.labels("values.placement")


def test_labels_yml_is_validated(tmp_path):
    path = tmp_path / "labels.yml"
    path.write_text(yaml.safe_dump({"values.placement": {"lr {{lr}}": "学习率 {{rate}}"}}, allow_unicode=True),
                    encoding="utf-8")
    with pytest.raises(labels.LabelError, match=r"values\.placement: 'lr \{\{lr\}\}' has the fields \['lr'\] but "
                                                r"its Chinese '学习率 \{\{rate\}\}' has \['rate'\]"):
        labels.texts(path)
    path.write_text(yaml.safe_dump({"values.placement": {"layout": ""}}), encoding="utf-8")
    with pytest.raises(labels.LabelError, match="expected non-empty English and Chinese text"):
        labels.texts(path)
    path.write_text(yaml.safe_dump({"Values/Placement": {"layout": "接法"}}, allow_unicode=True), encoding="utf-8")
    with pytest.raises(labels.LabelError, match="expected a module of normref"):
        labels.texts(path)


def test_check_refuses_an_entry_the_code_does_not_use(tmp_path):
    good = labels.texts()
    path = tmp_path / "labels.yml"
    path.write_text(yaml.safe_dump({**good, "values.placement": {**good["values.placement"], "gone": "没了"}},
                                   allow_unicode=True), encoding="utf-8")
    with pytest.raises(labels.LabelError, match=r"values\.placement: 'gone' is not a string in values/placement\.py"):
        labels.check(path)
    other = tmp_path / "other.yml"  # texts() loads a file once
    other.write_text(yaml.safe_dump({"values.nowhere": {"a": "甲"}}, allow_unicode=True), encoding="utf-8")
    with pytest.raises(labels.LabelError, match=r"values\.nowhere: no module normref/values/nowhere\.py"):
        labels.check(other)


def _edited(monkeypatch, module: str, en: str, zh: str) -> None:
    changed = copy.deepcopy(labels.texts())
    changed[module][en] = zh
    monkeypatch.setattr(labels, "texts", lambda path=None: changed)


def test_a_changed_chinese_text_reaches_the_table_and_the_cache_keys_of_what_shows_it(monkeypatch):
    table = directives.step_of_directive("table", "placement.by_layout", "zh", "placement.md")
    bench = directives.step_of_directive("value", "bench.machine", "zh", "performance.md")
    other = directives.step_of_directive("value", "batchnorm.batch_small", "zh", "interview.md")
    fig = figures.step_of("placement_training", "zh", "light")
    plain = figures.step_of("scale_invariance", "zh", "light")
    _edited(monkeypatch, "experiments.placement", "output norm", "输出归一化")
    assert directives.step_of_directive("table", "placement.by_layout", "zh", "placement.md").key != table.key
    assert figures.step_of("placement_training", "zh", "light").key != fig.key  # its legend names the variants
    # what does not import that module keeps its key
    assert directives.step_of_directive("value", "bench.machine", "zh", "performance.md").key == bench.key
    assert directives.step_of_directive("value", "batchnorm.batch_small", "zh", "interview.md").key == other.key
    assert figures.step_of("scale_invariance", "zh", "light").key == plain.key
    _edited(monkeypatch, "values.bench", "implementation", "实现方式")
    assert values.table("bench.implementations", "zh").columns[0].label == "实现方式"
    assert directives.step_of_directive("value", "bench.machine", "zh", "performance.md").key != bench.key


def test_a_data_file_beside_a_module_is_part_of_the_keys_of_what_imports_it(monkeypatch):
    mods = cache.closure(("normref.figures.batchnorm",))
    before = labels.key_inputs(mods)
    assert "normref.experiments.smollm2_batch" in labels.data_files_of(mods)
    assert labels.key_inputs(cache.closure(("normref.figures.basics",))) == {}
    real = labels.data_files_of
    monkeypatch.setattr(labels, "data_files_of", lambda ms: {m: "0" * 64 for m in real(ms)})
    assert labels.key_inputs(mods) != before


def test_the_batch_sentences_come_from_their_data_file_validated(tmp_path, monkeypatch):
    assert len(smollm2_batch.TEXTS) == 40 and smollm2_batch.TEXTS[0] == "The train was late again."
    assert smollm2_batch.TEXTS[-1] == "明天多云，下午有雨。"
    bad = tmp_path / "smollm2_batch.yml"
    bad.write_text("en: [a]\nzh: []\n", encoding="utf-8")
    monkeypatch.setattr(smollm2_batch, "_TEXTS_FILE", bad)
    with pytest.raises(ValueError, match=r"smollm2_batch\.yml: zh: expected a non-empty list of sentences"):
        smollm2_batch._texts()
    bad.write_text("en: [a]\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"expected \{en: \[sentences\], zh: \[sentences\]\}"):
        smollm2_batch._texts()
