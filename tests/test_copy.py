"""The copy test: every snippet and every notebook, taken from the built pages, run where a reader runs them.

What a reader does, step by step:

1. The built site is served on 127.0.0.1 (the session's site and server, the
   `served` fixture: built for that address, so every install line names the
   served wheel).
2. In Chromium, on every page with a snippet, the copy buttons of the snippet
   and of the install block next to it are clicked and the clipboard is read:
   exactly what a reader pastes. The output block under the snippet is what the
   page shows. Each notebook's .ipynb is downloaded over HTTP from its page's
   download button, and the line its page gives for a Jupyter kernel is copied.
3. Fresh virtualenvs (python3.11 -m venv; nothing of the repository on
   sys.path, an empty working folder per run) get only what the pages say:
   the copied install lines (a block is pasted into bash: its comment lines do
   nothing), with the wheel fetched over HTTP from the served site. Where a line
   installs torch, the page's CPU-only line comes first (PyTorch's CPU wheel
   index). A constraints file holds torch at the pinned 2.13.0 (the local CPU
   wheel: anything else would download gigabytes); pip otherwise uses this
   machine's configuration, as CI does. Without it, see "Once without the
   constraints file" below.
   - Snippets whose line installs normref without extras run in a virtualenv
     that has nothing else: no torch, no matplotlib. So their line is enough.
   - The other snippets, and every notebook, share one virtualenv, made once:
     it starts with a Jupyter kernel only (the notebook pages' line), and the
     first cell of a downloaded notebook must install normref into it.
4. Each snippet must exit 0 and print what the page shows; each notebook must
   run top to bottom (nbclient, the kernel in the fresh virtualenv). A Chinese page
   shows snippets/zh/NAME, the same code with Chinese comments and docstrings. A
   snippet that both languages' pages copy alike (the same install line, the same
   code once comments and docstrings are left out: support.code_only) runs once,
   and its output is compared with what each page shows.

Timings per snippet and notebook go to test-artifacts/copy-times.json, with each
virtualenv's size on disk, the torch it ended up with, its nvidia-* packages and
whether the constraints file was used ("venvs"), and the machine ("machine").

Once without the constraints file: NORMREF_COPY_UNCONSTRAINED=1 leaves it out, to
see what the pages' lines alone install, the CPU-only torch line included (a
reader who skips that line on Linux gets the CUDA build and its nvidia-* packages,
gigabytes more). Its report goes to test-artifacts/copy-times-unconstrained.json
instead, so the constrained report is kept; "size_mb" is each virtualenv's size,
and a torch version ending in +cpu is the CPU build. It measures a reader's
install only where pip reaches PyTorch's index (download.pytorch.org) and PyPI:
leave this machine's pip configuration out too (PIP_CONFIG_FILE=/dev/null, and
unset PIP_FIND_LINKS and PIP_EXTRA_INDEX_URL, which the virtualenvs inherit),
or a local wheel stands in for the download. For the torch snippet alone (the
first cell of the toll-booth notebook sets up the shared virtualenv first):

    NORMREF_COPY_UNCONSTRAINED=1 PIP_CONFIG_FILE=/dev/null \\
        env -u PIP_FIND_LINKS -u PIP_EXTRA_INDEX_URL python -m pytest tests/test_copy.py \\
        -k "toll_booth_gradients or copy_times_are_recorded"

Markers: `copy` is written on the file; the fixtures add `build` (the served site)
and `browser` (the module's Chromium tab), so the fast tier never runs this.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin

import pytest

from support import LANGS, ROOT, Served, Venv, code_only, comparable as _comparable, lang_root, make_venv, pages, \
    shell_commands

pytestmark = pytest.mark.copy

TORCH_PIN = "torch==2.13.0"  # requirements.txt's pin; the only torch on this machine's disk
ARTIFACTS = ROOT / "test-artifacts"
RUN_TIMEOUT_S = 900
TIMES: dict[str, dict[str, float]] = {"install": {}, "snippet": {}, "notebook": {}}
# Without the constraints file (once, by hand): what the pages' lines alone install, the CPU torch line included.
UNCONSTRAINED = os.environ.get("NORMREF_COPY_UNCONSTRAINED") == "1"
VENVS: dict[str, Path] = {}  # name: the virtualenvs made, measured at the end (test_copy_times_are_recorded)


# ------------------------------------------------------------------ what the pages give a reader


@dataclass
class Snippet:
    lang: str
    page: str  # path below the language root
    name: str  # NAME of snippets/NAME, from the block's title
    file: str  # the file the block shows, below snippets/: NAME, or zh/NAME (its Chinese variant) on a zh page
    install: str  # what the install block's copy button copies
    code: str  # what the snippet's copy button copies
    shown: str | None  # the output block under it, as the page shows it (None: code-only snippet)

    @property
    def id(self) -> str:
        return f"{self.lang}-{self.name}"


@dataclass
class Notebook:
    lang: str
    name: str
    ipynb: bytes  # downloaded from the page's download button
    kernel_line: str  # copied from the page: what a bare environment needs


@dataclass
class Copies:
    snippets: list[Snippet] = field(default_factory=list)
    notebooks: list[Notebook] = field(default_factory=list)


def _page_url(base: str, lang: str, page: Path, site: Path) -> str:
    rel = page.relative_to(lang_root(site, lang)).as_posix()
    rel = rel[: -len("index.html")] if rel.endswith("index.html") else rel
    return base + ("" if lang == "zh" else "en/") + rel


COPY_BUTTON = 'button[data-md-type="copy"], button.md-clipboard'  # Material 9.8, and before


def _copy(page, block) -> str:
    """Hover a code block, click its copy button, as a reader does, and return the clipboard."""
    page.evaluate("navigator.clipboard.writeText('')")
    block.hover()  # scrolls the block into view first, as Playwright's hover and click do
    block.locator(COPY_BUTTON).first.click()
    page.wait_for_function("async () => (await navigator.clipboard.readText()) !== ''")
    return page.evaluate("navigator.clipboard.readText()")


@pytest.fixture(scope="module")
def copies(served: Served, tab) -> Copies:
    """What a reader copies and downloads, page by page, in the module's tab (the served site only;
    a request to any other host is recorded and aborted)."""
    site, base = served.root, served.base
    page = tab.page
    out = Copies()
    for lang in LANGS:
        for f in pages(site, lang):
            text = f.read_text(encoding="utf-8")
            is_notebook = "nr-notebook-download" in text
            if 'class="filename">snippets/' not in text and not is_notebook:
                continue
            url = _page_url(base, lang, f, site)
            page.goto(url, wait_until="load")
            rel = url[len(base):]
            blocks = page.locator("div.highlight:has(> span.filename)")
            titles = blocks.evaluate_all("bs => bs.map(b => b.querySelector(':scope > span.filename').textContent)")
            assert sum(t.startswith("snippets/") for t in titles) == text.count('<span class="filename">snippets/'), \
                f"{rel}: the page shows {titles}, not every snippet block of its HTML"
            for i, title in enumerate(titles):
                if not title.startswith("snippets/"):
                    continue
                assert i > 0 and titles[i - 1].startswith(("运行前先安装", "Install first")), \
                    f"{rel}: {title} has no install block before it ({titles[:i]})"
                install_btn, code_btn = blocks.nth(i - 1), blocks.nth(i)
                shown = None
                if i + 1 < len(titles) and titles[i + 1] in ("输出", "Output"):
                    shown = blocks.nth(i + 1).locator("code").text_content()
                file = title.removeprefix("snippets/")
                out.snippets.append(Snippet(lang, rel, Path(file).name, file,
                                            _copy(page, install_btn), _copy(page, code_btn), shown))
            if is_notebook:
                href = page.locator(".nr-notebook-download a[href$='.ipynb']").first.get_attribute("href")
                with urllib.request.urlopen(urljoin(url, href), timeout=60) as r:
                    data = r.read()
                kernel_btn = page.locator(".nr-notebook-run + div.highlight").first
                out.notebooks.append(Notebook(lang, Path(href).stem, data, _copy(page, kernel_btn)))
    assert not tab.foreign, f"requests to other hosts: {tab.foreign[:5]}"
    return out


def test_every_snippet_and_notebook_was_found(copies, served):
    names = sorted(p.name for p in (ROOT / "snippets").glob("*.py"))
    for lang in LANGS:
        got = {s.name for s in copies.snippets if s.lang == lang}
        assert got == set(names), (lang, set(names) ^ got)
        nbs = sorted(n.name for n in copies.notebooks if n.lang == lang)
        assert nbs == sorted(p.stem for p in (ROOT / "docs" / lang / "notebooks").glob("*.py")), (lang, nbs)
    for s in copies.snippets:
        # The copy is the file: Material trims trailing whitespace from every copy (its clipboard code calls
        # trimEnd()), so the file's final newline is the one thing that may be missing. And the install line
        # names the served wheel. A Chinese page shows the Chinese variant (every snippet has one: test_snippets).
        assert s.file == (f"zh/{s.name}" if s.lang == "zh" else s.name), f"{s.page} shows snippets/{s.file}"
        text = (ROOT / "snippets" / s.file).read_text(encoding="utf-8")
        assert s.code in (text, text.rstrip("\n")), f"{s.page}: the copy of snippets/{s.file} differs from the file"
        commands = shell_commands(s.install)
        assert commands and all(c.startswith("pip install ") for c in commands), s.install
        assert any(f"@ {_served_wheel(served)}\"" in c for c in commands), s.install
        if any(re.search(r"normref\[[^]]*\b(torch|models)\b", c) for c in commands):  # it installs torch: CPU first
            assert commands[0].startswith("pip install torch==") and "--index-url https://download.pytorch.org/whl/cpu" \
                in commands[0] and s.install.lstrip().startswith("#"), s.install


def _served_wheel(served: Served) -> str:
    wheels = sorted((served.root / "wheels").glob("normref-*.whl"))
    assert len(wheels) == 1, wheels
    return served.base + "wheels/" + wheels[0].name


# ------------------------------------------------------------------ fresh virtualenvs


def _make_venv(path: Path, tmp: Path) -> Venv:
    """A fresh virtualenv as a reader makes one (support.make_venv); torch held at the pin unless
    NORMREF_COPY_UNCONSTRAINED=1; recorded for the report."""
    venv = make_venv(path, tmp, constraints=None if UNCONSTRAINED else TORCH_PIN)
    VENVS[path.name] = path
    return venv


@pytest.fixture(scope="module")
def copy_tmp(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("copy")


@pytest.fixture(scope="module")
def numpy_venv(copy_tmp) -> Venv:
    """For the snippets whose line installs normref alone: a virtualenv that gets nothing else."""
    return _make_venv(copy_tmp / "venv-numpy", copy_tmp)


def _kernel_spec(venv: Venv, cwd: Path) -> Path:
    p = subprocess.run([venv.python, "-m", "ipykernel", "install", "--prefix", str(venv.root), "--name", "fresh",
                        "--display-name", "fresh virtualenv"], cwd=cwd, env=venv.env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return venv.root / "share" / "jupyter" / "kernels"


def _run_notebook(nb_bytes: bytes, venv: Venv, kernels: Path, work: Path, cells: int | None = None):
    """Execute a downloaded notebook (its first ``cells`` cells, or all) with the virtualenv's kernel, in ``work``."""
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient

    nb = nbformat.reads(nb_bytes.decode("utf-8"), as_version=4)
    if cells is not None:
        code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"][:cells]
        nb.cells = nb.cells[: code[-1] + 1]
    km = AsyncKernelManager(kernel_name="fresh", kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernels)]))
    client = NotebookClient(nb, km=km, timeout=RUN_TIMEOUT_S, allow_errors=False)
    work.mkdir(parents=True, exist_ok=True)
    client.execute(env=venv.env, cwd=str(work))
    return nb


