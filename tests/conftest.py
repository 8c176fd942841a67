"""The test session: its own cache, markers that follow cost, and the shared fixtures.

Cache. Every session computes into a fresh temporary NORMREF_CACHE (set in
pytest_configure, before collection imports anything), removed at the end: the
tests neither depend on nor pollute the developer's .cache. So `make test` starts
cold, and the built site is made once per session and shared by every test that
only reads it. NORMREF_TEST_CACHE=DIR keeps a cache across sessions instead (your
choice, for repeated local runs of the slow tests; CI never sets it).

Markers follow the fixtures a test uses (its whole fixture closure), not hand-written
decorators:
  build    the built site: `site`, `site_build`, `served`, `built_cache` or `site_builder`
  browser  Chromium: `browser` (and `tab`, `clean_tab`)
  models   real model weights: `real_models`
A hand-written `build` marker on a test that uses none of those fixtures is a
collection error (a test of the site layer on a string needs no build), so the
fast tier (`make test-fast`, which deselects all three, `copy` and `command`) holds every test that
needs no build. `browser` and `models` may also be written by hand, for a test
that pays that cost another way (Chromium or a model run in a subprocess);
prefer the fixture where there is one.

A test that checks a result at the size a page shows it (an experiment's training runs, a
caption's measured fields, the Anki deck's values) asks for `built_cache`: the build has computed
the result into the session's cache, so the test reads it there instead of computing it a second
time, and it runs in `make test` beside the build rather than in the fast tier. The fast tier
keeps the tests of the same code on small inputs.

Helpers live in support.py; test files import from there, never from each other.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest

# torch on one thread in every test process (set before anything imports torch; a test that needs more threads
# sets them itself, as the benchmark's do): `make test` runs two workers on two cores, and a second thread per
# worker only spins on the tiny models the tests build. Measured on 2 cores: test_placement_blocks.py and
# test_dyt.py on two workers, 9.95 s with torch's default threads, 3.93 s with one.
os.environ.setdefault("OMP_NUM_THREADS", "1")

from support import CHROMIUM, Served, StaticServer, build_site, chromium, open_tab

# marker -> the fixtures that make a test pay for it
TIERS = {
    "build": {"site_build", "site_builder"},
    "browser": {"browser"},
    "models": {"real_models"},
}
# Markers only the fixtures may give (the others may be written by hand too; see above).
STRICT = {"build"}


# ---------------------------------------------------------------- the session's cache


def pytest_configure(config):
    keep = os.environ.get("NORMREF_TEST_CACHE")
    shared = os.environ.get(_SESSION_CACHE) if os.environ.get("PYTEST_XDIST_WORKER") else None
    if keep:
        path = Path(keep).resolve()
        path.mkdir(parents=True, exist_ok=True)
    elif shared:  # a pytest-xdist worker (make test-fast) computes into its controller's cache
        path = Path(shared)
    else:
        path = Path(tempfile.mkdtemp(prefix="normref-test-cache-"))
        config.stash[_TMP_CACHE] = path
        os.environ[_SESSION_CACHE] = str(path)
    os.environ["NORMREF_CACHE"] = str(path)
    if _distributed(config) and not os.environ.get("PYTEST_XDIST_WORKER"):
        # Whole files go to the workers in the order _for_workers gives them (not reordered by size).
        config.option.loadscopereorder = False
        # The controller of pytest-xdist workers (make test) serves the one session site for all of
        # them, from a folder the first worker that needs it builds into (site_build, below).
        folder = Path(tempfile.mkdtemp(prefix="normref-test-site-"))
        (folder / "site").mkdir()
        server = StaticServer(folder / "site").start()
        config.stash[_SHARED] = (folder, server)
        os.environ[_SHARED_SITE] = f"{server.root}|{server.base}"
    if not os.environ.get("PYTEST_XDIST_WORKER") and not os.environ.get("NORMREF_KERNEL_FORK"):
        _start_zygote(config)


def _start_zygote(config) -> None:
    """The snippets and notebooks the tests run are forked, as the build's prepare pass runs them, from one process
    that has imported torch and ipykernel (normsite.kernelfork; tests/test_kernelfork.py holds a fork's output to a
    fresh process's). Started by the controller, its socket named in the environment the workers inherit."""
    from normsite import kernelfork

    folder = tempfile.mkdtemp(prefix="normref-test-zygote-")
    if len(os.path.join(folder, "zygote").encode()) > 100:  # too long for a Unix socket: fresh processes, then
        shutil.rmtree(folder, ignore_errors=True)
        return
    proc, path = kernelfork.start(folder)
    config.stash[_ZYGOTE] = (proc, folder)
    os.environ[kernelfork.ENV] = path


def pytest_unconfigure(config):
    path = config.stash.get(_TMP_CACHE, None)
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)
    proc, folder = config.stash.get(_ZYGOTE, (None, None))
    if proc is not None:
        os.environ.pop("NORMREF_KERNEL_FORK", None)
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except Exception:
            proc.kill()
        shutil.rmtree(folder, ignore_errors=True)
    folder, server = config.stash.get(_SHARED, (None, None))
    if server is not None:
        server.close()
        shutil.rmtree(folder, ignore_errors=True)


