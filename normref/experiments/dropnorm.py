"""The placement lab, extended: Pre-LN with its norm replaced (DyT, Derf) or rescaled (LayerNorm Scaling).

The setting is the placement lab's, unchanged (:data:`normref.experiments.placement.FULL`:
the same character-level corpus, model size, steps, learning rates, warmup
arms, seeds and batches), so every arm here sits beside the lab's Pre-LN runs,
which are not re-trained: :func:`baseline_runs` takes them from the committed
``placement-cpu.json`` (and ``tests/test_dropnorm.py`` checks that this module's
training loop reproduces them).

The arms (:data:`ARMS`), each a Pre-LN stack with one change:

* ``dyt0.5``, ``dyt1``, ``dyt2``: every LayerNorm (the two per block and the
  final one) replaced by DyT, γ ⊙ tanh(α·x) + β, with α initialized to 0.5 (the
  official code's default), 1 (the default of its LLaMA code's config) or 2
  (beyond both: their LLaMA table gives narrower models larger α0, and ours is
  32 wide). DyT (Zhu et al. 2025, arXiv 2503.10622).
* ``derf``: every LayerNorm replaced by Derf, γ ⊙ erf(α·x + s) + β, α0 = 0.5 and
  s0 = 0, the official defaults (Chen et al. 2025, arXiv 2512.10938).
* ``lns``: LayerNorm Scaling, both norms of block ℓ multiplied by 1/√ℓ
  (Sun et al. 2025, arXiv 2502.05795).

What neither paper's code does here: their LLM variants multiply the embeddings
by a learnable scalar initialized to √d; our embeddings already enter with
unit-variance entries (E‖x_0‖² = d), which is what that scalar restores, so the
arms keep the lab's embeddings.

Besides training, the report records at initialization, for each arm and for
Pre-LN, the gradient norm of each layer's FFN weights (the placement page's
setting, :data:`normref.experiments.placement.GRAD`) and E‖x_l‖² of the residual
stream after each layer (:data:`normref.experiments.placement.STREAM`).

``python -m normref dropnorm --json normref/results/dropnorm-cpu.json`` runs it
(60 runs, about as long as the placement lab's Pre-LN share; see the file's
``seconds``); the file is committed, and a test re-runs the first steps of a
few runs against it.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from ..blocks import TinyConfig, TinyTransformer
from ..usage import positive_int, subset_of
from . import one_thread
from .placement import (FULL, GRAD, STREAM, Corpus, LMSetting, _round, corpus_of, final_loss, finish, setting_of,
                        train)

__all__ = ["ARMS", "ARM_NAMES", "arm_name", "arm_config", "model", "train_run", "run_lab", "at_init", "baseline_runs",
           "summarize", "format_summary", "add_arguments", "run"]

SCHEMA = "normref.dropnorm/1"

# Arm -> the TinyConfig fields it changes in a Pre-LN stack of the lab's norm (LayerNorm).
ARMS = {
    "pre": {},
    "dyt0.5": {"norm": "dyt", "alpha_init": 0.5},
    "dyt1": {"norm": "dyt", "alpha_init": 1.0},
    "dyt2": {"norm": "dyt", "alpha_init": 2.0},
    "derf": {"norm": "derf", "alpha_init": 0.5, "shift_init": 0.0},
    "lns": {"ln_scaling": True},
}
# The arms this module trains; "pre" comes from the placement lab's committed runs.
TRAINED = tuple(a for a in ARMS if a != "pre")

# The arms' names in English; arm_name gives them in a page's language (the Chinese is in normref/labels.yml).
ARM_NAMES = {
    "pre": "Pre-LN",
    "dyt0.5": "DyT (α₀ = 0.5)",
    "dyt1": "DyT (α₀ = 1)",
    "dyt2": "DyT (α₀ = 2)",
    "derf": "Derf (α₀ = 0.5)",
    "lns": "Pre-LN + LayerNorm Scaling",
}


def arm_name(arm: str, lang: str = "en") -> str:
    """How the page's table names an arm in ``lang``: "DyT (α₀ = 0.5)" (its Chinese from normref/labels.yml)."""
    from ..labels import label

    return label(__name__, lang, ARM_NAMES[_check_arm(arm)], {})


def _check_arm(arm) -> str:
    if not isinstance(arm, str):
        raise TypeError(f"arm must be a string such as 'dyt1', got {type(arm).__name__}")
    if arm not in ARMS:
        raise ValueError(f"arm must be one of {tuple(ARMS)}, got {arm!r}")
    return arm


def arm_config(arm: str, norm: str = "layernorm", **kw) -> TinyConfig:
    """The TinyConfig of an arm: Pre-LN with ``norm``, then the arm's changes, then ``kw`` (sizes)."""
    return TinyConfig(placement="pre", **{"norm": norm, **ARMS[_check_arm(arm)], **kw})


def model(arm: str, seed: int, norm: str = "layernorm", **kw) -> TinyTransformer:
    """A fresh model of the arm, initialized by ``torch.manual_seed(seed)`` (the placement lab's rule)."""
    cfg = arm_config(arm, norm, **kw)
    torch.manual_seed(seed)
    return TinyTransformer(cfg)


