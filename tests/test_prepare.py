"""The prepare pass (normsite.prepare): the one process of a build that runs normref.

Fast: it expands each directive of the pages into a manifest, keeps a bad one as its page's error, and
the build only substitutes. Build tier: under a running `mkdocs serve`, an edit to a value module shows
on the served pages (both languages) after the rebuild, with no restart."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from normsite import SiteError, directives, prepare
from support import LANGS, ROOT

PAGE = "Take $x$ = [[value: worked.x]] and [[value: worked.rms]].\n\n[[table: worked.table]]\n"


def _docs(tmp_path: Path, pages: dict[str, str]) -> Path:
    docs = tmp_path / "docs" / "en"
    for name, text in pages.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(text, encoding="utf-8")
    return docs


def test_prepare_expands_each_directive_and_the_build_only_substitutes(tmp_path):
    from normref import values

    table = next(iter(values.table_names()))
    page = PAGE.replace("worked.table", table)
    docs = _docs(tmp_path, {"a.md": page, "sub/b.md": "No directive here.\n"})
    manifest = prepare.prepare({"en": docs}, generated=False)
    pages = manifest["langs"]["en"]["pages"]
    assert set(pages) == {"a.md"}, "a page without directives needs no entry"
    assert sum(manifest["counts"]["value"]) == 2 and sum(manifest["counts"]["table"]) == 1
    out = directives.substitute(page, pages["a.md"], "a.md")
    assert out == directives.expand(page, "en", "a.md", generated=False)  # what the in-process expansion gives
    assert values.get("worked.x", "en") in out and "[[" not in out
    assert manifest["summary"].startswith("normref prepare [en]: computed ")


def test_a_bad_directive_fails_its_page_naming_it_and_only_that_page(tmp_path):
    docs = _docs(tmp_path, {"good.md": "[[value: worked.x]]\n", "bad.md": "x [[value: nope]] y\n"})
    pages = prepare.prepare({"en": docs}, generated=False)["langs"]["en"]["pages"]
    assert "[[" not in directives.substitute("[[value: worked.x]]\n", pages["good.md"], "good.md")
    with pytest.raises(SiteError, match=r"bad\.md: bad \[\[value: nope\]\]: .*unknown value 'nope'"):
        directives.substitute("x [[value: nope]] y\n", pages["bad.md"], "bad.md")


def test_a_directive_prepare_did_not_see_fails_naming_the_page():
    with pytest.raises(SiteError, match=r"new\.md: \[\[value: worked\.x\]\] was not prepared"):
        directives.substitute("[[value: worked.x]]", {}, "new.md")
    with pytest.raises(SiteError, match=r"takes no name"):
        directives.expand_one("quiz", "x", "en", "q.md")


def test_the_fingerprint_follows_the_pages_and_the_code(tmp_path):
    root = tmp_path / "repo"
    for name in prepare.INPUTS:
        (root / name).mkdir(parents=True)
    (root / "normref" / "m.py").write_text("X = 1\n", encoding="utf-8")
    docs = _docs(tmp_path, {"a.md": "[[value: worked.x]]\n"})
    first = prepare.fingerprint({"en": docs}, root=root)
    assert prepare.fingerprint({"en": docs}, root=root) == first
    (root / "normref" / "m.py").write_text("X = 2\n", encoding="utf-8")
    second = prepare.fingerprint({"en": docs}, root=root)
    (docs / "a.md").write_text("[[value: worked.rms]]\n", encoding="utf-8")
    third = prepare.fingerprint({"en": docs}, root=root)
    (docs / "notebooks").mkdir()
    (docs / "notebooks" / "n.py").write_text("print(1)\n", encoding="utf-8")  # a notebook page's source
    fourth = prepare.fingerprint({"en": docs}, root=root)
    (docs / "notebooks" / "n.py").write_text("print(2)\n", encoding="utf-8")
    fifth = prepare.fingerprint({"en": docs}, root=root)
    assert len({first, second, third, fourth, fifth}) == 5
    assert prepare.fingerprint({"en": docs}, generated=False, root=root) != fifth


def test_the_fingerprint_reads_of_the_tests_only_which_tests_the_ledgers_files_define(tmp_path):
    """The ledger checks that each test claims.yml names is defined: a comment or a test's body changes
    nothing the pass reads, a new test in a named file does, and a file the ledger does not name never."""
    root = tmp_path / "repo"
    for name in prepare.INPUTS:
        (root / name).mkdir(parents=True)
    (root / "normsite" / "content").mkdir()
    (root / "normsite" / "content" / "claims.yml").write_text("test: tests/test_x.py::test_a\n", encoding="utf-8")
    (root / "tests").mkdir()
    named, other = root / "tests" / "test_x.py", root / "tests" / "test_y.py"
    named.write_text("def test_a():\n    assert 1\n", encoding="utf-8")
    other.write_text("def test_c():\n    assert 1\n", encoding="utf-8")
    docs = _docs(tmp_path, {"a.md": "No directive.\n"})
    fp = lambda: prepare.fingerprint({"en": docs}, root=root)  # noqa: E731
    first = fp()
    named.write_text("# a comment\ndef test_a():\n    assert 2\n", encoding="utf-8")
    other.write_text("def test_d():\n    assert 1\n", encoding="utf-8")
    assert fp() == first
    named.write_text("def test_a():\n    assert 1\n\n\ndef test_b():\n    assert 1\n", encoding="utf-8")
    assert fp() != first


def test_two_copies_of_the_tree_have_the_same_fingerprint(tmp_path):
    """No path of the checkout is in it: a copy elsewhere reuses the manifest (the cache folder is one)."""
    from normsite import plan

    fps = []
    for where in ("a", "b/deeper"):
        copy = plan._copy(ROOT, tmp_path / where)
        fps.append(prepare.fingerprint({lang: copy / "docs" / lang for lang in LANGS}, root=copy))
    assert fps[0] == fps[1] == prepare.fingerprint({lang: ROOT / "docs" / lang for lang in LANGS})


def test_the_fingerprint_ignores_prose_and_follows_what_the_pass_reads_of_a_page(tmp_path):
    """A page counts by its directives, anchors and H1 (prepare.page_reads): a prose edit keeps the
    fingerprint, so a serve rebuild reuses the manifest; an edit to any of those three changes it."""
    page = "# Title { #top }\n\nSome prose.\n\n## Part { #part }\n\nTake [[value: worked.x]].\n"
    docs = _docs(tmp_path, {"a.md": page})
    fp = lambda: prepare.fingerprint({"en": docs})  # noqa: E731
    first = fp()
    (docs / "a.md").write_text(page.replace("Some prose.", "Other prose, longer."), encoding="utf-8")
    assert fp() == first
    seen = {first}
    for old, new in [("worked.x", "worked.rms"), ("{ #part }", "{ #piece }"), ("# Title", "# Another title"),
                     ("## Part", "## Piece")]:
        page = page.replace(old, new)
        (docs / "a.md").write_text(page, encoding="utf-8")
        assert fp() not in seen, f"{old} -> {new} left the fingerprint unchanged"
        seen.add(fp())
    zh = tmp_path / "docs" / "zh"
    zh.mkdir()
    (zh / "a.md").write_text("第一行\n[[value: worked.x]]\n", encoding="utf-8")
    both = prepare.fingerprint({"zh": zh})
    (zh / "a.md").write_text("第一行改了\n[[value: worked.x]]\n", encoding="utf-8")
    assert prepare.fingerprint({"zh": zh}) == both


def test_the_cli_writes_the_manifest_and_prints_its_counts(tmp_path):
    docs = _docs(tmp_path, {"a.md": "[[value: worked.x]]\n"})
    out = tmp_path / "m.json"
    p = subprocess.run([sys.executable, "-m", "normsite.prepare", "--docs", f"en={docs}", "--no-generated",
                        "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "normref prepare [en]: computed " in p.stdout and f"manifest: {out}" in p.stdout
    assert out.is_file()
    bad = subprocess.run([sys.executable, "-m", "normsite.prepare", "--docs", "fr=nowhere"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2 and "--docs must be LANG=DIR" in bad.stderr


def test_a_build_reuses_the_manifest_until_an_input_changes(tmp_path):
    """obtain(), as every build calls it: a fresh pass when there is no manifest for these inputs, the written one
    while nothing the pass reads changes (a prose edit included), a fresh pass again after a directive edit, and
    when a file the manifest names has left the cache."""
    import json

    docs = _docs(tmp_path, {"a.md": "# A { #a }\n\nProse. [[value: worked.x]]\n"})
    first = prepare.obtain({"en": docs}, generated=False)
    assert first["ran"] and first["log"].startswith("normref prepare [en]: computed ")
    again = prepare.obtain({"en": docs}, generated=False)
    assert not again["ran"] and "inputs unchanged" in again["log"] and again["name"] in again["log"]
    assert again["langs"] == first["langs"]
    (docs / "a.md").write_text("# A { #a }\n\nOther prose. [[value: worked.x]]\n", encoding="utf-8")
    prose = prepare.obtain({"en": docs}, generated=False)
    assert not prose["ran"] and "inputs unchanged" in prose["log"]
    assert set(prose["langs"]["en"]["pages"]["a.md"]) == {"[[value: worked.x]]"}
    (docs / "a.md").write_text("# A { #a }\n\nOther prose. [[value: worked.rms]]\n", encoding="utf-8")
    edited = prepare.obtain({"en": docs}, generated=False)
    assert edited["ran"] and set(edited["langs"]["en"]["pages"]["a.md"]) == {"[[value: worked.rms]]"}
    path = prepare.manifest_path(prepare.fingerprint({"en": docs}, generated=False))
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["langs"]["en"]["files"]["figures/gone.svg"] = str(tmp_path / "gone.svg")  # cleared from the cache
    path.write_text(json.dumps(manifest), encoding="utf-8")
    assert prepare.obtain({"en": docs}, generated=False)["ran"]


def test_sitebuilds_pass_is_reported_by_the_chinese_build_and_other_inputs_fail(tmp_path, monkeypatch):
    """Under normsite.sitebuild (which runs the pass before both builds): the build told the pass ran for it reports
    the pass's counts as its own; a build whose inputs make another manifest than the one sitebuild prepared
    fails, naming both, instead of running a second pass beside the other build."""
    docs = _docs(tmp_path, {"a.md": "[[value: worked.x]]\n"})
    name = prepare.obtain({"en": docs}, generated=False)["name"]
    monkeypatch.setenv(prepare.PASS, name)
    assert not prepare.obtain({"en": docs}, generated=False)["ran"]
    monkeypatch.setenv(prepare.PASS_RAN, name)
    told = prepare.obtain({"en": docs}, generated=False)
    assert told["ran"] and told["log"].startswith("normref prepare [en]: computed ")
    monkeypatch.setenv(prepare.PASS, "0" * 32 + ".json")
    with pytest.raises(SiteError, match=r"sitebuild prepared 0{32}\.json, but this build's inputs make " + name):
        prepare.obtain({"en": docs}, generated=False)


def test_the_side_by_side_build_stops_the_other_build_and_names_the_failing_config(tmp_path, monkeypatch):
    """normsite.sitebuild: when the Chinese build fails (here, its config is missing), the English build is
    stopped at once, and the error names the config. (The pass before them is left out: its own tests are above.)"""
    from normsite import sitebuild

    monkeypatch.setattr(sitebuild, "CONFIGS", {"zh": "no-such-mkdocs.yml", "en": "mkdocs.en.yml"})
    monkeypatch.setattr(sitebuild, "_prepare", lambda env: {"zh": {}, "en": {}})
    t0 = time.monotonic()
    with pytest.raises(SiteError, match=r"mkdocs build -f no-such-mkdocs\.yml failed"):
        sitebuild.build(tmp_path / "site")
    assert time.monotonic() - t0 < 60
    assert not list(tmp_path.glob(".site-en-*")), "the English build's folder was left behind"


def test_a_failing_pass_fails_the_build_with_its_message(tmp_path):
    docs = _docs(tmp_path, {"a.md": "[[figure: nope]]\n"})
    with pytest.raises(SiteError, match=r"(?s)normsite.prepare failed.*unknown figure 'nope' referenced in a\.md"):
        prepare.obtain({"en": docs}, generated=True)


def test_the_site_layer_imports_nothing_heavy_and_the_check_would_see_it():
    """What the build's MkDocs process imports of normsite pulls in no torch, matplotlib or normref registry;
    the log line's check (prepare.heavy_modules) names one as soon as it is imported."""
    code = ("import json, sys\nsys.path.insert(0, 'hooks')\nimport normref_site\nfrom normsite import build, prepare\n"
            "before = prepare.heavy_modules()\nfrom normref import values\n"
            "print(json.dumps([before, prepare.heavy_modules()]))\n")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    before, after = __import__("json").loads(p.stdout.splitlines()[-1])
    assert before == [] and "normref.values" in after


