"""Values of the K3 §2.3.1 page (normalized LatentMoE): ‖u‖ spread and the toy training run."""

from __future__ import annotations

import math

import numpy as np

from . import fmt, value


def _exp():
    """The experiment module, imported when a value is computed (it imports torch; listing values must not)."""
    from ..experiments import moe

    return moe


def _base():
    return _exp().u_spread()["base_run"]


def _sweep(name):
    sw = _exp().u_spread()["sweeps"][name]
    return dict(zip(sw["values"], sw["runs"]))


@value("moe.base.n")
def _n(lang):
    return str(_exp().BASE["n_experts"])


@value("moe.base.k")
def _k(lang):
    return str(_exp().BASE["top_k"])


@value("moe.base.tau")
def _tau(lang):
    return f"{_exp().BASE['temperature']:g}"


@value("moe.base.sigma")
def _sigma(lang):
    return f"{_exp().BASE_SPREAD:g}"


@value("moe.d")
def _d(lang):
    return str(_exp().BASE["d_model"])


@value("moe.l")
def _l(lang):
    return str(_exp().BASE["d_latent"])


@value("moe.sqrt_l")
def _sqrt_l(lang):
    return fmt(math.sqrt(_exp().BASE["d_latent"]), 2)


@value("moe.n_tokens")
def _n_tokens(lang):
    return str(_exp().u_spread()["n_tokens"])


# Coefficients of variation at the base point (K3-like sparsity, scaled down).
for _key in ("cv_u", "cv_u_normed", "cv_routed_raw", "cv_routed_norm", "cv_shared", "cv_z", "cv_u_over_z2"):
    value(f"moe.{_key}")(lambda lang, _k=_key: fmt(_base()[_k], 3 if _k == "cv_u_normed" else 2))


@value("moe.p99_p1")
def _p99_p1(lang):
    return fmt(_base()["max_over_min_u"], 0)


@value("moe.ratio_raw")
def _ratio_raw(lang):
    return fmt(_base()["ratio_raw"], 2)


@value("moe.ratio_norm")
def _ratio_norm(lang):
    return fmt(_base()["ratio_norm"], 1)


def _range(key):
    vals = [run[key] for sw in _exp().u_spread()["sweeps"].values() for run in sw["runs"]]
    return f"{fmt(min(vals), 2)}–{fmt(max(vals), 2)}"


@value("moe.cv_u_range")
def _cv_u_range(lang):
    return _range("cv_u")


@value("moe.cv_routed_norm_range")
def _cv_rn_range(lang):
    return _range("cv_routed_norm")


@value("moe.cv_u_sigma0")
def _cv_sigma0(lang):
    return fmt(_sweep("expert_spread")[0.0]["cv_u"], 2)


@value("moe.cv_u_sigma1")
def _cv_sigma1(lang):
    return fmt(_sweep("expert_spread")[1.0]["cv_u"], 2)


@value("moe.cv_u_tau_hot")
def _cv_tau_hot(lang):
    s = _sweep("temperature")
    return fmt(s[max(s)]["cv_u"], 2)


@value("moe.cv_u_tau_cold")
def _cv_tau_cold(lang):
    s = _sweep("temperature")
    return fmt(s[min(s)]["cv_u"], 2)


@value("moe.tau_hot")
def _tau_hot(lang):
    return f"{max(_sweep('temperature')):g}"


@value("moe.tau_cold")
def _tau_cold(lang):
    return f"{min(_sweep('temperature')):g}"


@value("moe.cv_u_k1")
def _cv_k1(lang):
    return fmt(_sweep("top_k")[1]["cv_u"], 2)


@value("moe.cv_u_k16")
def _cv_k16(lang):
    return fmt(_sweep("top_k")[16]["cv_u"], 2)


# ----------------------------------------------------------------------------- training


def _final(lr, normalize):
    r = _exp().toy_training()
    return np.array([x["val"][-1] for x in r["runs"] if x["lr"] == lr and x["normalize"] == normalize])


def _lr(i):
    return _exp().toy_training()["lrs"][i]


@value("moe.train.steps")
def _steps(lang):
    return str(_exp().toy_training()["cfg"]["steps"])


@value("moe.train.n_seeds")
def _seeds(lang):
    return str(len(_exp().toy_training()["seeds"]))


@value("moe.train.params")
def _params(lang):
    n = _exp().toy_training()["n_params"]
    return f"{n:,}"


@value("moe.train.predict_mean")
def _predict_mean(lang):
    return fmt(_exp().toy_training()["predict_mean_mse"], 3)


for _i in (0, 1):
    value(f"moe.train.lr{_i}")(lambda lang, i=_i: f"{_lr(i):g}")
    value(f"moe.train.off{_i}")(lambda lang, i=_i: fmt(float(_final(_lr(i), False).mean()), 4))
    value(f"moe.train.on{_i}")(lambda lang, i=_i: fmt(float(_final(_lr(i), True).mean()), 4))

    def _change(lang, i=_i):
        off, on = _final(_lr(i), False).mean(), _final(_lr(i), True).mean()
        return fmt(100 * (on - off) / off, 1) + "%"

    def _wins(lang, i=_i):
        w = int((_final(_lr(i), True) < _final(_lr(i), False)).sum())
        n = len(_final(_lr(i), True))
        return f"{n} 个种子中的 {w} 个" if lang == "zh" else f"{w} of {n} seeds"

    value(f"moe.train.change{_i}")(_change)
    value(f"moe.train.wins{_i}")(_wins)
