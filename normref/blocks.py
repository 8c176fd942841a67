"""Transformer blocks with every norm placement, and a tiny decoder stack for experiments.

Read it next to the formulas page and the placement page ("Where the norm
goes"). The blocks differ only in where the norm sits; f is attention or the
MLP, l the layer:

    Post-LN (2017):   x = LN(x + f(x))           the norm is on the residual path
    Pre-LN:           x = x + f(LN(x))           the norm is on the branch; the path is x + ...
    Peri-LN:          x = x + LN(f(LN(x)))       a norm on the branch's input and on its output
    output norm:      x = x + LN(f(x))           OLMo 2's "reordered norm": output only, no input norm
    DeepNorm:         x = LN(α·x + f(x))         Post-LN with the path scaled up by α, f's init scaled down by β
    Mix-LN:           Post-LN blocks first, Pre-LN blocks after
    QK-norm:          a norm on each head's queries and keys; a switch that combines with any of the above

Everything else (attention, a ReLU MLP, the initialization) is shared, so an
experiment that compares placements compares placement and nothing else. The
norm is LayerNorm or RMSNorm from :mod:`normref.nn`, or one of the element-wise
maps that replace a norm there (DyT, Derf). ``ln_scaling`` is LayerNorm Scaling
(Sun et al. 2025, arXiv 2502.05795): a Pre-LN stack whose block ℓ multiplies
both its norms' outputs by 1/√ℓ.

The initialization follows the setting of Xiong et al. 2020 (§3.3): every
weight matrix N(0, 1/fan_in) (Xavier-style), biases zero, norm gains one, and
an input whose entries have unit variance, so E‖x_0‖² = d. That is what Lemma 2
assumes; ``TinyTransformer`` scales its token and position embeddings so that
their sum has unit variance too. DeepNorm then divides some of those weights by
its β (see :class:`DeepNormBlock`).

The Post-LN and Pre-LN blocks are exactly the ones the toll-booth page
measures: the new placements add classes, not branches inside those two, and
create their parameters in the same order, so a seed gives the same weights.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from .nn import Derf, DyT, LayerNorm, RMSNorm

__all__ = ["BlockConfig", "TinyConfig", "PLACEMENTS", "make_norm", "Attention", "MLP", "PostLNBlock", "PreLNBlock",
           "PeriLNBlock", "OutputNormBlock", "DeepNormBlock", "ScaledPreLNBlock", "deepnorm_alpha", "deepnorm_beta", "mixln_post_layers",
           "make_block", "TinyTransformer", "init_weights"]

NORMS = ("layernorm", "rmsnorm", "dyt", "derf")  # the last two are element-wise: no statistic
# The block layouts. QK-norm is not among them: it is a switch (BlockConfig.qk_norm) that combines with each.
PLACEMENTS = ("pre", "post", "peri", "output", "deepnorm", "mixln")


def _pos_int(v, name: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise ValueError(f"{name} must be a positive integer, got {v!r}")
    return v


@dataclass
class BlockConfig:
    d_model: int = 64
    n_head: int = 4
    d_ff: int = 0  # 0 means 4 * d_model, as in the 2017 Transformer and GPT-2
    norm: str = "layernorm"  # one of NORMS: "layernorm", "rmsnorm", or the norm-free "dyt" / "derf"
    placement: str = "pre"  # one of PLACEMENTS; see the module docstring
    eps: float = 1e-5
    causal: bool = True
    qk_norm: bool = False  # normalize each head's queries and keys before the dot product
    mixln_post: float = 0.25  # Mix-LN: the fraction of layers, from the input, that are Post-LN
    alpha_init: float = 0.5  # DyT / Derf: α at init (the official default; their LLMs use smaller, per norm)
    shift_init: float = 0.0  # Derf: the shift s at init
    ln_scaling: bool = False  # LayerNorm Scaling: Pre-LN block ℓ (from 1) scales both norm outputs by 1/√ℓ

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
        if not isinstance(self.qk_norm, bool):
            raise TypeError(f"qk_norm must be True or False, got {self.qk_norm!r}")
        if (isinstance(self.mixln_post, bool) or not isinstance(self.mixln_post, (int, float))
                or not 0 < self.mixln_post < 1):
            raise ValueError(f"mixln_post must be a fraction strictly between 0 and 1, got {self.mixln_post!r}")
        for name, positive in (("alpha_init", True), ("shift_init", False)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise TypeError(f"{name} must be a real number, got {type(v).__name__}")
            if not math.isfinite(v) or (positive and v <= 0):
                raise ValueError(f"{name} must be a finite number{' > 0' if positive else ''}, got {v!r}")
        if not isinstance(self.ln_scaling, bool):
            raise TypeError(f"ln_scaling must be True or False, got {self.ln_scaling!r}")
        if self.ln_scaling and self.placement != "pre":
            # The paper scales the norms on Pre-LN's branches; on a normalized path (Post-LN) the
            # same factor would shrink the stream itself, which is a different method.
            raise ValueError(f"ln_scaling applies to placement 'pre' only, got placement {self.placement!r}")


def make_norm(cfg: BlockConfig, dim: int | None = None) -> nn.Module:
    """The config's norm over ``dim`` features (default: d_model)."""
    d = cfg.d_model if dim is None else dim
    if cfg.norm == "dyt":
        return DyT(d, alpha_init=cfg.alpha_init)
    if cfg.norm == "derf":
        return Derf(d, alpha_init=cfg.alpha_init, shift_init=cfg.shift_init)
    return LayerNorm(d, eps=cfg.eps) if cfg.norm == "layernorm" else RMSNorm(d, eps=cfg.eps)


