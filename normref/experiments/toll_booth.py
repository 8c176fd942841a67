"""Post-LN vs Pre-LN, measured: the evidence of the toll-booth page.

Three experiments on :class:`normref.blocks.TinyTransformer`, all synthetic and
seeded, small enough for a 2-core laptop (a few seconds each, cached on disk):

1. ``grad_per_layer``: the gradient norm of each layer's FFN weights at
   initialization, several seeds. The analogue of Xiong et al. 2020, Fig. 3
   (they used a 6-6 translation model on IWSLT14; we use a decoder-only stack
   on random tokens).
2. ``stream_norms``: the squared L2 norm of the residual stream after each
   layer at initialization, to compare with Lemma 2 of the same paper.
3. ``warmup_runs``: a short training run of both topologies, with and without
   learning-rate warmup, on the same synthetic data from the same seed.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import torch

from .. import cache
from . import one_thread
from ..blocks import TinyConfig, TinyTransformer

__all__ = ["GRAD", "STREAM", "grad_per_layer", "stream_norms", "lemma2_bounds", "TrainSetting", "markov_data",
           "warmup_runs", "one_thread"]




def _model(placement: str, seed: int, **kw) -> TinyTransformer:
    torch.manual_seed(seed)
    return TinyTransformer(TinyConfig(placement=placement, **kw))


# ------------------------------------------------------------------ 1. gradients at init

# The settings the site shows (figure captions read them from here).
GRAD = dict(n_layer=12, d_model=64, n_head=4, vocab_size=64, block_size=32, batch=16, seeds=tuple(range(8)))
STREAM = dict(n_layer=12, d_model=128, n_head=4, tokens=32, batch=16, seeds=tuple(range(5)))


@cache.memo
@one_thread()
def grad_per_layer(n_layer: int = GRAD["n_layer"], d_model: int = GRAD["d_model"], n_head: int = GRAD["n_head"],
                   vocab_size: int = GRAD["vocab_size"], block_size: int = GRAD["block_size"], batch: int = GRAD["batch"],
                   seeds: tuple = GRAD["seeds"], norm: str = "layernorm") -> dict:
    """‖∂loss/∂W‖_F of each layer's FFN weights (both matrices) at initialization.

    The loss is next-token cross-entropy on uniformly random tokens, so no
    layer is favoured by the data. Returns ``{"post": (seeds, layers), "pre":
    (seeds, layers), "layers": 1..L, ...}`` as numpy arrays.
    """
    if len(seeds) < 1:
        raise ValueError("seeds must name at least one seed")
    out = {"layers": np.arange(1, n_layer + 1), "seeds": tuple(seeds), "norm": norm}
    kw = dict(n_layer=n_layer, d_model=d_model, n_head=n_head, vocab_size=vocab_size, block_size=block_size, norm=norm)
    for placement in ("post", "pre"):
        out[placement] = ffn_grad_rows(lambda seed: _model(placement, seed, **kw), seeds, vocab_size, block_size, batch)
    return out


def ffn_grad_rows(make_model, seeds, vocab_size: int, block_size: int, batch: int, detach_inputs: bool = False,
                  stream: bool = False):
    """(seeds, layers): ‖∂loss/∂W‖_F of each block's FFN weight matrices after one backward pass of
    ``make_model(seed)`` on uniformly random tokens (seeded by 10 000 + seed, the same for every layout).

    ``detach_inputs``: every sub-layer (attention and the MLP) reads a detached copy of its input. The
    forward pass is unchanged; backward, no gradient flows from a branch into the stream it read, so the
    stream's gradient reaches each layer along the residual path only. ``stream``: also return, as a
    second array, (seeds, L + 1) ‖∂loss/∂x_l‖ of the residual stream x_0 (the embeddings) … x_L.
    """
    rows, stream_rows = [], []
    for seed in seeds:
        model = make_model(seed)
        xs: list = []
        if detach_inputs:
            for b in model.blocks:
                for sub in (b.attn, b.mlp):
                    sub.register_forward_pre_hook(lambda m, a: (a[0].detach(),) + tuple(a[1:]))
        if stream:
            model.blocks[0].register_forward_pre_hook(lambda m, a: xs.append(a[0]))
            for b in model.blocks:
                b.register_forward_hook(lambda m, a, y: xs.append(y))
        g = torch.Generator().manual_seed(10_000 + seed)
        idx = torch.randint(vocab_size, (batch, block_size + 1), generator=g)
        _, loss = model(idx[:, :-1], idx[:, 1:])
        for x in xs:
            x.retain_grad()
        loss.backward()
        rows.append([math.sqrt(sum(float(p.grad.square().sum()) for p in b.mlp.parameters() if p.dim() == 2))
                     for b in model.blocks])
        stream_rows.append([float(x.grad.norm()) for x in xs])
    return (np.array(rows), np.array(stream_rows)) if stream else np.array(rows)


# ------------------------------------------------------------------ 2. residual stream at init


@cache.memo
@one_thread()
def stream_norms(n_layer: int = STREAM["n_layer"], d_model: int = STREAM["d_model"], n_head: int = STREAM["n_head"],
                 tokens: int = STREAM["tokens"], batch: int = STREAM["batch"], seeds: tuple = STREAM["seeds"],
                 norm: str = "layernorm") -> dict:
    """E‖x_l‖² after each layer at initialization, input entries i.i.d. N(0, 1).

    This is the setting of Lemma 2 (Xiong et al. 2020): weights N(0, 1/fan_in),
    zero biases, norm gain 1, ReLU FFN, E‖x_0‖² = d. For Post-LN the lemma is
    about the sum *before* the layer's last norm, x + FFN(x); its output is
    normalized, so its squared norm is d exactly. Means over tokens, batch and
    seeds; per-seed means are kept for the spread.
    """
    cfg = dict(n_layer=n_layer, d_model=d_model, n_head=n_head, vocab_size=2, block_size=tokens, norm=norm)
    res = {"layers": np.arange(0, n_layer + 1), "d": d_model, "seeds": tuple(seeds), "norm": norm}
    for placement in ("post", "pre"):
        per_seed, pre_norm_sum = [], []
        for seed in seeds:
            model = _model(placement, seed, **cfg)
            sums = []
            if placement == "post":  # the input of ln_2 is x + FFN(x), Lemma 2's x^{post,5}
                hooks = [b.ln_2.register_forward_pre_hook(lambda m, a: sums.append(a[0].detach())) for b in model.blocks]
            x0 = torch.randn(batch, tokens, d_model, generator=torch.Generator().manual_seed(20_000 + seed))
            with torch.no_grad():
                xs = model.stream(x0)
            per_seed.append([float(x.square().sum(-1).mean()) for x in xs])
            if placement == "post":
                for h in hooks:
                    h.remove()
                pre_norm_sum.append([float(s.square().sum(-1).mean()) for s in sums])
        res[placement] = np.array(per_seed)  # (seeds, L+1): E‖x_l‖² per seed
        if placement == "post":
            res["post_sum"] = np.array(pre_norm_sum)  # (seeds, L): E‖x + FFN(x)‖² per seed, layers 1..L
    return res


def lemma2_bounds(d: int, layers) -> dict:
    """Lemma 2's values of E‖x‖² at initialization: Post-LN 3d/2; Pre-LN between (1 + l/2)d and (1 + 3l/2)d."""
    ls = np.asarray(layers, dtype=float)
    return {"post": 1.5 * d * np.ones_like(ls), "pre_lo": (1 + ls / 2) * d, "pre_hi": (1 + 1.5 * ls) * d}