@one_thread()
def train_run(corpus: Corpus, s: LMSetting, arm: str, lr: float, warmup: int, seed: int,
              steps: int | None = None) -> dict:
    """One run, exactly as :func:`normref.experiments.placement.train_run` trains a variant (its loop,
    :func:`normref.experiments.placement.train`: same batches, held-out set, schedule, checkpoints and
    divergence rule), for an arm of :data:`ARMS`."""
    m = model(arm, seed, s.norm, n_layer=s.n_layer, d_model=s.d_model, n_head=s.n_head,
              vocab_size=len(corpus.vocab), block_size=s.block_size)
    record = train(m, corpus, s, lr, warmup, seed, steps)
    alphas = [_round(p.item(), 4) for n, p in m.named_parameters() if n.endswith(".alpha")]
    return {"arm": arm, "lr": lr, "warmup": warmup, "seed": seed, **record, "alpha_end": alphas}


@one_thread()
def at_init(arms=tuple(ARMS), grad: dict = GRAD, stream: dict = STREAM) -> dict:
    """Per arm, at initialization: ``grad`` (seeds, L) ‖∂loss/∂W‖_F of each layer's FFN matrices (the
    placement page's gradient setting), and ``stream`` {depth: (seeds, L + 1) E‖x_l‖²} of the residual
    stream for N(0, 1) inputs (its stream setting). Plain lists, for JSON."""
    from .toll_booth import ffn_grad_rows

    out = {}
    for arm in arms:
        _check_arm(arm)
        kw = dict(n_layer=grad["n_layer"], d_model=grad["d_model"], n_head=grad["n_head"],
                  vocab_size=grad["vocab_size"], block_size=grad["block_size"])
        rows = ffn_grad_rows(lambda seed: model(arm, seed, **kw), grad["seeds"], grad["vocab_size"],
                             grad["block_size"], grad["batch"])
        streams = {}
        for depth in stream["depths"]:
            per_seed = []
            for seed in stream["seeds"]:
                m = model(arm, seed, n_layer=depth, d_model=stream["d_model"], n_head=stream["n_head"],
                          vocab_size=2, block_size=stream["tokens"])
                x0 = torch.randn(stream["batch"], stream["tokens"], stream["d_model"],
                                 generator=torch.Generator().manual_seed(20_000 + seed))
                with torch.no_grad():
                    per_seed.append([round(float(x.square().sum(-1).mean()), 4) for x in m.stream(x0)])
            streams[str(depth)] = per_seed
        out[arm] = {"grad": np.round(rows, 6).tolist(), "stream": streams}
    return {"grad_setting": {k: list(v) if isinstance(v, tuple) else v for k, v in grad.items()},
            "stream_setting": {k: list(v) if isinstance(v, tuple) else v for k, v in stream.items()},
            "arms": out}


