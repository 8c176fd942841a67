"""The repository links and the notebooks a reader opens elsewhere (Colab, their own Jupyter).

- **Repository links.** When the site is built for a GitHub repository (the
  Pages workflow passes ``NORMREF_REPO_URL`` and ``NORMREF_REPO_BRANCH``),
  each page gets Material's repository link and "edit this page" button: the
  edit URI points into ``docs/<lang>/``, the folder each language is built
  from. Without those variables (a local ``make build``) there are none.
- **The notebooks Colab opens.** Colab opens notebooks from a GitHub
  repository, so the Pages workflow (``make colab``) makes, for every jupytext
  source ``docs/<lang>/notebooks/NAME.py``, the unexecuted
  ``notebooks/<lang>/NAME.ipynb`` whose first cell installs normref from the
  wheel of the site it deploys (:func:`write_notebooks`: the same text as the
  page's .ipynb download), and force-pushes them as the one commit of the
  branch ``colab`` (:func:`publish`). Nothing with an address is committed on
  the main branch, and a local address is refused. Making them needs numpy,
  PyYAML, jupytext and nbformat only: no torch, no MkDocs. A notebook page of
  a build for a GitHub repository links to that branch.
- **Notebook failures.** :func:`describe_failure` turns nbclient's
  CellExecutionError into one line naming the source file, the cell and the
  line of the .py file.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from . import LANGS, SiteError
from . import install
from .notebooks import ipynb_text
from .wheel import wheel_name

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = "notebooks"  # notebooks/<lang>/NAME.ipynb on the colab branch
COLAB_BRANCH = "colab"  # the branch the Pages workflow force-pushes with the notebooks (make colab)
COLAB = "https://colab.research.google.com/github"
# Who commits the colab branch on a runner with no git identity: GitHub's Actions bot.
BOT = ("github-actions[bot]", "41898282+github-actions[bot]@users.noreply.github.com")

__all__ = ["Repo", "repo_from", "sources", "notebook_path", "export", "write_notebooks", "publish", "is_local",
           "describe_failure", "default_site_url", "COLAB_BRANCH"]


# ------------------------------------------------------------------ the repository


@dataclass(frozen=True)
class Repo:
    url: str  # https://github.com/OWNER/NAME, no trailing slash
    branch: str

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or ""

    @property
    def name(self) -> str:
        """OWNER/NAME, shown in the header next to the repository icon."""
        return urlsplit(self.url).path.strip("/")

    def edit_uri(self, lang: str) -> str:
        """Relative to repo_url: MkDocs appends the page's path inside docs/<lang>/."""
        if lang not in LANGS:
            raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
        return f"edit/{self.branch}/docs/{lang}/"

    def blob(self, path: str) -> str:
        return f"{self.url}/blob/{self.branch}/{path}"

    def colab(self, path: str) -> str | None:
        """Colab's address for a notebook on this repository's colab branch; None off github.com (Colab reads
        only there)."""
        if self.host != "github.com":
            return None
        return f"{COLAB}/{self.name}/blob/{COLAB_BRANCH}/{path}"

    def notebook_blob(self, path: str) -> str:
        """The notebook on the colab branch, as GitHub shows it."""
        return f"{self.url}/blob/{COLAB_BRANCH}/{path}"


def repo_from(repo_url: str | None, branch: str | None) -> Repo | None:
    """The repository the site is built for, or None when repo_url is unset (a local build)."""
    if not repo_url:
        return None
    parts = urlsplit(repo_url)
    path = parts.path.strip("/")
    if parts.scheme != "https" or not parts.hostname or path.count("/") != 1 or parts.query or parts.fragment:
        raise SiteError(f"repo_url must look like https://github.com/OWNER/NAME, got {repo_url!r} "
                        "(NORMREF_REPO_URL)")
    if not branch or not re.fullmatch(r"[A-Za-z0-9._/-]+", branch) or ".." in branch:
        raise SiteError(f"the repository branch must be a branch name, got {branch!r} (NORMREF_REPO_BRANCH)")
    return Repo(url=f"{parts.scheme}://{parts.netloc}/{path.removesuffix('.git')}", branch=branch)


