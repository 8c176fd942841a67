"""Pre-LN and Post-LN Transformer blocks, and a tiny decoder stack for experiments.

Read it next to the formulas page. The only difference between the two
blocks is where the norm sits:

    Post-LN (2017):  x = LN(x + f(x))      the norm is on the residual path
    Pre-LN:          x = x + f(LN(x))      the norm is on the branch; the path is x + ...

Everything else (attention, a ReLU MLP, the initialisation) is shared, so an
experiment that compares the two compares placement and nothing else. The norm
is LayerNorm or RMSNorm from :mod:`normref.nn`.

The initialisation follows the setting of Xiong et al. 2020 (§3.3): every
weight matrix N(0, 1/fan_in) (Xavier-style), biases zero, norm gains one, and
an input whose entries have unit variance, so E‖x_0‖² = d. That is what Lemma 2
assumes; ``TinyTransformer`` scales its token and position embeddings so that
their sum has unit variance too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from .nn import LayerNorm, RMSNorm

__all__ = ["BlockConfig", "TinyConfig", "make_norm", "Attention", "MLP", "PostLNBlock", "PreLNBlock",
           "make_block", "TinyTransformer", "init_weights"]

NORMS = ("layernorm", "rmsnorm")
PLACEMENTS = ("pre", "post")


def _pos_int(v, name: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise ValueError(f"{name} must be a positive integer, got {v!r}")
    return v


@dataclass
class BlockConfig:
    d_model: int = 64
    n_head: int = 4
    d_ff: int = 0  # 0 means 4 * d_model, as in the 2017 Transformer and GPT-2
    norm: str = "layernorm"  # "layernorm" or "rmsnorm"
    placement: str = "pre"  # "pre" (x + f(LN(x))) or "post" (LN(x + f(x)))
    eps: float = 1e-5
    causal: bool = True

    def __post_init__(self):
        _pos_int(self.d_model, "d_model")
        _pos_int(self.n_head, "n_head")
        if self.d_model % self.n_head:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_head ({self.n_head})")
        if self.d_ff == 0:
            self.d_ff = 4 * self.d_model
        _pos_int(self.d_ff, "d_ff")
        if self.norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS}, got {self.norm!r}")
        if self.placement not in PLACEMENTS:
            raise ValueError(f"placement must be one of {PLACEMENTS}, got {self.placement!r}")
        if not (isinstance(self.eps, (int, float)) and not isinstance(self.eps, bool) and self.eps > 0):
            raise ValueError(f"eps must be a number > 0, got {self.eps!r}")


def make_norm(cfg: BlockConfig) -> nn.Module:
    return LayerNorm(cfg.d_model, eps=cfg.eps) if cfg.norm == "layernorm" else RMSNorm(cfg.d_model, eps=cfg.eps)


class Attention(nn.Module):
    """Multi-head self-attention (causal by default), nanoGPT-style."""

    def __init__(self, cfg: BlockConfig):
        super().__init__()
        self.n_head, self.causal = cfg.n_head, cfg.causal
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        # (B, T, C) -> (B, heads, T, C/heads)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class MLP(nn.Module):
    """Two linear maps with a ReLU between them: the FFN of the 2017 Transformer and of Xiong et al."""

    def __init__(self, cfg: BlockConfig):
        super().__init__()
        self.fc = nn.Linear(cfg.d_model, cfg.d_ff)
        self.proj = nn.Linear(cfg.d_ff, cfg.d_model)

    def forward(self, x):
        return self.proj(F.relu(self.fc(x)))


class PostLNBlock(nn.Module):
    """x_{l+1} = LN(x_l + f(x_l)), once for attention and once for the MLP."""

    def __init__(self, cfg: BlockConfig):
        super().__init__()
        self.attn, self.ln_1 = Attention(cfg), make_norm(cfg)
        self.mlp, self.ln_2 = MLP(cfg), make_norm(cfg)

    def forward(self, x):
        x = self.ln_1(x + self.attn(x))
        x = self.ln_2(x + self.mlp(x))
        return x


class PreLNBlock(nn.Module):
    """x_{l+1} = x_l + f(LN(x_l)): the residual path itself is never normalised."""

    def __init__(self, cfg: BlockConfig):
        super().__init__()
        self.ln_1, self.attn = make_norm(cfg), Attention(cfg)
        self.ln_2, self.mlp = make_norm(cfg), MLP(cfg)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


def make_block(cfg: BlockConfig) -> nn.Module:
    return PreLNBlock(cfg) if cfg.placement == "pre" else PostLNBlock(cfg)


def init_weights(module: nn.Module) -> None:
    """Xiong et al.'s setting: weights N(0, 1/fan_in), biases 0 (norms keep gain 1, bias 0)."""
    for m in module.modules():
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, 0.0, 1.0 / math.sqrt(m.in_features))
            if m.bias is not None:
                nn.init.zeros_(m.bias)


@dataclass
class TinyConfig(BlockConfig):
    vocab_size: int = 32
    block_size: int = 32  # longest sequence
    n_layer: int = 12

    def __post_init__(self):
        super().__post_init__()
        _pos_int(self.vocab_size, "vocab_size")
        _pos_int(self.block_size, "block_size")
        _pos_int(self.n_layer, "n_layer")


class TinyTransformer(nn.Module):
    """A decoder-only language model: embeddings, n_layer blocks, (final norm), LM head.

    Pre-LN needs a norm before the head (GPT-2's ``ln_f``), since its stream is
    never normalised; Post-LN already ends every block with one.
    """

    def __init__(self, cfg: TinyConfig):
        super().__init__()
        if not isinstance(cfg, TinyConfig):
            raise TypeError(f"cfg must be a TinyConfig, got {type(cfg).__name__}")
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.wpe = nn.Embedding(cfg.block_size, cfg.d_model)
        self.blocks = nn.ModuleList(make_block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = make_norm(cfg) if cfg.placement == "pre" else nn.Identity()
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        init_weights(self)
        # Token + position embeddings, each N(0, 1/2): their sum has unit-variance
        # entries, so E‖x_0‖² = d, the input that Lemma 2 assumes.
        for emb in (self.wte, self.wpe):
            nn.init.normal_(emb.weight, 0.0, math.sqrt(0.5))

    def embed(self, idx: torch.Tensor) -> torch.Tensor:
        if not isinstance(idx, torch.Tensor) or idx.dtype != torch.long or idx.dim() != 2:
            raise TypeError("idx must be a (batch, time) tensor of dtype torch.long")
        T = idx.shape[1]
        if not 0 < T <= self.cfg.block_size:
            raise ValueError(f"idx has {T} positions; this model takes 1..{self.cfg.block_size}")
        if idx.numel() and (idx.min() < 0 or idx.max() >= self.cfg.vocab_size):
            raise ValueError(f"idx must hold token ids in [0, {self.cfg.vocab_size})")
        return self.wte(idx) + self.wpe(torch.arange(T, device=idx.device))

    def stream(self, x: torch.Tensor) -> list[torch.Tensor]:
        """Run the blocks on an embedded input; return [x_0, x_1, ..., x_L] (the residual stream)."""
        xs = [x]
        for block in self.blocks:
            xs.append(block(xs[-1]))
        return xs

    def forward(self, idx, targets=None):
        x = self.stream(self.embed(idx))[-1]
        logits = self.head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        return logits, loss
