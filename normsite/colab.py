"""The repository links and the notebooks a reader opens elsewhere (Colab, their own Jupyter).

- **Repository links.** When the site is built for a GitHub repository (the
  Pages workflow passes ``NORMREF_REPO_URL`` and ``NORMREF_REPO_BRANCH``),
  each page gets Material's repository link and "edit this page" button: the
  edit URI points into ``docs/<lang>/``, the folder each language is built
  from. Without those variables (a local ``make build``) there are none.
- **Committed notebooks.** Colab opens notebooks from a GitHub repository, so
  every jupytext source ``docs/<lang>/notebooks/NAME.py`` has an unexecuted
  twin ``notebooks/<lang>/NAME.ipynb`` at the repository root, made by
  :func:`export` (``make notebooks``). Its first cell installs normref from the
  wheel of the site it names; the notebook's metadata records that address, so
  :func:`stale` can regenerate each one and compare bytes. A notebook page
  links to Colab only when its committed twin is current and names the very
  site being built (:func:`check_for_site`): a Colab link that installs from
  another address would be a broken link.
- **Notebook failures.** :func:`describe_failure` turns nbclient's
  CellExecutionError into one line naming the source file, the cell and the
  line of the .py file.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from . import LANGS, SiteError
from . import install
from .notebooks import ipynb_text

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = "notebooks"  # notebooks/<lang>/NAME.ipynb at the repository root
COLAB = "https://colab.research.google.com/github"
META_KEY = "normref"  # the metadata key under which ipynb_text records the wheel's address

__all__ = ["Repo", "repo_from", "sources", "committed_path", "export", "write_committed", "stale",
           "check_for_site", "describe_failure", "checked_render", "default_site_url"]


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
        """Colab's address for a notebook in this repository; None off github.com (Colab reads only there)."""
        if self.host != "github.com":
            return None
        return f"{COLAB}/{self.name}/blob/{self.branch}/{path}"


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


# ------------------------------------------------------------------ committed notebooks


def sources(root: Path = ROOT) -> dict[str, list[Path]]:
    """{lang: [docs/<lang>/notebooks/*.py]}: the jupytext sources."""
    return {lang: sorted((root / "docs" / lang / "notebooks").glob("*.py")) for lang in LANGS}


def committed_path(lang: str, source: Path) -> str:
    """notebooks/<lang>/NAME.ipynb, relative to the repository root."""
    return f"{COMMITTED}/{lang}/{source.stem}.ipynb"


def export(source: str | Path, wheel_url: str) -> str:
    """The committed copy of a notebook: the site's own download (normsite.notebooks.ipynb_text) for ``wheel_url``."""
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


def write_committed(site_url: str, root: Path = ROOT) -> list[str]:
    """(Re)write notebooks/<lang>/*.ipynb for the site at ``site_url``; remove those without a source.

    Returns the paths written or removed, relative to ``root``."""
    url = install.wheel_url(site_url)
    changed = []
    for lang, srcs in sources(root).items():
        folder = root / COMMITTED / lang
        folder.mkdir(parents=True, exist_ok=True)
        want = {committed_path(lang, s): s for s in srcs}
        for rel, src in want.items():
            text = export(src, url)
            dest = root / rel
            if not dest.is_file() or dest.read_text(encoding="utf-8") != text:
                dest.write_text(text, encoding="utf-8")
                changed.append(rel)
        for old in sorted(folder.glob("*.ipynb")):
            rel = old.relative_to(root).as_posix()
            if rel not in want:
                old.unlink()
                changed.append(rel)
    return changed


def _recorded_url(path: Path) -> str | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))["metadata"][META_KEY]["wheel_url"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def stale(root: Path = ROOT) -> list[str]:
    """What is wrong with the committed notebooks, one line each (empty when all are current).

    Each committed notebook is regenerated for the address it records and
    compared byte for byte, so an edit to a jupytext source that was not
    followed by ``make notebooks`` shows up here."""
    problems = []
    for lang, srcs in sources(root).items():
        want = {committed_path(lang, s): s for s in srcs}
        for rel, src in want.items():
            path = root / rel
            if not path.is_file():
                problems.append(f"{rel}: missing (made from {src.relative_to(root)})")
                continue
            url = _recorded_url(path)
            if url is None:
                problems.append(f"{rel}: no {META_KEY}.wheel_url in its metadata; not made by `make notebooks`")
            elif path.read_text(encoding="utf-8") != export(src, url):
                problems.append(f"{rel}: stale, differs from {src.relative_to(root)}")
        folder = root / COMMITTED / lang
        for extra in sorted(folder.glob("*.ipynb")) if folder.is_dir() else []:
            if extra.relative_to(root).as_posix() not in want:
                problems.append(f"{extra.relative_to(root).as_posix()}: has no source in docs/{lang}/notebooks/")
    return problems


def check_for_site(site_url: str, root: Path = ROOT) -> None:
    """The committed notebooks are current and install from this site; else SiteError saying what to run.

    Called when the build offers "Open in Colab": Colab opens the committed
    copy, so it must be the notebook the page shows, pointing at this site's wheel."""
    problems = stale(root)
    url = install.wheel_url(site_url)
    for lang, srcs in sources(root).items():
        for src in srcs:
            rel = committed_path(lang, src)
            got = _recorded_url(root / rel)
            if got is not None and got != url:
                problems.append(f"{rel}: installs from {got}, but this site's wheel is {url}")
    if problems:
        raise SiteError("the committed notebooks that 'Open in Colab' opens are not this site's: "
                        + "; ".join(problems)
                        + f". Run `NORMREF_SITE_URL={site_url} make notebooks` and commit notebooks/.")


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


def checked_render(render, src_uri: str, source: str | Path):
    """``render`` (mkdocs-jupyter's executing renderer of a notebook page), raising SiteError with
    :func:`describe_failure`'s line when a cell fails (nbclient's CellExecutionError), instead of a
    bare traceback. Other errors pass through."""

    def checked(*args, **kwargs):
        try:
            return render(*args, **kwargs)
        except Exception as e:
            if type(e).__name__ != "CellExecutionError":
                raise
            raise SiteError(describe_failure(src_uri, source, str(e))) from e

    return checked


# ------------------------------------------------------------------ command line


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m normsite.colab",
                                description="Write notebooks/<lang>/*.ipynb from docs/<lang>/notebooks/*.py "
                                            "(the copies that 'Open in Colab' opens).")
    p.add_argument("--site-url", help="the site whose wheel the notebooks install "
                                      "(default: NORMREF_SITE_URL, else mkdocs.yml's site_url)")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if any committed notebook is stale")
    args = p.parse_args(argv)
    try:
        if args.check:
            problems = stale()
            print("\n".join(problems) if problems else "notebooks/ is current")
            return 1 if problems else 0
        site_url = args.site_url or default_site_url()
        changed = install.write_install_cells(ROOT)  # each source's first cell, as the generator makes it
        changed += write_committed(site_url)
    except SiteError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"notebooks for {site_url}: " + (", ".join(changed) if changed else "all current"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