def test_the_sessions_build_ran_prepare_once_and_imported_nothing_heavy(site_build):
    log = site_build[1]
    # normsite.sitebuild runs the pass once, before both builds; the zh build reports it, en reuses its manifest
    # (or both reuse one a past pass wrote, with NORMREF_TEST_CACHE).
    ran = log.count("normref prepare [zh, en]: computed ")
    assert ran <= 1 and log.count("normref prepare: inputs unchanged") == 2 - ran, log[-3000:]
    for lang in LANGS:
        assert re.search(rf"normref \[{lang}\]: .*; heavy modules imported: none", log), log[-3000:]


# ------------------------------------------------------------------ make serve sees a normref edit

# What the serve test copies: what a build reads (tests/: the ledger names tests in them).
TREE = ("docs", "normref", "normsite", "hooks", "overrides", "snippets", "tests", "mkdocs.yml", "mkdocs.en.yml",
        "pyproject.toml", "README.md", "docs-notes", "requirements.txt", "requirements-models.txt", "LICENSE")
EDIT = ('"worked.mean_sq": lambda: fmt(float(np.mean(WORKED_X**2)), 1),', '"worked.mean_sq": lambda: "31415926",')


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.read().decode("utf-8")
    except OSError:
        return None


def _wait(url: str, ok, timeout: float, proc: subprocess.Popen, log: Path) -> str:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise AssertionError(f"mkdocs serve exited ({proc.returncode}):\n{log.read_text()[-4000:]}")
        text = _get(url)
        if text is not None and ok(text):
            return text
        time.sleep(2)
    raise AssertionError(f"{url}: not as expected after {timeout:.0f} s; serve log:\n{log.read_text()[-4000:]}")