@pytest.fixture(scope="module")
def full_venv(copy_tmp, copies, served):
    """The virtualenv for everything that needs more than numpy: it starts with only what a notebook page
    says a bare environment needs (a Jupyter kernel); a downloaded notebook's first cell installs normref."""
    venv = _make_venv(copy_tmp / "venv-full", copy_tmp)
    work = copy_tmp / "work-setup"
    work.mkdir()
    first = next(n for n in copies.notebooks if n.name == "toll_booth" and n.lang == "en")
    TIMES["install"]["kernel (pip install ipykernel)"] = venv.install(first.kernel_line, work)
    kernels = _kernel_spec(venv, work)
    assert not venv.can_import("normref", work) and not venv.can_import("torch", work)
    t0 = time.perf_counter()
    _run_notebook(first.ipynb, venv, kernels, copy_tmp / "work-first-cell", cells=1)
    TIMES["install"]["normref[plot,torch] by a notebook's first cell"] = time.perf_counter() - t0
    for module in ("normref", "torch", "matplotlib"):
        assert venv.can_import(module, work), f"the first cell did not install {module}"
    # ...from the served site's wheel, not from anywhere else.
    p = subprocess.run([venv.python, "-c", "import importlib.metadata as m; print(m.distribution('normref')"
                        ".read_text('direct_url.json'))"], cwd=work, env=venv.env, capture_output=True, text=True)
    assert json.loads(p.stdout)["url"] == _served_wheel(served), p.stdout
    return venv, kernels