class Attention(nn.Module):
    """Multi-head self-attention (causal by default), nanoGPT-style, with optional QK-norm.

    QK-norm normalizes each head's query and key vectors (over the head
    dimension, with their own gains) before the scaled dot product, so a logit
    q·k/√d_h can no longer grow with the size of q and k, only with the gains:
    |q̂·k̂|/√d_h ≤ ‖q̂‖‖k̂‖/√d_h, and an RMSNorm output with gain g has
    ‖q̂‖ ≤ √d_h·max|g|. Henry et al. 2020 (arXiv 2010.04245, abstract) normalize
    q and k along the head dimension; Dehghani et al. 2023 (ViT-22B, arXiv
    2302.05442) put LayerNorm on XW_Q and XW_K; Gemma 3 and Qwen3 normalize per
    head with RMSNorm. (OLMo 2 normalizes over the full width, all heads at
    once: arXiv 2501.00656 §3.3.2.)
    """

    def __init__(self, cfg: BlockConfig):
        super().__init__()
        self.n_head, self.causal = cfg.n_head, cfg.causal
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)
        if cfg.qk_norm:
            head = cfg.d_model // cfg.n_head
            self.q_norm, self.k_norm = make_norm(cfg, head), make_norm(cfg, head)

    def heads(self, x):
        """q, k, v of shape (B, heads, T, C/heads); q and k normalized when QK-norm is on."""
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        if hasattr(self, "q_norm"):
            q, k = self.q_norm(q), self.k_norm(k)
        return q, k, v

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.heads(x)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))

    def logits(self, x):
        """The attention logits q·k/√d_h, (B, heads, T, T); positions a causal head cannot see are -inf."""
        q, k, _ = self.heads(x)
        s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if self.causal:
            T = s.shape[-1]
            s = s.masked_fill(torch.ones(T, T, dtype=torch.bool, device=s.device).triu(1), float("-inf"))
        return s


class MLP(nn.Module):
    """Two linear maps with a ReLU between them: the FFN of the 2017 Transformer and of Xiong et al."""

    def __init__(self, cfg: BlockConfig):
        super().__init__()
        self.fc = nn.Linear(cfg.d_model, cfg.d_ff)
        self.proj = nn.Linear(cfg.d_ff, cfg.d_model)

    def forward(self, x):
        return self.proj(F.relu(self.fc(x)))


class PostLNBlock(nn.Module):
    """x_{l+1} = LN(x_l + f(x_l)), once for attention and once for the MLP.

    Vaswani et al. 2017 (arXiv 1706.03762), §3.1: "LayerNorm(x + Sublayer(x))".
    """

    def __init__(self, cfg: BlockConfig):
        super().__init__()
        self.attn, self.ln_1 = Attention(cfg), make_norm(cfg)
        self.mlp, self.ln_2 = MLP(cfg), make_norm(cfg)

    def forward(self, x):
        x = self.ln_1(x + self.attn(x))
        x = self.ln_2(x + self.mlp(x))
        return x