# ------------------------------------------------------------------ 3. training with / without warmup


@dataclass(frozen=True)
class TrainSetting:
    n_layer: int = 12
    d_model: int = 32
    n_head: int = 2
    vocab_size: int = 32
    block_size: int = 16
    batch: int = 16
    steps: int = 150
    lr: float = 1e-3
    warmup: int = 40  # linear warmup steps for the "with warmup" runs
    successors: int = 3  # each token of the synthetic language has this many possible next tokens
    seed: int = 0


def markov_data(s: TrainSetting, n_seq: int) -> tuple[torch.Tensor, float]:
    """Sequences from a fixed random Markov chain, and the lowest loss a model can reach on them (nats).

    Each token may be followed by ``s.successors`` tokens, with random
    probabilities: a language with real structure whose best possible
    next-token loss is known exactly, so the curves have a floor.
    """
    rng = np.random.default_rng(s.seed)
    V = s.vocab_size
    P = np.zeros((V, V))
    for a in range(V):
        nxt = rng.choice(V, size=s.successors, replace=False)
        P[a, nxt] = rng.dirichlet(np.ones(s.successors))
    # The best possible loss: at position t the model can at most know the
    # previous token, so the floor is the mean over t of Σ_a q_{t-1}(a) H(P[a]),
    # with q_0 uniform (how sequences start) and q_t = q_{t-1} P.
    row_h = -np.sum(P * np.log(np.where(P > 0, P, 1.0)), axis=1)
    q, floors = np.full(V, 1.0 / V), []
    for _ in range(s.block_size):
        floors.append(float(q @ row_h))
        q = q @ P
    entropy = float(np.mean(floors))
    seqs = np.empty((n_seq, s.block_size + 1), dtype=np.int64)
    seqs[:, 0] = rng.integers(V, size=n_seq)
    cdf = np.cumsum(P, axis=1)
    for t in range(1, s.block_size + 1):
        u = rng.random(n_seq)
        seqs[:, t] = np.minimum((u[:, None] > cdf[seqs[:, t - 1]]).sum(axis=1), V - 1)
    return torch.from_numpy(seqs), entropy


def _train(s: TrainSetting, placement: str, warmup: int, data: torch.Tensor) -> np.ndarray:
    model = _model(placement, s.seed, n_layer=s.n_layer, d_model=s.d_model, n_head=s.n_head,
                   vocab_size=s.vocab_size, block_size=s.block_size)
    opt = torch.optim.Adam(model.parameters(), lr=s.lr, betas=(0.9, 0.98), foreach=True)  # Adam, as in Xiong et al.
    g = torch.Generator().manual_seed(s.seed + 1)  # the same batches for every run
    losses = []
    for step in range(s.steps):
        for group in opt.param_groups:  # linear warmup, then constant
            group["lr"] = s.lr * min(1.0, (step + 1) / warmup) if warmup else s.lr
        batch = data[torch.randint(len(data), (s.batch,), generator=g)]
        _, loss = model(batch[:, :-1], batch[:, 1:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return np.array(losses)


@cache.memo
@one_thread()
def warmup_runs(setting: TrainSetting = TrainSetting()) -> dict:
    """Loss curves of Post-LN and Pre-LN, each with and without warmup: same data, same seed, Adam.

    Returns ``{"post/warmup": losses, "post/none": ..., "pre/warmup": ...,
    "pre/none": ..., "entropy": floor, "uniform": ln V, "setting": {...}}``.
    """
    if not isinstance(setting, TrainSetting):
        raise TypeError(f"setting must be a TrainSetting, got {type(setting).__name__}")
    data, entropy = markov_data(setting, n_seq=2048)
    out = {"entropy": entropy, "uniform": math.log(setting.vocab_size), "setting": asdict(setting)}
    for placement in ("post", "pre"):
        for name, warm in (("warmup", setting.warmup), ("none", 0)):
            out[f"{placement}/{name}"] = _train(setting, placement, warm, data)
    return out