def run_lab(s: LMSetting = FULL, corpus: Corpus | None = None, arms=TRAINED, log=print) -> dict:
    """Every run of every arm in ``arms`` (lab order: arm, learning rate, warmup, seed), and the at-init
    measurements of those arms and Pre-LN; a report with the machine, date and setting."""
    from ..bench import machine_info

    if not isinstance(s, LMSetting):
        raise TypeError(f"setting must be an LMSetting, got {type(s).__name__}")
    arms = tuple(_check_arm(a) for a in arms)
    if not arms:
        raise ValueError("arms must name at least one arm")
    if corpus is None:  # the placement lab's committed corpus, so its Pre-LN runs are the baseline
        from ..results.placement import placement_cpu

        corpus = corpus_of(placement_cpu())
    machine = machine_info(threads=1)
    machine["processes"] = 1
    todo = [dict(arm=a, lr=lr, warmup=w, seed=sd) for a in arms for lr in s.lrs for w in (0, s.warmup)
            for sd in s.seeds]
    t0 = time.perf_counter()
    results = []
    for i, r in enumerate(todo, 1):
        rec = train_run(corpus, s, **r)
        results.append(rec)
        last = rec["checks"][-1]["val_loss"]
        log(f"[{i}/{len(todo)}] {rec['arm']:<7} lr={rec['lr']:g} warmup={rec['warmup']:<3} seed={rec['seed']} "
            f"held-out loss {'diverged at step ' + str(rec['diverged_at']) if rec['diverged_at'] else f'{last:.3f}'}"
            f" ({rec['seconds']:.1f} s)")
    train_seconds = round(time.perf_counter() - t0, 1)
    init = at_init(("pre",) + tuple(a for a in arms if a != "pre"))
    import os

    machine["load_average_at_end"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else []
    setting = asdict(s)
    return {"schema": SCHEMA, "machine": machine, "seconds": round(time.perf_counter() - t0, 1),
            "train_seconds": train_seconds, "setting": setting, "arms": list(arms),
            "arm_config": {a: ARMS[a] for a in arms},
            "corpus": {k: v for k, v in corpus.describe().items() if k != "text"},
            "uniform_loss": math.log(len(corpus.vocab)), "runs": results, "at_init": init}


# ------------------------------------------------------------------ reading a report


def baseline_runs(placement_report: dict, setting: dict) -> list[dict]:
    """The placement lab's Pre-LN runs, as this lab's "pre" arm; ValueError if its setting differs."""
    theirs = dict(placement_report["setting"])
    ours = dict(setting)
    for d in (theirs, ours):
        d.pop("variants", None)
    if json.loads(json.dumps(theirs)) != json.loads(json.dumps(ours)):
        raise ValueError("the placement report's setting differs from this lab's: its Pre-LN runs are no baseline")
    return [{**r, "arm": "pre"} for r in placement_report["runs"] if r["variant"] == "pre"]


def summarize(report: dict, placement_report: dict | None = None) -> dict:
    """Per (arm, learning rate, warmup): held-out loss at the end (mean, min, max over the seeds that did not
    diverge), diverged and stalled seeds (stalled: ended no better than the unigram loss), as
    :func:`normref.experiments.placement.summarize` counts them. With ``placement_report``, the "pre" arm
    too, from its Pre-LN runs."""
    s = report["setting"]
    floor = report["corpus"]["unigram_loss"]
    runs = list(report["runs"])
    arms = list(report["arms"])
    if placement_report is not None:
        runs = baseline_runs(placement_report, s) + runs
        arms = ["pre"] + [a for a in arms if a != "pre"]
    out = {}
    for a in arms:
        for lr in s["lrs"]:
            for w in (0, s["warmup"]):
                rs = [r for r in runs if (r["arm"], r["lr"], r["warmup"]) == (a, lr, w)]
                finals = np.array([final_loss(r) for r in rs])
                ok = finals[np.isfinite(finals)]
                out[(a, lr, w)] = {
                    "seeds": len(rs),
                    "diverged": int(sum(1 for r in rs if r["diverged_at"])),
                    "stalled": int(np.sum(ok >= floor)),
                    "final": float(ok.mean()) if len(ok) else float("nan"),
                    "final_min": float(ok.min()) if len(ok) else float("nan"),
                    "final_max": float(ok.max()) if len(ok) else float("nan"),
                }
    return out


def init_profile(report: dict, arm: str) -> dict:
    """At init, for an arm: the seed-mean FFN gradient per layer, its layer-1 ÷ last ratio, and the stream's
    growth √(E‖x_L‖²/E‖x_0‖²) at each recorded depth."""
    r = report["at_init"]["arms"][_check_arm(arm)]
    g = np.asarray(r["grad"], dtype=float).mean(axis=0)
    growth = {}
    for depth, rows in r["stream"].items():
        m = np.asarray(rows, dtype=float).mean(axis=0)
        growth[int(depth)] = float(math.sqrt(m[-1] / m[0]))
    return {"grad": g, "first_over_last": float(g[0] / g[-1]), "growth": growth}


def format_summary(report: dict, placement_report: dict | None = None) -> str:
    s, summ = report["setting"], summarize(report, placement_report)
    cols = [(lr, w) for lr in s["lrs"] for w in (0, s["warmup"])]
    arms = sorted({k[0] for k in summ}, key=list(ARMS).index)
    lines = [f"held-out loss after {s['steps']} steps (unigram {report['corpus']['unigram_loss']:.3f}); "
             f"(diverged, stalled) of {len(s['seeds'])} seeds",
             "arm     " + "".join(f"lr {lr:g} {'warmup' if w else 'no warmup':<12}" for lr, w in cols)]
    for a in arms:
        cells = []
        for lr, w in cols:
            e = summ[(a, lr, w)]
            cells.append(f"{e['final']:.3f} ({e['diverged']},{e['stalled']})".ljust(len(f"lr {lr:g} ") + 12))
        lines.append(f"{a:<8}" + "".join(cells))
    return "\n".join(lines)


# ------------------------------------------------------------------ command line


def add_arguments(p) -> None:
    p.add_argument("--json", type=Path, metavar="PATH",
                   help="write the report as JSON to PATH (the site reads normref/results/dropnorm-cpu.json)")
    p.add_argument("--arms", type=subset_of(ARMS), default=TRAINED,
                   help="comma-separated subset of " + ", ".join(TRAINED))
    p.add_argument("--steps", type=positive_int, help="training steps per run (default: the placement lab's)")


def run(args) -> int:
    s = FULL
    if args.steps is not None:
        s = LMSetting(**{**asdict(s), "steps": args.steps, "warmup": min(s.warmup, args.steps),
                         "eval_every": min(s.eval_every, args.steps)})
    from ..results.placement import placement_cpu

    base = placement_cpu()
    report = run_lab(s, corpus_of(base), arms=args.arms)
    print()
    try:
        baseline_runs(base, report["setting"])
    except ValueError:
        base = None
    print(format_summary(report, base))
    return finish(report, args.json, "1 process")


__all__ += ["setting_of", "corpus_of", "init_profile", "TRAINED"]
