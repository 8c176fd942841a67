"""The reader's wheel: normref, packaged from the sources the site is built from.

Every page tells the reader to ``pip install`` normref from the site itself
(``<site>/wheels/normref-<version>-py3-none-any.whl``), so the code a reader
runs is the code that printed the page's outputs. This module builds that
wheel and checks that a built site carries it.

- **Offline.** setuptools' PEP 517 backend is called directly, in a
  subprocess, without build isolation (which would download setuptools); the
  project pins setuptools in requirements.txt.
- **Reproducible.** The sources are copied into a scratch folder with fixed
  permissions, and the backend runs with ``SOURCE_DATE_EPOCH`` set (the
  build sets it from the commit's time), which setuptools' wheel writer uses
  for every zip entry. Two builds of one commit give the same bytes.
- **Cached by content.** The key is a SHA-256 over every input file (path and
  bytes), the setuptools version and the epoch; a warm build copies the
  cached wheel and runs nothing.

Only ``normref`` goes in: ``normsite`` (this site layer), the docs and the
tests are not part of what readers install.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

from normref import cache

from . import SiteError

ROOT = Path(__file__).resolve().parent.parent
# What the wheel is built from: the project file and the package, whose README.md is the wheel's long
# description (pyproject's `readme`: a short text for readers, not the repository's README).
# Everything else in the repository stays out.
README = "normref/README.md"
TOP_FILES = ("pyproject.toml",)
PACKAGE = "normref"
# Where the wheel lives in a built site, relative to the (Chinese) site root.
SITE_FOLDER = "wheels"
# The wheel's zip timestamps when neither SOURCE_DATE_EPOCH nor a git commit
# is available: zip cannot store dates before 1980, and any fixed date keeps
# the bytes stable.
FALLBACK_EPOCH = 315532800  # 1980-01-01T00:00:00Z
BUILD_TIMEOUT_S = 300

__all__ = ["Wheel", "project", "wheel_name", "source_files", "epoch", "build", "site_path", "check_published"]


@dataclass(frozen=True)
class Wheel:
    name: str  # normref-<version>-py3-none-any.whl
    data: bytes
    sha256: str
    cached: bool  # True when a warm build found it in the cache


def project(root: Path = ROOT) -> dict:
    """The [project] table of pyproject.toml."""
    with open(root / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]


def wheel_name(root: Path = ROOT) -> str:
    """normref-<version>-py3-none-any.whl, from pyproject.toml (a pure-Python wheel)."""
    p = project(root)
    # PEP 427: the distribution name with runs of -_. normalised to "_".
    dist = re.sub(r"[-_.]+", "_", p["name"]).lower()
    return f"{dist}-{p['version']}-py3-none-any.whl"


def source_files(root: Path = ROOT) -> list[Path]:
    """The files the wheel is built from, relative to ``root``, sorted."""
    out = [Path(f) for f in TOP_FILES]
    for path in sorted((root / PACKAGE).rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and "__pycache__" not in rel.parts and path.suffix not in (".pyc", ".pyo"):
            out.append(rel)
    missing = [str(f) for f in out if not (root / f).is_file()]
    if missing:
        raise SiteError(f"cannot package normref: missing {', '.join(missing)} in {root}")
    return out


def epoch(root: Path = ROOT) -> int:
    """SOURCE_DATE_EPOCH if set, else the time of the commit being built, else 1980-01-01."""
    given = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if given:
        if not given.isdigit():
            raise SiteError(f"SOURCE_DATE_EPOCH must be a whole number of seconds, got {given!r}")
        return max(int(given), FALLBACK_EPOCH)
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=root, capture_output=True, text=True,
                             timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return FALLBACK_EPOCH
    text = out.stdout.strip()
    return max(int(text), FALLBACK_EPOCH) if out.returncode == 0 and text.isdigit() else FALLBACK_EPOCH


def _setuptools_version() -> str:
    try:
        return importlib.metadata.version("setuptools")
    except importlib.metadata.PackageNotFoundError as e:
        raise SiteError("cannot package normref: setuptools is not installed (it is pinned in "
                        "requirements.txt; run `make setup`)") from e


def _step(root: Path, files: list[Path], when: int, name: str) -> cache.Step:
    """The wheel's cache step (normref.cache.step_of): every packaged file by path, the date it carries,
    the Python version and setuptools'."""
    _setuptools_version()  # a clear error when it is missing
    return cache.step_of("wheels", name, suffix=".whl", libs=("setuptools",),
                         inputs={**{rel.as_posix(): (root / rel).read_bytes() for rel in files},
                                 "epoch": str(when), "python": str(sys.version_info[:2])})


