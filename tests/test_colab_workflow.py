"""The Pages workflow's colab job, run locally: for a fake fork, a custom domain and an owner name in other
case, `make colab` in a temporary git repository pushes a `colab` branch whose notebooks install from the
address the site was built for, and the built pages' Colab links point at them (normsite.colab,
.github/workflows/pages.yml, Makefile)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from normsite import colab, install
from normsite.takehome import SITE_BUILD_ENV, TakeHome
from support import LANGS, ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "pages.yml"


def _workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def _evaluate(expr: str, ctx: dict) -> str:
    """A GitHub Actions ``${{ … }}`` expression of the forms the workflow uses: contexts (``vars.X``,
    ``steps.pages.outputs.base_url``, ``github.repository``, ``needs.build.outputs.X``), ``format('{0}/', …)``
    and ``a || b`` (the first that is not empty)."""
    def one(e: str) -> str:
        e = e.strip()
        m = re.fullmatch(r"format\('([^']*)',\s*(.+)\)", e)
        if m:
            return m.group(1).replace("{0}", one(m.group(2)))
        assert re.fullmatch(r"[a-z_]+(\.[A-Za-z_]+)+", e), f"unsupported expression {e!r}"
        value = ctx
        for part in e.split("."):
            value = value.get(part, "") if isinstance(value, dict) else ""
        return value or ""

    def text(s: str) -> str:
        return re.sub(r"\$\{\{(.*?)\}\}", lambda m: next((v for v in map(one, m.group(1).split("||")) if v), ""), s)

    return text(expr)


def _tree(tmp: Path, repository: str) -> tuple[Path, Path]:
    """A clone of this repository as a fork's runner checks it out (committed, origin a bare remote)."""
    remote, work = tmp / "origin.git", tmp / "work"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    for d in ("normsite", "normref", "docs/zh/notebooks", "docs/en/notebooks"):
        shutil.copytree(ROOT / d, work / d, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for f in ("Makefile", "requirements.txt", "pyproject.toml", "mkdocs.yml", ".gitignore"):
        shutil.copyfile(ROOT / f, work / f)
    git = ["git", "-C", str(work)]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "-c", "user.name=Owner", "-c", "user.email=owner@example.org", "commit", "-qm", repository],
                   check=True)
    subprocess.run([*git, "remote", "add", "origin", str(remote)], check=True)
    subprocess.run([*git, "push", "-q", "origin", "main"], check=True)
    return work, remote


def _git_out(remote: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(remote), *args], capture_output=True, text=True, check=True).stdout


CASES = {
    # (github.repository, what configure-pages reports, the repository variable NORMREF_SITE_URL)
    "fork": ("octo/normref-docs", "https://octo.github.io/normref-docs", ""),
    "custom-domain": ("octo/normref-docs", "https://octo.github.io/normref-docs", "https://docs.example.org/"),
    "owner-in-other-case": ("Octo-Org/NormRef-Docs", "https://octo-org.github.io/NormRef-Docs", ""),
}


def test_the_workflow_builds_and_publishes_for_one_address():
    wf = _workflow()
    build, job = wf["jobs"]["build"], wf["jobs"]["colab"]
    expr = build["outputs"]["site_url"]
    make_build = next(s for s in build["steps"] if s.get("run") == "make build")
    assert make_build["env"]["NORMREF_SITE_URL"] == expr, "the site and its notebooks name one address"
    assert "vars.NORMREF_SITE_URL" in expr and "steps.pages.outputs.base_url" in expr
    assert "build" in job["needs"] and "deploy" in job["needs"] and job["permissions"] == {"contents": "write"}
    make_colab = next(s for s in job["steps"] if s.get("run") == "make colab")
    assert make_colab["env"] == {"NORMREF_SITE_URL": "${{ needs.build.outputs.site_url }}"}
    setup = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/setup-python@"))
    assert str(setup["with"]["python-version"]) == "3.11" and "cache" not in setup["with"]
    assert [s["uses"].split("@")[0] for s in job["steps"] if "uses" in s] == ["actions/checkout", "actions/setup-python"]


