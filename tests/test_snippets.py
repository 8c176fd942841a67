"""Every snippet runs as the build runs it (normsite.snippets.run; tests/test_copy.py runs each as a reader would,
copied from a page into a fresh virtualenv), and the worked example prints what the page states."""

from __future__ import annotations

import numpy as np
import pytest

import normref
from support import ROOT, code_only, comparable, run_snippet, snippet_loads_models

SNIPPETS = sorted((ROOT / "snippets").glob("*.py"))
# Each snippet's Chinese variant (the zh pages show it): the same code, Chinese comments and docstring.
ZH = ROOT / "snippets" / "zh"
# A snippet that loads real weights runs in its own test, which asks for the models (marker `models`).
PLAIN = [p for p in SNIPPETS if not snippet_loads_models(p)]
MODELS = [p for p in SNIPPETS if snippet_loads_models(p)]


def _check(path):
    src = path.read_text(encoding="utf-8")
    assert src.lstrip().startswith('"""'), f"{path.name} must start with a one-paragraph docstring"
    out = run_snippet(path)
    assert out.strip(), f"{path.name} prints nothing; a snippet prints what the page shows"
    # The Chinese variant: a zh page shows it, and the output the build ran from the English file under it.
    zh = ZH / path.name
    assert zh.is_file(), f"snippets/{path.name} has no Chinese variant snippets/zh/{path.name}"
    zh_src = zh.read_text(encoding="utf-8")
    assert zh_src.lstrip().startswith('"""'), f"zh/{path.name} must start with a one-paragraph docstring"
    # The same code, comments and docstrings aside, prints the same, so the Chinese file is not run again (as
    # tests/test_copy.py runs a snippet that both pages copy alike once), unless the code reads its docstring.
    assert code_only(zh_src) == code_only(src), \
        f"snippets/zh/{path.name} differs from snippets/{path.name} in more than comments and docstrings"
    assert "__doc__" not in code_only(src), f"{path.name} reads its docstring: run its Chinese variant too"


def test_there_are_snippets():
    assert any(p.name == "worked_example.py" for p in SNIPPETS)
    assert set(PLAIN) | set(MODELS) == set(SNIPPETS) and PLAIN


def test_every_chinese_variant_has_its_english_snippet():
    names = {p.name for p in SNIPPETS}
    extra = sorted(p.name for p in ZH.glob("*") if p.name not in names and p.name != "__pycache__")
    assert not extra, f"snippets/zh/ holds files with no English snippet: {extra}"


def test_code_only_ignores_comments_and_docstrings_only():
    a = '"""Doc."""\nimport numpy as np  # a comment\n\n\ndef f(x):\n    """Doc."""\n    return x\n'
    b = '"""文档。"""\nimport numpy as np  # 注释\n\n\ndef f(x):\n    return x\n'
    assert code_only(a) == code_only(b)
    assert code_only(a) != code_only(a.replace("return x", "return -x"))
    assert code_only(a) != code_only(a.replace('print', 'print').replace("import numpy as np", "import numpy"))


@pytest.mark.parametrize("path", PLAIN, ids=[p.name for p in PLAIN])
def test_snippet_runs_and_has_docstring(path):
    _check(path)


@pytest.mark.parametrize("path", MODELS, ids=[p.name for p in MODELS])
def test_model_snippet_runs_and_has_docstring(path, real_models):
    _check(path)


def test_worked_example_prints_normrefs_numbers():
    out = run_snippet("worked_example.py")
    y = normref.rms_norm(np.array([2.0, -1.0, 3.0, 0.0]))
    assert f"RMS(x)    = {round(float(np.sqrt(3.5 + 1e-6)), 4)}" in out
    assert str(np.round(y, 4)) in out
    assert "agrees with by-hand : True" in out