# ------------------------------------------------------------------ running them


def _all_snippets() -> list[str]:
    return [p.name for p in sorted((ROOT / "snippets").glob("*.py"))]


def _all_notebooks() -> list[tuple[str, str]]:
    return [(lang, p.stem) for lang in LANGS for p in sorted((ROOT / "docs" / lang / "notebooks").glob("*.py"))]


def _the(copies: Copies, lang: str, name: str) -> Snippet:
    found = [s for s in copies.snippets if s.lang == lang and s.name == name]
    assert found, f"snippets/{name} is on no {lang} page"
    return found[0]


@pytest.mark.parametrize("name", _all_snippets())
def test_snippet_runs_from_the_served_wheel_as_copied(name, copies, numpy_venv, full_venv, copy_tmp):
    """Each language's page, as copied: the install line and the code. Where both pages copy the same
    (the same wheel, the same code: the Chinese page's copy differs in comments and docstrings only, and
    code with the same syntax tree runs the same), one run answers for both, and its output is compared
    with what each page shows; a copy that differs runs on its own."""
    runs: dict[tuple[str, str], list[Snippet]] = {}
    for lang in LANGS:
        s = _the(copies, lang, name)
        runs.setdefault((s.install, code_only(s.code)), []).append(s)
    for same in runs.values():
        _run_snippet(same, numpy_venv, full_venv, copy_tmp)


