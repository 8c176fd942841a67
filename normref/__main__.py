"""Command line: ``python -m normref {figures,activations,bench,placement} ...``."""

from __future__ import annotations

import argparse
import importlib
import sys

# Each command lives next to the code it drives; its module has
# add_arguments(parser) and run(args) -> exit code. Only the chosen command's
# module is imported, so `figures` does not pay for torch or the model loaders.
COMMANDS = {
    "figures": ("normref.figures.cli", "render every figure of the site into a folder"),
    "activations": ("normref.models.cli", "per-layer norm statistics of a real model, as JSON"),
    "bench": ("normref.bench", "time RMSNorm against LayerNorm on this machine"),
    "placement": ("normref.experiments.placement",
                  "train the placement lab's small language models on this machine (minutes), as JSON"),
}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = argparse.ArgumentParser(prog="python -m normref", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    subparsers = {name: sub.add_parser(name, help=help_, description=help_) for name, (_, help_) in COMMANDS.items()}
    chosen = next((a for a in argv if not a.startswith("-")), None)
    module = None
    if chosen in COMMANDS:
        modname = COMMANDS[chosen][0]
        try:
            module = importlib.import_module(modname)
        except ModuleNotFoundError as e:
            # The command's module (or its package, e.g. normref.models) is missing:
            # that command is not built yet. Any other missing module is a real error.
            if e.name is None or not (modname == e.name or modname.startswith(e.name + ".")):
                raise
            parser.error(f"command {chosen!r} is not available in this version of normref")
        module.add_arguments(subparsers[chosen])
    args = parser.parse_args(argv)
    return module.run(args)


if __name__ == "__main__":
    sys.exit(main())