# ------------------------------------------------------------------ the notebooks Colab opens


def sources(root: Path = ROOT) -> dict[str, list[Path]]:
    """{lang: [docs/<lang>/notebooks/*.py]}: the jupytext sources."""
    return {lang: sorted((root / "docs" / lang / "notebooks").glob("*.py")) for lang in LANGS}


def notebook_path(lang: str, source: Path) -> str:
    """notebooks/<lang>/NAME.ipynb: where a notebook lies on the colab branch."""
    return f"{NOTEBOOKS}/{lang}/{source.stem}.ipynb"


def export(source: str | Path, wheel_url: str) -> str:
    """The notebook Colab opens: the site's own download (normsite.notebooks.ipynb_text) for ``wheel_url``."""
    return ipynb_text(source, wheel_url)


def default_site_url(root: Path = ROOT) -> str:
    """NORMREF_SITE_URL, else the default that mkdocs.yml gives site_url (read as text: no MkDocs needed)."""
    given = os.environ.get("NORMREF_SITE_URL")
    if given:
        return given
    text = (root / "mkdocs.yml").read_text(encoding="utf-8")
    m = re.search(r'^site_url:\s*!ENV\s*\[\s*NORMREF_SITE_URL\s*,\s*"([^"]+)"\s*\]', text, re.M)
    if not m:
        raise SiteError("mkdocs.yml: cannot read site_url's default (expected site_url: !ENV [NORMREF_SITE_URL, \"…\"])")
    return m.group(1)


def write_notebooks(site_url: str, out: Path, root: Path = ROOT) -> list[str]:
    """notebooks/<lang>/NAME.ipynb under ``out`` for every source, installing from the wheel of the site at
    ``site_url``, and a README saying what the folder is; returns the paths written, relative to ``out``."""
    url = install.wheel_url(site_url, wheel_name(root))
    out = Path(out)
    written = []
    for lang, srcs in sources(root).items():
        for src in srcs:
            dest = out / notebook_path(lang, src)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(export(src, url), encoding="utf-8")
            written.append(notebook_path(lang, src))
    (out / "README.md").write_text(
        f"# The notebooks \"Open in Colab\" opens\n\n"
        f"Made by the Pages workflow (`make colab`) from `docs/<lang>/notebooks/*.py` for the site at\n"
        f"{site_url}; their first cell installs normref from {url}.\n"
        f"This branch is force-pushed on every deploy: edit the sources on the main branch, not these.\n",
        encoding="utf-8")
    return written + ["README.md"]