class PreLNBlock(nn.Module):
    """x_{l+1} = x_l + f(LN(x_l)): the residual path itself is never normalized.

    Xiong et al. 2020 (arXiv 2002.04745), §3 and Fig. 1 (b); GPT-2, LLaMA
    (arXiv 2302.13971, §2.2: "we normalize the input of each transformer sub-layer").
    """

    def __init__(self, cfg: BlockConfig):
        super().__init__()
        self.ln_1, self.attn = make_norm(cfg), Attention(cfg)
        self.ln_2, self.mlp = make_norm(cfg), MLP(cfg)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class ScaledPreLNBlock(PreLNBlock):
    """Pre-LN with LayerNorm Scaling: x_{l+1} = x_l + f(LN(x_l) / √ℓ), ℓ the layer counted from 1.

    Sun et al. 2025 (arXiv 2502.05795), norm type ``LNS`` in the official code
    (``lmsdss/LayerNorm-Scaling``, ``modeling_llama.py``): both norms of the
    block with 0-based ``layer_index`` are multiplied by ``1 / sqrt(layer_index + 1)``;
    the final norm before the head is not. No new parameter: the same weights as
    :class:`PreLNBlock`, a fixed factor that keeps deep branches from writing as
    much into the stream as shallow ones.
    """

    def __init__(self, cfg: BlockConfig, depth: int):
        super().__init__(cfg)
        self.depth = _pos_int(depth, "depth")
        self.scale = 1.0 / math.sqrt(self.depth)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x) * self.scale)
        x = x + self.mlp(self.ln_2(x) * self.scale)
        return x


class PeriLNBlock(nn.Module):
    """x_{l+1} = x_l + LN(f(LN(x_l))): a norm on the input and on the output of every sub-layer.

    Peri-LN (Kim et al. 2025, arXiv 2502.02732): y = x + Norm(Module(Norm(x))).
    The same wiring as Gemma 2 and 3 (input_layernorm → sub-layer → post norm
    → add; papers §2 and HF ``modeling_gemma2.py``) and CogView's Sandwich-LN
    (Ding et al. 2021, arXiv 2105.13290, §2.4), which added the output norms to
    stop NaN losses. ``ln_1_out`` / ``ln_2_out`` are the output norms.
    """

    def __init__(self, cfg: BlockConfig):
        super().__init__()
        self.ln_1, self.attn, self.ln_1_out = make_norm(cfg), Attention(cfg), make_norm(cfg)
        self.ln_2, self.mlp, self.ln_2_out = make_norm(cfg), MLP(cfg), make_norm(cfg)

    def forward(self, x):
        x = x + self.ln_1_out(self.attn(self.ln_1(x)))
        x = x + self.ln_2_out(self.mlp(self.ln_2(x)))
        return x


class OutputNormBlock(nn.Module):
    """x_{l+1} = x_l + LN(f(x_l)): the norm on the sub-layer's output only, none on its input.

    OLMo 2's "reordered norm" (arXiv 2501.00656, §3.3.2): h = x + RMSNorm(Attention(x)),
    h_out = h + RMSNorm(MLP(h)); HF ``Olmo2DecoderLayer`` has only these two
    norms. OLMo 2 pairs it with QK-norm (set ``qk_norm=True``): the paper
    reports that neither change gives good results alone.
    """

    def __init__(self, cfg: BlockConfig):
        super().__init__()
        self.attn, self.ln_1 = Attention(cfg), make_norm(cfg)
        self.mlp, self.ln_2 = MLP(cfg), make_norm(cfg)

    def forward(self, x):
        x = x + self.ln_1(self.attn(x))
        x = x + self.ln_2(self.mlp(x))
        return x


def deepnorm_alpha(n_layer: int) -> float:
    """DeepNorm's residual scale for a decoder-only stack of ``n_layer`` layers: α = (2M)^{1/4}.

    Wang et al. 2022 (DeepNet, arXiv 2203.00555) give (3M)^{1/4} for the
    decoder of an encoder-decoder model (§4.3); the decoder-only value is the
    official ``microsoft/torchscale`` code, ``torchscale/architecture/decoder.py``:
    ``math.pow(2.0 * args.decoder_layers, 0.25)``.
    """
    return (2 * _pos_int(n_layer, "n_layer")) ** 0.25


def deepnorm_beta(n_layer: int) -> float:
    """DeepNorm's init scale for a decoder-only stack: β = (8M)^{-1/4} (same file: weights divided by (8M)^{1/4})."""
    return (8 * _pos_int(n_layer, "n_layer")) ** -0.25