def test_serve_shows_a_value_module_edit_without_a_restart(tmp_path, site_build):
    """site_build: the session's build warms the cache, so the copy's first build only reads it."""
    tree = tmp_path / "repo"
    for name in TREE:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, tree / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif src.is_file():
            shutil.copy2(src, tree / name)
    module = tree / "normref" / "values" / "basics.py"
    assert EDIT[0] in module.read_text(encoding="utf-8"), "the value this test edits has moved"
    port = _free_port()
    log = tmp_path / "serve.log"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", NORMREF_SITE_URL=f"http://127.0.0.1:{port}/")
    # The `mkdocs` console script, as MkDocs' own docs type it: unlike `python -m mkdocs` (make serve), it puts
    # no folder of the tree on sys.path, so the hook must put the root back before each rebuild imports normsite.
    mkdocs = Path(sys.executable).with_name("mkdocs")
    with log.open("w") as out:
        proc = subprocess.Popen([str(mkdocs), "serve", "-f", "mkdocs.yml", "-a", f"127.0.0.1:{port}"],
                                cwd=tree, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        zh, en = f"http://127.0.0.1:{port}/", f"http://127.0.0.1:{port}/en/"
        before = _wait(en, lambda t: "with no gain yet" in t, 900, proc, log)
        _wait(zh, lambda t: "<html" in t, 60, proc, log)
        assert "31415926" not in before
        module.write_text(module.read_text(encoding="utf-8").replace(*EDIT), encoding="utf-8")
        _wait(zh, lambda t: "31415926" in t, 900, proc, log)
        _wait(en, lambda t: "31415926" in t, 300, proc, log)
        served = log.read_text()
        assert served.count("normref prepare [zh, en]: computed") >= 2, "a code edit runs the prepare pass"
        assert "heavy modules imported: none" in served, served[-3000:]
        # A prose edit is served too, from a rebuild that reuses the pass's manifest (nothing the pass reads changed).
        page = tree / "docs" / "zh" / "index.md"
        page.write_text(page.read_text(encoding="utf-8") + "\n\nprose-edit-27182818\n", encoding="utf-8")
        _wait(zh, lambda t: "prose-edit-27182818" in t, 300, proc, log)
        again = log.read_text()[len(served):]
        assert "inputs unchanged" in again and "normref prepare [zh, en]: computed" not in again, again[-3000:]
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_the_pool_expands_the_missing_values_and_the_counts_say_so(tmp_path, monkeypatch):
    """A cold pass hands the value and table directives to the pool (normsite.directives.expand_task) beside the
    figures: the counts say they were computed (not found cached), and the expansions equal the in-process ones;
    a warm pass hands the pool nothing."""
    from normref import values

    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / "cache"))
    page = PAGE.replace("worked.table", next(iter(values.table_names())))
    docs = _docs(tmp_path, {"a.md": page, "b.md": "Again [[value: worked.x]].\n"})
    cold = prepare.prepare({"en": docs}, generated=False)
    assert cold["counts"]["table"] == [1, 0], cold["counts"]
    assert "workers" in cold["summary"], "the values were not expanded on the pool"
    assert cold["counts"]["value"] == [2, 0]  # two distinct values on the two pages, each asked once per language
    assert any(w.startswith("directives/value:worked.x[en]: new") for w in cold["why"])
    warm = prepare.prepare({"en": docs}, generated=False)
    assert warm["counts"]["value"] == [0, 2] and warm["counts"]["table"] == [0, 1] and warm["why"] == []
    assert warm["langs"]["en"]["pages"] == cold["langs"]["en"]["pages"]
    assert "workers" not in warm["summary"], "a warm pass started the pool"
    # A pool of one (one task, NORMREF_WORKERS=1) runs the task in this process: counted once all the same.
    monkeypatch.setenv("NORMREF_WORKERS", "1")
    (docs / "c.md").write_text("[[value: worked.y]]\n", encoding="utf-8")
    one = prepare.prepare({"en": docs}, generated=False)
    assert one["counts"]["value"] == [1, 2], one["counts"]