def _distributed(config) -> bool:
    """Does this session run its tests on pytest-xdist workers (`-n 2`)?"""
    return bool(getattr(config.option, "numprocesses", None)) and getattr(config.option, "dist", "no") != "no"


_SESSION_CACHE = "NORMREF_TEST_SESSION_CACHE"
_ZYGOTE = pytest.StashKey[tuple]()
_SHARED_SITE = "NORMREF_TEST_SHARED_SITE"  # "FOLDER|URL": the controller's served folder, for its workers
_TMP_CACHE = pytest.StashKey[Path]()
_SHARED = pytest.StashKey[tuple]()


# ---------------------------------------------------------------- markers that follow cost


def tiers_of(fixturenames) -> set[str]:
    """The markers a test earns from the fixtures it uses (its closure)."""
    names = set(fixturenames)
    return {marker for marker, fixtures in TIERS.items() if names & fixtures}


@pytest.hookimpl(tryfirst=True)  # before -m deselects by these markers
def pytest_collection_modifyitems(config, items):
    wrong = []
    for item in items:
        earned = tiers_of(getattr(item, "fixturenames", ()))
        written = {m.name for m in item.iter_markers() if m.name in TIERS}
        for marker in sorted((written - earned) & STRICT):
            wrong.append(f"{item.nodeid}: marked {marker!r} but uses none of {sorted(TIERS[marker])}")
        for marker in sorted(earned - written):
            item.add_marker(marker)
    if wrong:
        raise pytest.UsageError(
            "the build marker follows the fixtures a test uses (tests/conftest.py); "
            "drop the marker or use the fixture:\n  " + "\n  ".join(wrong))
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items[:] = _for_workers(items)


def _builds_its_own(item) -> bool:
    """Does the test make a build of its own (site_builder asked for by the test or by a fixture of its file)?"""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    if "site_builder" in info.argnames:
        return True
    module = item.nodeid.split("::", 1)[0]
    return any(d.baseid == module and "site_builder" in d.argnames
               for defs in info.name2fixturedefs.values() for d in defs)


def _for_workers(items):
    """The order in which pytest-xdist workers (make test: `-n 2 --dist loadscope`) are handed
    whole test files (a file's module fixtures, such as the copy test's virtualenvs, are made once).

    First the files that make builds of their own (the cold build for reproducibility, the warm
    build, the sub-path and repository builds), each such test first in its file: while one worker
    builds the session's site, the other makes its own. Then the files with browser tests, the
    largest first; then the other files that read the site; last the cheap files, the fine grain
    that evens out the two workers' ends. A file's tests otherwise keep their order."""
    modules: dict[str, list] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::", 1)[0], []).append(item)

    def rank(module):
        its = modules[module]
        if any(_builds_its_own(i) for i in its):
            return (0, 0)
        browser = sum(1 for i in its if i.get_closest_marker("browser"))
        if browser:
            return (1, -browser)
        return (2, 0) if any(i.get_closest_marker("build") for i in its) else (3, 0)

    out = []
    for module in sorted(modules, key=rank):  # sorted() is stable: the collection's order within a rank
        its = modules[module]
        out += [i for i in its if _builds_its_own(i) and i.get_closest_marker("build")] + \
               [i for i in its if not (_builds_its_own(i) and i.get_closest_marker("build"))]
    return out