# The fork runs in make test-fast; the other two addresses run `make colab` end to end again (2 s each), and the
# custom domain deploys twice: make test.
@pytest.mark.parametrize("case", [c if c == "fork" else pytest.param(c, marks=pytest.mark.command) for c in CASES])
def test_a_forks_deploy_pushes_the_colab_branch_the_pages_link_to(case, tmp_path, monkeypatch):
    repository, base_url, variable = CASES[case]
    wf = _workflow()
    ctx = {"vars": {"NORMREF_SITE_URL": variable}, "steps": {"pages": {"outputs": {"base_url": base_url}}},
           "github": {"server_url": "https://github.com", "repository": repository, "ref_name": "main"}}
    site_url = _evaluate(wf["jobs"]["build"]["outputs"]["site_url"], ctx)
    assert site_url == (variable or base_url + "/")
    ctx["needs"] = {"build": {"outputs": {"site_url": site_url}}}
    step = next(s for s in wf["jobs"]["colab"]["steps"] if s.get("run") == "make colab")
    env = {k: _evaluate(v, ctx) for k, v in step["env"].items()}

    work, remote = _tree(tmp_path, repository)
    main_before = _git_out(remote, "rev-parse", "main")
    # A runner: no git identity, no venv in the checkout (make uses $(PYTHON)), the light install present.
    run_env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "NORMREF_SITE", "VIRTUAL_ENV"))}
    run_env.update(env, HOME=str(tmp_path / "home"), GIT_CONFIG_NOSYSTEM="1")
    # The second deploy replaces the branch (a force-push of a new orphan commit): checked once, in make test.
    for attempt in ((1, 2) if case == "custom-domain" else (1,)):
        p = subprocess.run(["make", "-s", "colab", f"PYTHON={sys.executable}"], cwd=work, env=run_env,
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stdout + p.stderr
        assert f"notebooks for {site_url}, pushed to origin" in p.stdout, p.stdout
    log = _git_out(remote, "log", "--format=%H %P|%an|%s", "colab").strip().splitlines()
    assert len(log) == 1 and log[0].split("|")[0].split(" ")[1:] == [""], "one commit, no parent"
    assert log[0].split("|")[1] == "github-actions[bot]" and site_url in log[0]
    assert _git_out(remote, "rev-parse", "main") == main_before, "main is not pushed to"
    files = sorted(_git_out(remote, "ls-tree", "-r", "--name-only", "colab").split())
    want = sorted([colab.notebook_path(lang, s) for lang, ss in colab.sources().items() for s in ss] + ["README.md"])
    assert files == want

    wheel = install.wheel_url(site_url)
    assert wheel.startswith(site_url) and "127.0.0.1" not in wheel
    monkeypatch.delenv(SITE_BUILD_ENV, raising=False)  # TakeHome.configure sets it, as in a build
    repo_url = _evaluate("${{ github.server_url }}/${{ github.repository }}", ctx)
    for lang in LANGS:
        home = TakeHome(lang, ROOT / "docs" / lang)
        home.configure(site_url, repo_url, _evaluate("${{ github.ref_name }}", ctx))
        for src in colab.sources()[lang]:
            links = home.notebook_links(f"notebooks/{src.name}")
            path = colab.notebook_path(lang, src)
            assert links["colab"] == f"https://colab.research.google.com/github/{repository}/blob/colab/{path}"
            assert links["repo_ipynb"] == f"https://github.com/{repository}/blob/colab/{path}"
            text = _git_out(remote, "show", f"colab:{path}")
            assert text == home.ipynb(src), "Colab opens the page's own download"
            first = next(c for c in json.loads(text)["cells"] if c["cell_type"] == "code")
            assert f'pip_install(["normref' in "".join(first["source"]) and f" @ {wheel}\"]" in "".join(first["source"])
            assert "127.0.0.1" not in text and install.WHEEL_TOKEN not in text
    assert site_url in _git_out(remote, "show", "colab:README.md")
    # main is untouched: the work tree, its index and its branch are as they were.
    status = subprocess.run(["git", "-C", str(work), "status", "--porcelain"], capture_output=True, text=True).stdout
    assert status == "" and _git_out(work / ".git", "symbolic-ref", "HEAD").strip() == "refs/heads/main"


def test_make_colab_refuses_the_local_default(tmp_path):
    """Run without the workflow's address, it fails before pushing anything: the default is 127.0.0.1."""
    work, remote = _tree(tmp_path, "octo/normref-docs")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NORMREF_SITE")}
    p = subprocess.run(["make", "-s", "colab", f"PYTHON={sys.executable}"], cwd=work, env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode != 0 and "must install from the published site" in p.stderr and "127.0.0.1" in p.stderr
    assert "colab" not in _git_out(remote, "branch", "--list")


def test_making_the_notebooks_needs_no_torch_and_no_mkdocs(tmp_path):
    """The colab job's light install: numpy, PyYAML, jupytext, nbformat. Everything heavy is blocked here."""
    heavy = ["torch", "mkdocs", "material", "matplotlib", "mplfonts", "tinycss2", "mkdocs_jupyter", "nbconvert",
             "nbclient", "markdown", "gguf", "tokenizers", "safetensors", "scipy", "jieba", "setuptools"]
    code = (f"import sys\nfor m in {heavy!r}: sys.modules[m] = None\n"
            "from normsite.colab import main\nsys.exit(main(['--out', sys.argv[1], '--site-url', 'https://o.github.io/r/']))\n")
    p = subprocess.run([sys.executable, "-c", code, str(tmp_path / "out")], cwd=ROOT, capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert len(list((tmp_path / "out" / "notebooks").rglob("*.ipynb"))) == sum(map(len, colab.sources().values()))