def _run_snippet(same: list[Snippet], numpy_venv: Venv, full_venv, copy_tmp: Path):
    s = same[0]
    name = s.name
    numpy_only = '"normref @ ' in s.install  # no extras: the page says normref alone is enough
    venv = numpy_venv if numpy_only else full_venv[0]
    run = copy_tmp / f"run-{s.id}"
    (run / "code").mkdir(parents=True)
    (run / "work").mkdir()
    took = venv.install(s.install, run / "work")
    if took:
        TIMES["install"][shell_commands(s.install)[-1][:90] + (" (numpy-only venv)" if numpy_only else "")] = took
    if numpy_only:
        assert not numpy_venv.can_import("torch", run / "work"), "the numpy-only virtualenv got torch"
    script = run / "code" / name
    script.write_text(s.code, encoding="utf-8")
    t0 = time.perf_counter()
    p = subprocess.run([venv.python, str(script)], cwd=run / "work", env=venv.env, capture_output=True, text=True,
                       timeout=RUN_TIMEOUT_S)
    TIMES["snippet"]["+".join(t.lang for t in same) + "-" + name] = time.perf_counter() - t0
    assert p.returncode == 0, f"{s.page} snippets/{name}, copied and run in a fresh virtualenv:\n{p.stderr[-3000:]}"
    for t in same:
        if t.shown is not None:
            assert _comparable(p.stdout) == _comparable(html.unescape(t.shown)), \
                f"{t.page} snippets/{name}: the output differs from what the page shows"
        else:
            assert p.stdout.strip(), f"snippets/{name} printed nothing"


