"""What the benchmark times: every implementation of the two norms, and the copy they are measured against.

``FAMILIES`` in the order the tables show them; :func:`impls` builds the
callables ``fn(x, w, b)`` for one shape; :func:`impl_name` is what a table calls
each one.
"""

from __future__ import annotations

from typing import Callable

import torch
import torch.nn.functional as F

__all__ = ["FAMILIES", "impls", "impl_name", "composed_rms", "composed_ln"]

FAMILIES = ("copy", "composed", "functional", "module", "compiled", "normref")


def composed_rms(x, w, b, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def composed_ln(x, w, b, eps):
    mu = x.mean(-1, keepdim=True)
    xc = x - mu
    return xc * torch.rsqrt(xc.pow(2).mean(-1, keepdim=True) + eps) * w + b


def impls(d: int, w, b, eps: float, compiled: dict) -> list[tuple[str, str, Callable]]:
    """(family, norm, fn(x, w, b)) for every implementation. norm is rms, ln or copy."""
    import normref.nn as nnr

    # The modules share this shape's parameters, so every implementation computes the same thing.
    def param(p):
        return p if isinstance(p, torch.nn.Parameter) else torch.nn.Parameter(p, requires_grad=False)

    rms_mod = torch.nn.RMSNorm(d, eps=eps, device=w.device, dtype=w.dtype)
    ln_mod = torch.nn.LayerNorm(d, eps=eps, device=w.device, dtype=w.dtype)
    rms_mod.weight, ln_mod.weight, ln_mod.bias = param(w), param(w), param(b)

    out = [
        ("copy", "copy", lambda x, w, b: x.clone()),
        ("composed", "rms", lambda x, w, b: composed_rms(x, w, b, eps)),
        ("composed", "ln", lambda x, w, b: composed_ln(x, w, b, eps)),
        ("functional", "rms", lambda x, w, b: F.rms_norm(x, (d,), w, eps)),
        ("functional", "ln", lambda x, w, b: F.layer_norm(x, (d,), w, b, eps)),
        ("module", "rms", lambda x, w, b: rms_mod(x)),
        ("module", "ln", lambda x, w, b: ln_mod(x)),
        ("normref", "rms", lambda x, w, b: nnr.rms_norm(x, w, eps)),
        ("normref", "ln", lambda x, w, b: nnr.layer_norm(x, w, b, eps)),
    ]
    if compiled:
        out += [
            ("compiled", "rms", lambda x, w, b: compiled["rms"](x, w, b, eps)),
            ("compiled", "ln", lambda x, w, b: compiled["ln"](x, w, b, eps)),
        ]
    return out


def impl_name(family: str, norm: str) -> str:
    return {
        ("copy", "copy"): "x.clone()",
        ("composed", "rms"): "composed RMSNorm", ("composed", "ln"): "composed LayerNorm",
        ("functional", "rms"): "F.rms_norm", ("functional", "ln"): "F.layer_norm",
        ("module", "rms"): "torch.nn.RMSNorm", ("module", "ln"): "torch.nn.LayerNorm",
        ("compiled", "rms"): "compiled RMSNorm", ("compiled", "ln"): "compiled LayerNorm",
        ("normref", "rms"): "normref rms_norm", ("normref", "ln"): "normref layer_norm",
    }[(family, norm)]