# The backend is called in a fresh interpreter: setuptools keeps global state
# between builds, and the site build must not import it.
# A fixed umask: the dist-info files it writes get their permissions from it.
_BACKEND = (
    "import os, sys\n"
    "os.umask(0o022)\n"
    "from setuptools import build_meta\n"
    "print(build_meta.build_wheel(sys.argv[1]))\n"
)


def _build_uncached(root: Path, files: list[Path], when: int, name: str) -> bytes:
    with tempfile.TemporaryDirectory(prefix="normref-wheel-") as tmp:
        src, out = Path(tmp) / "src", Path(tmp) / "dist"
        for rel in files:
            dest = src / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / rel, dest)
            os.chmod(dest, 0o644)  # the zip records permissions; a checkout's umask must not change the bytes
        for d in [src, *(p for p in src.rglob("*") if p.is_dir())]:
            os.chmod(d, 0o755)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_"))}
        env.update(SOURCE_DATE_EPOCH=str(when), PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1")
        try:
            proc = subprocess.run([sys.executable, "-c", _BACKEND, str(out)], cwd=src, env=env,
                                  capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
        except subprocess.TimeoutExpired as e:
            raise SiteError(f"packaging normref took longer than {BUILD_TIMEOUT_S} s") from e
        if proc.returncode != 0:
            raise SiteError(f"packaging normref failed (setuptools, no build isolation):\n{proc.stderr[-3000:]}")
        built = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
        if built != name:
            raise SiteError(f"packaging normref made {built!r}, expected {name!r} (pyproject.toml's name and version)")
        data = (out / built).read_bytes()
    _validate(data, name)
    return data


def _validate(data: bytes, name: str) -> None:
    """The wheel holds normref and its dist-info, and nothing of the site layer."""
    import io

    dist = name.split("-")[0] + "-" + name.split("-")[1] + ".dist-info/"
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        names = z.namelist()
    stray = [n for n in names if not (n.startswith(PACKAGE + "/") or n.startswith(dist))]
    if stray:
        raise SiteError(f"the normref wheel holds files outside normref/: {', '.join(stray[:5])}")
    for need in (f"{PACKAGE}/__init__.py", dist + "METADATA", dist + "RECORD"):
        if need not in names:
            raise SiteError(f"the normref wheel lacks {need}")


def build(root: Path = ROOT) -> Wheel:
    """The wheel for the sources under ``root``: from the cache when its inputs are unchanged."""
    root = Path(root)
    files = source_files(root)
    name = wheel_name(root)
    when = epoch(root)
    blob, cached = cache.step(_step(root, files, when, name), lambda: _build_uncached(root, files, when, name))
    return Wheel(name=name, data=blob, sha256=hashlib.sha256(blob).hexdigest(), cached=cached)


def site_path(name: str) -> str:
    """The wheel's path in the site, relative to the Chinese (root) site: wheels/NAME."""
    return f"{SITE_FOLDER}/{name}"


def check_published(site_root: str | Path, name: str) -> Path:
    """The wheel in a built site; SiteError when it is missing or not the normref wheel.

    ``site_root`` is the folder of the Chinese build (the English site lives in
    its en/ and links to the same wheel)."""
    path = Path(site_root) / site_path(name)
    if not path.is_file():
        raise SiteError(f"the built site has no {site_path(name)}: the pages' install lines point at it. "
                        "Build the Chinese site first (make build), which packages normref")
    try:
        _validate(path.read_bytes(), name)
    except zipfile.BadZipFile as e:
        raise SiteError(f"{path} is not a wheel: {e}") from e
    return path
