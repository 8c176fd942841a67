"""Command line: ``python -m normref {figures,activations,bench} ...``."""

from __future__ import annotations

import argparse
import importlib
import sys

# Each command lives next to the code it drives; its module has
# add_arguments(parser) and run(args) -> exit code.
COMMANDS = {
    "figures": ("normref.figures.cli", "render every figure of the site into a folder"),
    "activations": ("normref.models.cli", "per-layer norm statistics of a real model, as JSON"),
    "bench": ("normref.bench", "time RMSNorm against LayerNorm on this machine"),
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m normref", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    modules = {}
    for name, (modname, help_) in COMMANDS.items():
        try:
            modules[name] = importlib.import_module(modname)
        except ModuleNotFoundError as e:
            # The command's module (or its package, e.g. normref.models) is missing:
            # that command is not built yet. Any other missing module is a real error.
            if e.name is None or not (modname == e.name or modname.startswith(e.name + ".")):
                raise
            continue  # command not built yet
        modules[name].add_arguments(sub.add_parser(name, help=help_, description=help_))
    args = parser.parse_args(argv)
    return modules[args.command].run(args)


if __name__ == "__main__":
    sys.exit(main())
