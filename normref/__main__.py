"""Command line: ``python -m normref {figures,activations,bench,placement,dropnorm,normfree,committed,cache} ...``."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys

from .usage import UsageError, check_writable

# What ``--help`` says first (the docstring above is reST, for the API docs: its backticks would show).
DESCRIPTION = "normref's command line: one command per task, each with its own --help."

# Each command lives next to the code it drives; its module has
# add_arguments(parser) and run(args) -> exit code. Only the chosen command's
# module is imported, so `figures` does not pay for torch or the model loaders.
COMMANDS = {
    "figures": ("normref.figures.cli", "render every figure of the site into a folder"),
    "activations": ("normref.models.cli", "per-layer norm statistics of a real model, as JSON"),
    "bench": ("normref.bench", "time RMSNorm against LayerNorm on this machine"),
    "placement": ("normref.experiments.placement",
                  "train the placement lab's small language models on this machine (minutes), as JSON"),
    "dropnorm": ("normref.experiments.dropnorm",
                 "train the placement lab's Pre-LN with DyT, Derf or LayerNorm Scaling on this machine (minutes), "
                 "as JSON"),
    "normfree": ("normref.experiments.normfree",
                 "freeze each RMSNorm of SmolLM2-135M-Instruct, fit DyT to it, and drop each block, over several texts "
                 "(minutes), as JSON"),
    "committed": ("normref.results.committed",
                  "the slow experiments' results committed with normref: which are current, and where they were "
                  "computed; --refresh computes them again on this machine"),
    "cache": ("normref.cache_cli", "where normref caches its results and converted weights, and how much disk they "
                                   "take; --clear deletes what normref put there"),
}

# The extra of pyproject.toml each command needs, and the modules that extra installs
# (tests/test_cli.py checks these against pyproject.toml). Checked before the command's
# module is imported, so a missing one is one line naming the pip line, even for --help.
NEEDS = {"figures": "figures", "activations": "models", "bench": "torch", "placement": "torch", "dropnorm": "torch",
         "normfree": "models", "committed": "models"}
EXTRAS = {
    "torch": ("torch",),
    "models": ("torch", "gguf", "tokenizers", "safetensors"),
    "plot": ("matplotlib",),
    "figures": ("matplotlib", "mplfonts"),
}

# The options that name where a command writes: checked before any work.
OUTPUTS = {"out": ("--out", True), "json": ("--json", False)}


class _Parser(argparse.ArgumentParser):
    """argparse, with each error on one line: ``python -m normref CMD: error: ...`` (status 2)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def missing_extra(command: str) -> str | None:
    """The one-line complaint when the command's extra is not installed, else None."""
    extra = NEEDS.get(command)
    if extra is None:
        return None
    missing = [m for m in EXTRAS[extra] if importlib.util.find_spec(m) is None]
    if not missing:
        return None
    return (f"needs {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} not installed: "
            f'pip install "normref[{extra}]"')


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = _Parser(prog="python -m normref", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True)
    subparsers = {name: sub.add_parser(name, help=help_, description=help_) for name, (_, help_) in COMMANDS.items()}
    chosen = next((a for a in argv if not a.startswith("-")), None)
    module = None
    if chosen in COMMANDS:
        sp = subparsers[chosen]
        problem = missing_extra(chosen)
        if problem and any(a in ("-h", "--help") for a in argv):
            # The command's options come from its module, which needs the extra: say what it does and what it needs.
            sp.description = f"{sp.description}. It {problem}; its options are listed once that is installed."
            sp.print_help()
            sp.exit(0)
        if problem:
            sp.exit(2, f"{sp.prog}: error: {problem}\n")
        modname = COMMANDS[chosen][0]
        try:
            module = importlib.import_module(modname)
        except ModuleNotFoundError as e:
            # The command's module (or its package, e.g. normref.models) is missing:
            # that command is not built yet. Any other missing module is a real error.
            if e.name is None or not (modname == e.name or modname.startswith(e.name + ".")):
                raise
            parser.error(f"command {chosen!r} is not available in this version of normref")
        module.add_arguments(sp)
    args, unknown = parser.parse_known_args(argv)
    sp = subparsers[args.command]
    if unknown:  # argparse would blame the top-level parser for an option the command does not know
        sp.error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        from .cores import workers

        workers()  # NORMREF_WORKERS, if set, must be a positive integer
    except ValueError as e:
        sp.exit(2, f"{sp.prog}: error: {e}\n")
    try:
        for dest, (option, folder) in OUTPUTS.items():
            if getattr(args, dest, None) is not None:
                check_writable(args.__dict__[dest], option, folder=folder)
        return module.run(args)
    except UsageError as e:
        sp.exit(2, f"{sp.prog}: error: {e}\n")


if __name__ == "__main__":
    sys.exit(main())
