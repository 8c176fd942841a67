"""Values of the K3 §2.3.1 page (normalized LatentMoE): ‖u‖ spread and the toy training run."""

from __future__ import annotations

import math

import numpy as np

from . import count, fmt, register
from ..labels import labels

# The cached experiments this module reads (normref.experiments.declared): a build runs each once, first.
EXPERIMENTS = (
    'normref.experiments.moe:u_spread()',
    'normref.experiments.moe:toy_training()',
)


t = labels(__name__)  # the Chinese is in normref/labels.yml


def _exp():
    """The experiment module, imported when a value is computed (it imports torch; listing values must not)."""
    from ..experiments import moe

    return moe


def _setting(key: str):
    """A setting of the scaled-down K3 shape the experiments use (d_model, d_latent, n_experts, top_k, ...)."""
    return _exp().BASE[key]


def _base_run() -> dict:
    """The ‖u‖ statistics at the base point (K3-like sparsity, scaled down)."""
    return _exp().u_spread()["base_run"]


def _sweep(name: str) -> dict:
    """{swept value: run} of one sweep around the base point ("expert_spread", "temperature", "top_k")."""
    sw = _exp().u_spread()["sweeps"][name]
    return dict(zip(sw["values"], sw["runs"]))


def _range_over_sweeps(key: str) -> str:
    vals = [run[key] for sw in _exp().u_spread()["sweeps"].values() for run in sw["runs"]]
    return f"{fmt(min(vals), 2)}–{fmt(max(vals), 2)}"


def _cv_u_at_temperature(pick) -> str:
    s = _sweep("temperature")
    return fmt(s[pick(s)]["cv_u"], 2)


# ---- the toy training run: final validation losses per learning rate, without and with the norm


def _training() -> dict:
    return _exp().toy_training()


def _final_losses(lr_index: int, normalize: bool) -> np.ndarray:
    """Each seed's last validation loss at the learning rate ``lrs[lr_index]``, without or with the RMSNorm."""
    r = _training()
    lr = r["lrs"][lr_index]
    return np.array([x["val"][-1] for x in r["runs"] if x["lr"] == lr and x["normalize"] == normalize])


def _loss_change(lr_index: int) -> str:
    """How much the RMSNorm changes the mean final loss, in percent (negative: it helps)."""
    off, on = _final_losses(lr_index, False).mean(), _final_losses(lr_index, True).mean()
    return fmt(100 * (on - off) / off, 1) + "%"


def _seeds_won(lr_index: int, lang: str) -> str:
    """In how many seeds the RMSNorm gives the lower final loss."""
    on, off = _final_losses(lr_index, True), _final_losses(lr_index, False)
    w, n = int((on < off).sum()), len(on)
    return t(lang, "{{w}} of {{n}} seeds", w=w, n=n)


def _training_values(i: int) -> dict:
    return {
        f"moe.train.lr{i}": lambda: f"{_training()['lrs'][i]:g}",
        f"moe.train.off{i}": lambda: fmt(float(_final_losses(i, False).mean()), 4),
        f"moe.train.on{i}": lambda: fmt(float(_final_losses(i, True).mean()), 4),
        f"moe.train.change{i}": lambda: _loss_change(i),
        f"moe.train.wins{i}": lambda lang: _seeds_won(i, lang),
    }


register({
    "moe.base.n_experts": lambda: str(_setting("n_experts")),
    "moe.base.top_k": lambda: str(_setting("top_k")),
    "moe.base.tau": lambda: f"{_setting('temperature'):g}",
    "moe.base.sigma": lambda: f"{_exp().BASE_SPREAD:g}",
    "moe.d_model": lambda: str(_setting("d_model")),
    "moe.d_latent": lambda: str(_setting("d_latent")),
    "moe.sqrt_d_latent": lambda: fmt(math.sqrt(_setting("d_latent")), 2),
    "moe.n_tokens": lambda: str(_exp().u_spread()["n_tokens"]),
    # Coefficients of variation at the base point.
    "moe.cv_u": lambda: fmt(_base_run()["cv_u"], 2),
    "moe.cv_u_normed": lambda: fmt(_base_run()["cv_u_normed"], 3),
    "moe.cv_routed_raw": lambda: fmt(_base_run()["cv_routed_raw"], 2),
    "moe.cv_routed_norm": lambda: fmt(_base_run()["cv_routed_norm"], 2),
    "moe.cv_shared": lambda: fmt(_base_run()["cv_shared"], 2),
    "moe.cv_z": lambda: fmt(_base_run()["cv_z"], 2),
    "moe.cv_u_over_z2": lambda: fmt(_base_run()["cv_u_over_z2"], 2),
    "moe.u_p99_over_p1": lambda: fmt(_base_run()["max_over_min_u"], 0),
    "moe.ratio_raw": lambda: fmt(_base_run()["ratio_raw"], 2),
    "moe.ratio_norm": lambda: fmt(_base_run()["ratio_norm"], 1),
    # Over the sweeps.
    "moe.cv_u_range": lambda: _range_over_sweeps("cv_u"),
    "moe.cv_routed_norm_range": lambda: _range_over_sweeps("cv_routed_norm"),
    "moe.cv_u_sigma0": lambda: fmt(_sweep("expert_spread")[0.0]["cv_u"], 2),
    "moe.cv_u_sigma1": lambda: fmt(_sweep("expert_spread")[1.0]["cv_u"], 2),
    "moe.cv_u_tau_hot": lambda: _cv_u_at_temperature(max),
    "moe.cv_u_tau_cold": lambda: _cv_u_at_temperature(min),
    "moe.tau_hot": lambda: f"{max(_sweep('temperature')):g}",
    "moe.tau_cold": lambda: f"{min(_sweep('temperature')):g}",
    "moe.cv_u_k1": lambda: fmt(_sweep("top_k")[1]["cv_u"], 2),
    "moe.cv_u_k16": lambda: fmt(_sweep("top_k")[16]["cv_u"], 2),
    # The toy training run.
    "moe.train.steps": lambda: str(_training()["cfg"]["steps"]),
    "moe.train.n_seeds": lambda: str(len(_training()["seeds"])),
    "moe.train.params": lambda: count(int(_training()['n_params'])),
    "moe.train.predict_mean": lambda: fmt(_training()["predict_mean_mse"], 3),
    **_training_values(0),
    **_training_values(1),
})