def test_the_english_site_under_serve_is_linked_into_the_served_folder_and_rebuilt_only_on_change(tmp_path, monkeypatch):
    """normsite.serve.EnglishSite: after each Chinese rebuild (which empties the served folder) the English
    build's files appear under en/, hard-linked, not copied; the English build runs again only when its inputs
    change, and a rebuild (new files) leaves a file already served as it was."""
    from normsite import serve

    builds = []

    def fake_build(folder: Path):
        for f in folder.iterdir():  # MkDocs empties its site folder first
            f.unlink()
        (folder / "index.html").write_text(f"english {len(builds)}", encoding="utf-8")
        builds.append(folder)
        return subprocess.CompletedProcess([], 0, "", "")

    inputs = iter([("a",), ("a",), ("b",)])
    monkeypatch.setattr(serve, "build_english", fake_build)
    monkeypatch.setattr(serve, "fingerprint", lambda: next(inputs))
    en = serve.EnglishSite()
    try:
        served = []
        for k in range(3):
            site = tmp_path / f"site{k}"
            site.mkdir()
            en.after_build(site)
            served.append(site / "en" / "index.html")
        assert len(builds) == 2, "an unchanged English input must not rebuild"
        assert [p.read_text(encoding="utf-8") for p in served] == ["english 0", "english 0", "english 1"]
        assert served[2].stat().st_ino == (en.folder / "index.html").stat().st_ino  # linked, not copied
    finally:
        en.close()