def is_local(site_url: str) -> bool:
    """An address only this machine can reach (127.0.0.1, localhost, ::1): never in a published notebook."""
    host = (urlsplit(site_url).hostname or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.")


def _git(root: Path, *args: str, env: dict | None = None) -> str:
    p = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise SiteError(f"git {' '.join(args)} failed: {(p.stderr or p.stdout).strip()}")
    return p.stdout.strip()


def publish(site_url: str, root: Path = ROOT, branch: str = COLAB_BRANCH, remote: str | None = "origin") -> str:
    """Commit the notebooks for ``site_url`` as the only commit of ``branch`` and force-push it to ``remote``
    (None: no push). The repository's work tree, index and current branch are left as they are: the commit is
    made from a folder of its own with a throwaway index. Returns the commit's id.

    A local address is refused: a published notebook that installs from 127.0.0.1 works for no one."""
    if is_local(site_url) or not re.match(r"https?://", site_url or ""):
        raise SiteError(f"the Colab notebooks must install from the published site, got site_url {site_url!r} "
                        "(NORMREF_SITE_URL; the Pages workflow sets it from its Pages configuration)")
    source = _git(root, "rev-parse", "--short", "HEAD")
    with tempfile.TemporaryDirectory() as tmp:
        files = Path(tmp) / "files"
        write_notebooks(site_url, files, root)
        env = dict(os.environ, GIT_INDEX_FILE=str(Path(tmp) / "index"))
        if not _git_identity(root):  # a CI runner has none configured
            env.update(GIT_AUTHOR_NAME=BOT[0], GIT_AUTHOR_EMAIL=BOT[1], GIT_COMMITTER_NAME=BOT[0],
                       GIT_COMMITTER_EMAIL=BOT[1])
        git_dir = _git(root, "rev-parse", "--absolute-git-dir")
        _git(files, "--git-dir", git_dir, "--work-tree", str(files), "add", "--all", ".", env=env)
        tree = _git(root, "write-tree", env=env)
        commit = _git(root, "commit-tree", tree, "-m", f"Colab notebooks for {site_url} (from {source})", env=env)
    _git(root, "update-ref", f"refs/heads/{branch}", commit)
    if remote:
        _git(root, "push", "--force", "--quiet", remote, f"refs/heads/{branch}:refs/heads/{branch}")
    return commit


def _git_identity(root: Path) -> bool:
    return all(subprocess.run(["git", "-C", str(root), "config", key], capture_output=True).returncode == 0
               for key in ("user.name", "user.email"))


# ------------------------------------------------------------------ failures


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def describe_failure(src_uri: str, source: str | Path, message: str) -> str:
    """One line for a notebook cell that failed while the site was built.

    ``message`` is nbclient's CellExecutionError text: it quotes the cell's
    source between dashed lines, then the traceback ("Cell In[N], line K").
    The cell is found in the jupytext source by its text, so the message names
    the code cell's number and the line of the .py file."""
    import jupytext

    text = _ANSI.sub("", message)
    m = re.search(r"-{10,}\n(.*?)\n-{10,}", text, re.S)
    failing = m.group(1) if m else None
    err = [ln for ln in text.strip().splitlines() if re.match(r"^\w*(Error|Exception|Exit|Interrupt)\b", ln)]
    last = err[-1].strip() if err else text.strip().splitlines()[-1] if text.strip() else "unknown error"
    line_in_cell = re.findall(r"line (\d+)", text.split(failing, 1)[-1] if failing else text)
    where = ""
    path = Path(source)
    if failing is not None and path.is_file():
        raw = path.read_text(encoding="utf-8")
        nb = jupytext.reads(raw, fmt="py:percent")
        starts = [i + 1 for i, ln in enumerate(raw.splitlines()) if ln.startswith("# %%")]
        code_no = 0
        for k, cell in enumerate(nb.cells):
            if cell.cell_type == "code":
                code_no += 1
            if cell.cell_type == "code" and cell.source.strip() == failing.strip():
                where = f", code cell {code_no}"
                if k < len(starts):
                    # The cell's text begins on the line after its "# %%" marker.
                    line = starts[k] + (int(line_in_cell[0]) if line_in_cell else 1)
                    where += f" (line {line} of {path.name})"
                break
    return f"notebook {src_uri}{where} failed while the site was built: {last}"


# ------------------------------------------------------------------ command line


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m normsite.colab",
                                description="The notebooks 'Open in Colab' opens, made from docs/<lang>/notebooks/*.py.")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--install-cells", action="store_true",
                      help="rewrite each source's first code cell as normsite.install makes it (make notebooks)")
    what.add_argument("--out", type=Path, metavar="DIR", help="write notebooks/<lang>/*.ipynb into DIR (to look at them)")
    what.add_argument("--publish", action="store_true",
                      help=f"commit them as the one commit of the branch {COLAB_BRANCH!r} and force-push it (make colab)")
    p.add_argument("--site-url", help="the site whose wheel the notebooks install "
                                      "(default: NORMREF_SITE_URL, else mkdocs.yml's site_url)")
    p.add_argument("--remote", default="origin", help="where --publish pushes (default origin; '' for nowhere)")
    args = p.parse_args(argv)
    try:
        if args.install_cells:
            changed = install.write_install_cells(ROOT)
            print("install cells: " + (", ".join(changed) if changed else "all current"))
            return 0
        site_url = args.site_url or default_site_url()
        if args.out:
            written = write_notebooks(site_url, args.out)
            print(f"wrote {len(written)} files for {site_url} into {args.out}")
            return 0
        commit = publish(site_url, remote=args.remote or None)
    except SiteError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"{COLAB_BRANCH} branch: {commit[:12]}, notebooks for {site_url}"
          + (f", pushed to {args.remote}" if args.remote else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