@pytest.mark.parametrize("lang,name", _all_notebooks(), ids=[f"{l}-{n}" for l, n in _all_notebooks()])
def test_notebook_runs_top_to_bottom_in_the_fresh_virtualenv(lang, name, copies, full_venv, copy_tmp):
    found = [n for n in copies.notebooks if n.lang == lang and n.name == name]
    assert found, f"no notebook page offers {name}.ipynb in {lang}"
    venv, kernels = full_venv
    t0 = time.perf_counter()
    nb = _run_notebook(found[0].ipynb, venv, kernels, copy_tmp / f"nb-{lang}-{name}")
    TIMES["notebook"][f"{lang}-{name}"] = time.perf_counter() - t0
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors
    assert any(o.get("output_type") == "stream" for c in nb.cells for o in c.get("outputs", [])), "printed nothing"


def _size_mb(folder: Path) -> float:
    """Bytes on disk under ``folder`` (links not followed), in MB."""
    total = 0
    for dirpath, _, files in os.walk(folder):
        for f in files:
            p = Path(dirpath, f)
            if not p.is_symlink():
                total += p.stat().st_size
    return round(total / 1e6, 1)


def _venv_report(path: Path) -> dict:
    python = str(path / "bin" / "python")
    code = ("import importlib.metadata as m, json; ds = [d.metadata['Name'] for d in m.distributions()]; "
            "print(json.dumps({'torch': next((d.version for d in m.distributions() if d.metadata['Name'] == 'torch'), None), "
            "'nvidia': sorted(n for n in ds if n.lower().startswith('nvidia'))}))")
    p = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=120)
    info = json.loads(p.stdout) if p.returncode == 0 else {"error": p.stderr[-500:]}
    return {"size_mb": _size_mb(path), **info}


def _machine() -> dict:
    """Where the virtualenvs were made: the system, the processor, the Python, and the pip sources the
    virtualenvs saw (this machine's pip configuration and PIP_* variables decide what a line downloads)."""
    import platform

    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").is_file() else \
        platform.processor()
    pip_env = {k: v for k, v in sorted(os.environ.items()) if k.startswith("PIP_") and k != "PIP_CONSTRAINT"}
    return {"system": platform.platform(), "cpu": cpu, "python": platform.python_version(), "pip_env": pip_env}


def test_copy_times_are_recorded():
    """Last in the file: write what each run took, and what each virtualenv holds and takes on disk, with the
    machine (the report quotes them). With NORMREF_COPY_UNCONSTRAINED=1 (the module's docstring) the report goes to
    copy-times-unconstrained.json: the size a reader's lines alone give."""
    ARTIFACTS.mkdir(exist_ok=True)
    report = dict(TIMES, venvs={name: dict(_venv_report(path), constrained=not UNCONSTRAINED)
                                for name, path in sorted(VENVS.items()) if path.is_dir()}, machine=_machine())
    name = "copy-times-unconstrained.json" if UNCONSTRAINED else "copy-times.json"
    (ARTIFACTS / name).write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    assert TIMES["snippet"] or TIMES["notebook"], "nothing ran"
