"""The command line's answer to ordinary mistakes: one line naming the parameter and what it expected,
exit status 2, before any work (normref/__main__.py, normref/usage.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib

import pytest

from normref import __main__ as cli
from support import ROOT


def _run(args, cwd=ROOT, env=None, block=(), timeout=120):
    """python -m normref ARGS, with the modules in ``block`` made unimportable (as if not installed)."""
    code = ("import sys\n"
            f"for m in {list(block)!r}: sys.modules[m] = None\n"
            "from normref.__main__ import main\n"
            "sys.exit(main())\n")
    full_env = dict(os.environ, **(env or {}))
    full_env["PYTHONPATH"] = os.pathsep.join([str(ROOT), full_env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


def _call(monkeypatch, capsys, args, env=None, block=()):
    """``main(args)`` in this process, as :func:`_run` runs it in a fresh one: the environment in ``env``, the
    modules in ``block`` unimportable (importlib.util.find_spec answers None for them, and an import fails); its
    exit status and what it printed. The command's own code is the same; only the interpreter's start is left
    out (test_the_command_line_answers_a_mistake_in_its_own_process keeps one run of that)."""
    for k, v in (env or {}).items():
        monkeypatch.setenv(k, v)
    for m in block:
        monkeypatch.setitem(sys.modules, m, None)
    capsys.readouterr()
    try:
        code = cli.main(list(args))
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    out = capsys.readouterr()
    return subprocess.CompletedProcess(list(args), code, out.out, out.err)


def _one_line_error(p, *needles):
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    assert lines[0].startswith("python -m normref ") and ": error: " in lines[0], lines[0]
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


CASES = {
    "out-unwritable": (["figures", "--out", "/proc/x"], {}, (), ("--out", "/proc/x", "writable folder")),
    "json-unwritable-bench": (["bench", "--quick", "--json", "/proc/x"], {}, (), ("--json", "/proc/x", "writable file")),
    "json-unwritable-activations": (["activations", "--model", "smollm2-135m", "--prompt", "The capital", "--json",
                                     "/proc/x/a.json"], {}, (), ("--json", "/proc/x/a.json")),
    "json-unwritable-placement": (["placement", "--json", "/proc/x"], {}, (), ("--json", "/proc/x")),
    "workers-abc": (["figures", "--out", "{tmp}"], {"NORMREF_WORKERS": "abc"}, (), ("NORMREF_WORKERS", "positive integer", "'abc'")),
    "workers-0": (["bench", "--quick"], {"NORMREF_WORKERS": "0"}, (), ("NORMREF_WORKERS", "positive integer", "'0'")),
    "dims-0": (["bench", "--dims", "0"], {}, (), ("--dims", "positive integers", "'0'")),
    "dims-total": (["bench", "--quick", "--dims", "100"], {}, (), ("--total", "multiple of every d")),
    "variants-bogus": (["placement", "--variants", "bogus"], {}, (), ("--variants", "subset of post, pre", "'bogus'")),
    "steps-0": (["placement", "--steps", "0"], {}, (), ("--steps", "positive integer")),
    "unknown-figure": (["figures", "--out", "{tmp}", "--only", "nope"], {}, (), ("--only", "unknown figure 'nope'")),
    "no-matplotlib": (["figures", "--out", "{tmp}"], {}, ("matplotlib",), ('pip install "normref[figures]"', "matplotlib")),
    "no-mplfonts": (["figures", "--out", "{tmp}"], {}, ("mplfonts",), ('pip install "normref[figures]"', "mplfonts")),
    "no-torch-bench": (["bench", "--quick"], {}, ("torch",), ('pip install "normref[torch]"', "torch")),
    "cache-unknown-option": (["cache", "--bogus"], {}, (), ("python -m normref cache: error:", "--bogus")),
    "json-under-a-file": (["bench", "--quick", "--json", "{file}/x.json"], {}, (), ("--json", "is a file, not a folder")),
    "empty-prompt": (["activations", "--model", "smollm2-135m", "--prompt", ""], {}, (),
                     ("python -m normref activations: error:", "prompt")),
    "no-tokenizers": (["activations", "--model", "smollm2-135m", "--prompt", "x"], {}, ("tokenizers",),
                      ('pip install "normref[models]"', "tokenizers")),
}


@pytest.mark.parametrize("name", CASES)
def test_a_mistake_is_one_line_naming_the_parameter_with_status_2(name, tmp_path, monkeypatch, capsys):
    args, env, block, needles = CASES[name]
    out, afile = tmp_path / "out", tmp_path / "afile.txt"
    afile.write_text("mine", encoding="utf-8")
    p = _call(monkeypatch, capsys, [a.replace("{tmp}", str(out)).replace("{file}", str(afile)) for a in args],
              env=env, block=block)
    _one_line_error(p, *needles)
    assert "(File exists)" not in p.stderr, p.stderr
    assert not out.exists(), "no work before the check, and no folder left behind"
    assert afile.read_text(encoding="utf-8") == "mine"


def test_the_command_line_answers_a_mistake_in_its_own_process():
    """The mistakes above are checked by calling main in this process; here, once, the interpreter runs it: the
    same one line and status 2 (with torch made unimportable for a missing extra)."""
    _one_line_error(_run(["bench", "--quick"], block=("torch",)), 'pip install "normref[torch]"')
    _one_line_error(_run(["bench", "--dims", "0"]), "--dims", "positive integers", "'0'")


def test_help_for_a_command_whose_extra_is_missing_says_what_it_needs_with_status_0(monkeypatch, capsys):
    p = _call(monkeypatch, capsys, ["placement", "--help"], block=("torch",))
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert p.stdout.startswith("usage: python -m normref placement"), p.stdout
    assert 'pip install "normref[torch]"' in " ".join(p.stdout.split()), p.stdout


def test_help_shows_no_rest_markup(monkeypatch, capsys):
    for args in (["--help"], *([c, "--help"] for c in cli.COMMANDS)):
        p = _call(monkeypatch, capsys, args)
        assert p.returncode == 0 and "``" not in p.stdout, (args, p.stdout)


def test_paths_are_checked_before_any_work(tmp_path):
    """A run that would take minutes (the full benchmark) fails at once on an unwritable --json."""
    import time

    t0 = time.perf_counter()
    p = _run(["bench", "--json", "/proc/x"])
    _one_line_error(p, "--json")
    assert "machine:" not in p.stdout and time.perf_counter() - t0 < 60
    # A writable path is left as it was found: the probe leaves no file behind.
    ok = tmp_path / "new" / "report.json"
    from normref.usage import check_writable

    check_writable(ok, "--json")
    assert not ok.parent.exists(), "the folders the check made are gone again (the command makes them when it writes)"
    check_writable(tmp_path / "a" / "b", "--out", folder=True)
    assert not (tmp_path / "a").exists()
    existing = tmp_path / "keep.json"
    existing.write_text("{}", encoding="utf-8")
    check_writable(existing, "--json")
    assert existing.read_text(encoding="utf-8") == "{}"


def test_the_extras_named_are_pyprojects():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    for extra, modules in cli.EXTRAS.items():
        assert sorted(modules) == sorted(r.split(">")[0].split("=")[0].strip() for r in extras[extra]), extra
    assert set(cli.NEEDS.values()) <= set(cli.EXTRAS) and set(cli.NEEDS) <= set(cli.COMMANDS)


@pytest.mark.command  # a slow command end to end, in its own process: make test only
def test_placement_runs_outside_a_clone_on_the_corpus_the_wheel_ships(tmp_path, monkeypatch, capsys):
    """No docs/en/ in the current folder: the lab trains on the committed run's own copy of the text."""
    out = tmp_path / "lab.json"
    p = _run(["placement", "--quick", "--variants", "pre", "--steps", "1", "--json", str(out)], cwd=tmp_path,
             env={"NORMREF_CACHE": str(tmp_path / "cache")}, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "corpus: the text the committed run trained on" in p.stdout
    from normref.results.placement import placement_cpu

    assert json.loads(out.read_text(encoding="utf-8"))["corpus"]["sha256"] == placement_cpu()["corpus"]["sha256"]
    # An explicit --root that is no clone says so, naming the option.
    bad = _call(monkeypatch, capsys, ["placement", "--quick", "--root", str(tmp_path)])
    _one_line_error(bad, "--root", "docs/en")
