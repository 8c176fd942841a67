"""Why Pre-LN's per-layer gradient falls with depth: a control experiment.

The toll-booth page measures the gradient of each layer's FFN weights at
initialization (:func:`normref.experiments.toll_booth.grad_per_layer`). In
Pre-LN it falls slowly with the layer index. The LN at the entrance of a
branch is *not* on the path from the loss to that branch's own weights, so its
Jacobian cannot be the cause. What differs between layers is the gradient of
the residual stream, ∂loss/∂x_l:

    ∂loss/∂x_l = ∂loss/∂x_L + Σ_{k ≥ l} (terms through branch k and its entrance LN)

so the stream gradient entering an early layer collects a term from every
later branch, and an early layer's weights see a larger gradient. (The deep
branches' entrance LNs have small Jacobians, because the stream they read is
long: that keeps those extra terms small and the fall mild.)

The control: the same models, seeds and data, with every branch input
detached (``LN(x.detach())`` at the entrance of attention and of the MLP).
The forward pass is unchanged, but the only way back from the loss to x_l is
the identity path, so ∂loss/∂x_l is the same at every layer. If the
explanation above is right, the per-layer FFN gradient no longer falls.

The detaching is done here with forward pre-hooks on the norms; the blocks in
:mod:`normref.blocks` are not touched.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from .. import cache
from . import one_thread
from .toll_booth import GRAD, _model

__all__ = ["pre_ln_gradient_paths", "detach_branch_inputs"]


def detach_branch_inputs(model) -> list:
    """Make every Pre-LN branch read a detached copy of the stream; returns the hook handles.

    The forward values are unchanged; backward, no gradient flows from a branch
    into the stream it read, so the stream's gradient travels along the
    identity path only.
    """
    handles = []
    for block in model.blocks:
        for norm in (block.ln_1, block.ln_2):
            handles.append(norm.register_forward_pre_hook(lambda mod, args: (args[0].detach(),) + tuple(args[1:])))
    return handles


def _mean_cosine(a: torch.Tensor) -> float:
    """Mean cosine similarity between the rows of a (tokens, d) matrix, over distinct pairs."""
    u = F.normalize(a, dim=-1)
    c = u @ u.T
    n = c.shape[0]
    return float((c.sum() - c.diagonal().sum()) / (n * n - n))


@cache.memo
@one_thread()
def pre_ln_gradient_paths(n_layer: int = GRAD["n_layer"], d_model: int = GRAD["d_model"], n_head: int = GRAD["n_head"],
                          vocab_size: int = GRAD["vocab_size"], block_size: int = GRAD["block_size"],
                          batch: int = GRAD["batch"], seeds: tuple = GRAD["seeds"], norm: str = "layernorm") -> dict:
    """Per-layer gradients of Pre-LN at initialization, as is and with the branch inputs detached.

    The setting (model, seeds, data) is exactly that of ``grad_per_layer``, so
    ``ffn`` equals its ``"pre"`` rows. Returns numpy arrays:

    - ``ffn``, ``ffn_detached``: (seeds, L) ‖∂loss/∂W‖_F of each layer's two FFN matrices;
    - ``stream``, ``stream_detached``: (seeds, L + 1) ‖∂loss/∂x_l‖ of the residual
      stream x_0 … x_L (x_0 = embeddings; x_L enters the final norm);
    - ``ffn_input_cos``: (seeds, L) mean cosine similarity between the tokens'
      FFN inputs (after the entrance LN), over all tokens of the batch: how
      alike the vectors are whose contributions the weight gradient sums.
    """
    if len(seeds) < 1:
        raise ValueError("seeds must name at least one seed")
    out = {"layers": np.arange(1, n_layer + 1), "seeds": tuple(seeds), "norm": norm}
    rows = {k: [] for k in ("ffn", "ffn_detached", "stream", "stream_detached", "ffn_input_cos")}
    for detached in (False, True):
        suffix = "_detached" if detached else ""
        for seed in seeds:
            model = _model("pre", seed, n_layer=n_layer, d_model=d_model, n_head=n_head,
                           vocab_size=vocab_size, block_size=block_size, norm=norm)
            if detached:
                detach_branch_inputs(model)
            ffn_in: list[torch.Tensor] = []
            if not detached:
                for b in model.blocks:
                    b.ln_2.register_forward_hook(lambda mod, args, y: ffn_in.append(y.detach()))
            g = torch.Generator().manual_seed(10_000 + seed)  # the same batches as grad_per_layer
            idx = torch.randint(vocab_size, (batch, block_size + 1), generator=g)
            xs = [model.embed(idx[:, :-1])]
            for block in model.blocks:
                xs.append(block(xs[-1]))
            for x in xs:
                x.retain_grad()
            logits = model.head(model.ln_f(xs[-1]))
            loss = F.cross_entropy(logits.reshape(-1, vocab_size), idx[:, 1:].reshape(-1))
            loss.backward()
            rows["ffn" + suffix].append(
                [math.sqrt(sum(float(p.grad.square().sum()) for p in b.mlp.parameters() if p.dim() == 2))
                 for b in model.blocks])
            rows["stream" + suffix].append([float(x.grad.norm()) for x in xs])
            if not detached:
                rows["ffn_input_cos"].append([_mean_cosine(a.reshape(-1, d_model)) for a in ffn_in])
    out.update({k: np.array(v) for k, v in rows.items()})
    return out