class DeepNormBlock(nn.Module):
    """x_{l+1} = LN(α·x_l + f(x_l)): Post-LN with the residual path scaled up by α.

    DeepNet (Wang et al. 2022, arXiv 2203.00555), §4.1; α and β from
    :func:`deepnorm_alpha` / :func:`deepnorm_beta`. β scales the initial
    weights of the FFN and of attention's value and output projections
    (§2; torchscale divides every parameter named fc1, fc2, v_proj, out_proj);
    the query and key projections keep gain 1. Our attention computes q, k, v
    with one matrix, so β scales the value third of it. Call
    :meth:`scale_init_` after (re)initializing the weights; the constructor
    calls it once.
    """

    def __init__(self, cfg: BlockConfig, n_layer: int):
        super().__init__()
        self.attn, self.ln_1 = Attention(cfg), make_norm(cfg)
        self.mlp, self.ln_2 = MLP(cfg), make_norm(cfg)
        self.alpha, self.beta = deepnorm_alpha(n_layer), deepnorm_beta(n_layer)
        self.scale_init_()

    @torch.no_grad()
    def scale_init_(self) -> None:
        C = self.attn.proj.in_features
        for lin in (self.mlp.fc, self.mlp.proj, self.attn.proj):
            lin.weight.mul_(self.beta)
            lin.bias.mul_(self.beta)
        self.attn.qkv.weight[2 * C:].mul_(self.beta)  # v rows only: q and k keep gain 1
        self.attn.qkv.bias[2 * C:].mul_(self.beta)

    def forward(self, x):
        x = self.ln_1(self.alpha * x + self.attn(x))
        x = self.ln_2(self.alpha * x + self.mlp(x))
        return x


def mixln_post_layers(n_layer: int, fraction: float = 0.25) -> int:
    """How many of a Mix-LN stack's first layers are Post-LN: round(fraction · n_layer), at least 1.

    Mix-LN (Li, Yin, Liu 2024, arXiv 2412.13795, abstract): Post-LN in the
    earlier layers, Pre-LN in the deeper ones. The official code
    (``pixeli99/MixLN``, ``peft_pretraining/modeling_llama.py``, norm type
    ``post_pre``) makes layers ``index < POST_NUM`` Post-LN; its README trains
    the 12-layer 71M model with ``POST_NUM=3``, a quarter, our default.
    """
    _pos_int(n_layer, "n_layer")
    return min(n_layer, max(1, round(fraction * n_layer)))


def make_block(cfg: BlockConfig, layer: int | None = None, n_layer: int | None = None) -> nn.Module:
    """The block of ``cfg.placement`` for layer ``layer`` (0 = nearest the input) of ``n_layer``.

    Post-LN, Pre-LN, Peri-LN and the output norm do not depend on the depth;
    DeepNorm (α, β) and Mix-LN (which kind this layer is) need both numbers;
    LayerNorm Scaling (``cfg.ln_scaling``) needs ``layer``.
    """
    p = cfg.placement
    if cfg.ln_scaling:
        if isinstance(layer, bool) or not isinstance(layer, int) or layer < 0:
            raise ValueError(f"ln_scaling needs layer, this block's index from 0, got {layer!r}")
        return ScaledPreLNBlock(cfg, layer + 1)
    if p in ("deepnorm", "mixln"):
        if n_layer is None or (p == "mixln" and layer is None):
            raise ValueError(f"placement {p!r} needs n_layer (the stack's depth)"
                             + (" and layer (this block's index)" if p == "mixln" else ""))
        _pos_int(n_layer, "n_layer")
        if layer is not None and (isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < n_layer):
            raise ValueError(f"layer must be an integer in [0, {n_layer}), got {layer!r}")
    if p == "pre":
        return PreLNBlock(cfg)
    if p == "post":
        return PostLNBlock(cfg)
    if p == "peri":
        return PeriLNBlock(cfg)
    if p == "output":
        return OutputNormBlock(cfg)
    if p == "deepnorm":
        return DeepNormBlock(cfg, n_layer)
    return PostLNBlock(cfg) if layer < mixln_post_layers(n_layer, cfg.mixln_post) else PreLNBlock(cfg)


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


# Placements whose last block ends in a norm: the LM head reads a normalized stream already.
_ENDS_NORMALIZED = ("post", "deepnorm")


class TinyTransformer(nn.Module):
    """A decoder-only language model: embeddings, n_layer blocks, (final norm), LM head.

    A stack whose stream is never normalized on the path (Pre-LN, Peri-LN, the
    output norm, Mix-LN's Pre-LN tail) needs a norm before the head (GPT-2's
    ``ln_f``; Gemma's and OLMo 2's final norm); Post-LN and DeepNorm already
    end every block with one.
    """

    def __init__(self, cfg: TinyConfig):
        super().__init__()
        if not isinstance(cfg, TinyConfig):
            raise TypeError(f"cfg must be a TinyConfig, got {type(cfg).__name__}")
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.wpe = nn.Embedding(cfg.block_size, cfg.d_model)
        self.blocks = nn.ModuleList(make_block(cfg, i, cfg.n_layer) for i in range(cfg.n_layer))
        self.ln_f = nn.Identity() if cfg.placement in _ENDS_NORMALIZED else make_norm(cfg)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        init_weights(self)
        for b in self.blocks:  # DeepNorm's β, on top of the common initialization
            if isinstance(b, DeepNormBlock):
                b.scale_init_()
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