# ---------------------------------------------------------------- the built site


@pytest.fixture(scope="session")
def site_builder():
    """support.build_site, for a test that builds a site of its own (so it is marked `build`)."""
    return build_site


@pytest.fixture(scope="session")
def _site_server(tmp_path_factory):
    """The session site's server, bound before the build so the site is built for its address.
    On a pytest-xdist worker: the controller's, which serves one folder to every worker."""
    shared = os.environ.get(_SHARED_SITE) if os.environ.get("PYTEST_XDIST_WORKER") else None
    if shared:
        root, base = shared.split("|", 1)
        yield SimpleNamespace(root=Path(root), base=base, shared=True, start=lambda: None)
        return
    server = StaticServer(tmp_path_factory.mktemp("site"))
    server.shared = False
    yield server
    server.close()


@pytest.fixture(scope="session")
def site_url(_site_server) -> str:
    """The address the session's site is built for (a build meant to match it byte for byte uses it too)."""
    return _site_server.base


@pytest.fixture(scope="session")
def site_build(_site_server, site_builder):
    """(folder, build log) of the session's one built site, both languages, strict.
    Under pytest-xdist the first worker to ask builds it; the others wait and read its log."""
    if not _site_server.shared:
        proc = site_builder(_site_server.root, site_url=_site_server.base)
        return _site_server.root, proc.stderr
    import fcntl

    root = _site_server.root
    log, failed = root.with_name("build.log"), root.with_name("build.failed")
    with open(root.with_name("build.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if failed.exists():
            raise AssertionError(failed.read_text(encoding="utf-8"))
        if not log.exists():
            try:
                proc = site_builder(root, site_url=_site_server.base)
            except AssertionError as e:
                failed.write_text(str(e), encoding="utf-8")
                raise
            log.write_text(proc.stderr, encoding="utf-8")
    return root, log.read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def site(site_build) -> Path:
    """Folder of the built site: zh pages at site/, en pages at site/en/."""
    return site_build[0]


@pytest.fixture(scope="session")
def built_cache(site_build) -> Path:
    """The session's cache (NORMREF_CACHE) once the site is built: it holds every result a page, a figure's
    caption or the Anki deck shows, so a test that checks one of them reads it instead of computing it again
    (the build is in its fixture closure: the test is marked `build`)."""
    return Path(os.environ["NORMREF_CACHE"])


@pytest.fixture(scope="session")
def served(site, _site_server) -> Served:
    """The session's site served on 127.0.0.1 at the address it was built for (instant navigation works)."""
    _site_server.start()
    return Served(root=site, base=_site_server.base)


# ---------------------------------------------------------------- the browser


# Module scope, not session: Playwright's sync API runs one instance per thread at a
# time, and a module may start its own (tools/screenshot.py can).
@pytest.fixture(scope="module")
def browser():
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing: run `make browser-deps` (apt-get install chromium)")
    with chromium() as b:
        yield b


@pytest.fixture(scope="module")
def tab(browser, served):
    """One tab per module on the served site; every request to another host is recorded and aborted."""
    with open_tab(browser, served) as t:
        yield t


@pytest.fixture
def clean_tab(tab):
    """The module's tab with its records cleared and light mode, checked for other hosts afterwards."""
    tab.set_scheme("default")
    tab.reset()
    yield tab
    assert not tab.foreign, f"requests to other hosts: {tab.foreign}"


# ---------------------------------------------------------------- real models


@pytest.fixture(scope="session")
def real_models():
    """normref.models.load (a model loads once per process); a test using it is marked `models`."""
    from normref.models import load

    return load