def test_a_small_batch_of_known_cost_is_computed_here_and_a_new_or_large_one_on_the_pool(tmp_path, monkeypatch):
    """The pool's fork server costs seconds to start (normsite.pool.PRELOAD): an edit's few values, each computed
    before in well under ahead.SMALL_S CPU seconds all together, are computed in the pass's own process."""
    import shutil
    from types import SimpleNamespace

    from normsite import ahead

    tasks = [SimpleNamespace(name="a"), SimpleNamespace(name="b")]
    for costs, small in (({"a": 0.5, "b": 1.0}, True), ({"a": 0.5, "b": ahead.SMALL_S}, False), ({"a": 0.5}, False)):
        monkeypatch.setattr(ahead, "_costs", lambda costs=costs: costs)
        assert ahead._small(tasks) is small, costs
    monkeypatch.undo()
    from normsite import pool

    asked, run = [], pool.run
    monkeypatch.setattr(pool, "run", lambda tasks, **kw: asked.append(kw.get("n_workers")) or run(tasks, **kw))
    monkeypatch.setenv("NORMREF_CACHE", str(tmp_path / "cache"))
    docs = _docs(tmp_path, {"a.md": "[[value: worked.x]] and [[value: worked.y]]\n"})
    cold = prepare.prepare({"en": docs}, generated=False)
    assert cold["counts"]["value"] == [2, 0] and asked == [None]  # never computed: costs unknown, the pool
    shutil.rmtree(tmp_path / "cache" / "directives")  # the same two results again, their costs now known
    again = prepare.prepare({"en": docs}, generated=False)
    assert again["counts"]["value"] == [2, 0] and asked == [None, 1] and "1 worker," in again["summary"]


def test_the_pool_expands_figures_once_per_page_folder_and_values_once_per_language(tmp_path):
    """The pass hands every figure directive to the pool too (its caption's fields may read an experiment, and the
    workers have torch loaded): once per folder of the pages that show it (its image paths are relative to the
    page), where a value is expanded once per language."""
    docs = tmp_path / "docs" / "en"
    (docs / "sub").mkdir(parents=True)
    (docs / "a.md").write_text("[[figure: s_curve]] [[value: worked.x]]\n", encoding="utf-8")
    (docs / "b.md").write_text("[[figure: s_curve]] [[value: worked.x]]\n", encoding="utf-8")
    (docs / "sub" / "c.md").write_text("[[figure: s_curve]] [[snippet: sqrt_d.py]]\n", encoding="utf-8")
    jobs = prepare._pooled_jobs({"en": docs}, True, ROOT)
    assert sorted((k, n, src) for k, n, _, src, _ in jobs) == [
        ("figure", "s_curve", "a.md"), ("figure", "s_curve", "sub/c.md"), ("value", "worked.x", "a.md")]
    assert "figure" in directives.POOLED
