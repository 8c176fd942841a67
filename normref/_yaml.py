"""Reading normref's own YAML data files (labels.yml, figures/figures.yml, an experiment's inputs)."""

from __future__ import annotations

from typing import Any

__all__ = ["yaml_load"]


def yaml_load(stream) -> Any:
    """A YAML file's data through PyYAML's safe loader: libyaml's when PyYAML was built with it (the same
    data, several times faster on a large file), else the pure-Python one."""
    import yaml

    return yaml.load(stream, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
