"""The placement lab: every norm placement of :mod:`normref.blocks`, measured side by side.

Two kinds of measurement, with two lives:

* **At initialization** (cheap, deterministic, run at build time and cached
  like the toll-booth experiments): ``grad_per_layer``, the gradient norm of
  each layer's FFN weights over several seeds (the toll-booth page's setting,
  so its Post-LN and Pre-LN curves are the same numbers), and
  ``stream_lengths``, E‖x_l‖² of the residual stream after each layer, for a
  12- and a 48-layer stack (Lemma 2 of Xiong et al. 2020 bounds Pre-LN's).
* **Training** (minutes, so not at build time): a small character-level
  language model trained on the site's own English pages, for every variant,
  at two learning rates, with and without warmup, over several seeds. It
  records the training loss at every step, and at a few checkpoints the
  held-out loss and the largest attention logit of each layer. ``python -m
  normref placement --json normref/results/placement-cpu.json`` runs it and
  writes the results; the file is committed (like ``bench-cpu.json``) with
  the machine, the library versions, the date and the very text it trained
  on, and a test re-runs the first steps of a few runs against it.

A *variant* is a placement of :data:`normref.blocks.PLACEMENTS`, optionally with
QK-norm: ``"pre+qk"`` is Pre-LN with QK-norm, ``"output+qk"`` is OLMo 2's
layout (reordered norm and QK-norm), ``"peri+qk"`` is Gemma 3's.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch

from .. import cache
from ..usage import UsageError, positive_int, subset_of
from ..blocks import PLACEMENTS, TinyConfig, TinyTransformer
from . import one_thread
from .toll_booth import GRAD as _TOLL_GRAD

__all__ = ["VARIANTS", "parse_variant", "GRAD", "STREAM", "grad_per_layer", "grad_paths", "spread",
           "stream_grad_ratio", "stream_lengths", "LMSetting", "FULL",
           "QUICK", "Corpus", "docs_corpus", "train_run", "train", "run_lab", "summarize",
           "add_arguments", "run"]

# The cached experiment this module's own experiments need first (normref.experiments.declared): grad_per_layer
# takes the toll-booth page's Post-LN and Pre-LN gradients (the same setting) rather than measuring them again.
EXPERIMENTS = ("normref.experiments.toll_booth:grad_per_layer()",)

SCHEMA = "normref.placement/1"

# Placements first, then QK-norm on the three layouts real models pair it with.
VARIANTS = ("post", "pre", "peri", "output", "deepnorm", "mixln", "pre+qk", "peri+qk", "output+qk")


# The variants with and without QK-norm, in pairs: what the logit measurement compares.
QK_PAIRS = ("pre", "pre+qk", "peri", "peri+qk", "output", "output+qk")

# The variants' names in English; variant_name gives them in a page's language (the Chinese is in normref/labels.yml).
_NAMES = {"post": "Post-LN", "pre": "Pre-LN", "peri": "Peri-LN", "output": "output norm", "deepnorm": "DeepNorm",
          "mixln": "Mix-LN"}
_MODELS = {"peri+qk": "Gemma 3-style", "output+qk": "OLMo 2-style"}


def variant_name(v: str, lang: str = "en") -> str:
    """How figures and the widget name a variant: "Pre-LN + QK-norm", "output norm + QK-norm (OLMo 2-style)"."""
    from ..labels import labels

    t = labels(__name__)
    placement, qk = parse_variant(v)
    name = t(lang, _NAMES[placement]) + (" + QK-norm" if qk else "")
    if v in _MODELS:
        name = t(lang, "{{name}} ({{model}})", name=name, model=t(lang, _MODELS[v]))
    return name


def parse_variant(v: str) -> tuple[str, bool]:
    """``"output+qk"`` -> ("output", True); ValueError for anything else than a placement with an optional +qk."""
    if not isinstance(v, str):
        raise TypeError(f"variant must be a string such as 'pre' or 'pre+qk', got {type(v).__name__}")
    p, _, rest = v.partition("+")
    if p not in PLACEMENTS or rest not in ("", "qk"):
        raise ValueError(f"variant must be one of {PLACEMENTS}, optionally followed by '+qk'; got {v!r}")
    return p, rest == "qk"


def _model(variant: str, seed: int, **kw) -> TinyTransformer:
    placement, qk = parse_variant(variant)
    torch.manual_seed(seed)
    return TinyTransformer(TinyConfig(placement=placement, qk_norm=qk, **kw))


# ------------------------------------------------------------------ 1. gradients at init

# The toll-booth page's setting, so that Post-LN's and Pre-LN's curves are the same numbers on both pages.
GRAD = dict(_TOLL_GRAD)
STREAM = dict(depths=(12, 48), d_model=64, n_head=4, tokens=32, batch=8, seeds=tuple(range(4)))


def _check_variants(variants) -> tuple:
    variants = tuple(variants)
    if not variants:
        raise ValueError("variants must name at least one variant")
    for v in variants:
        parse_variant(v)
    return variants


@cache.memo
@one_thread()
def grad_per_layer(variants: tuple = VARIANTS, n_layer: int = GRAD["n_layer"], d_model: int = GRAD["d_model"],
                   n_head: int = GRAD["n_head"], vocab_size: int = GRAD["vocab_size"],
                   block_size: int = GRAD["block_size"], batch: int = GRAD["batch"], seeds: tuple = GRAD["seeds"],
                   norm: str = "layernorm") -> dict:
    """‖∂loss/∂W‖_F of each layer's FFN weights (both matrices) at initialization, per variant.

    Next-token cross-entropy on uniformly random tokens, one backward pass, the
    same tokens and seeds for every variant. Returns ``{variant: (seeds,
    layers) array, "layers": 1..L, "seeds": ...}``.
    """
    variants = _check_variants(variants)
    if len(seeds) < 1:
        raise ValueError("seeds must name at least one seed")
    out = {"layers": np.arange(1, n_layer + 1), "seeds": tuple(seeds), "norm": norm, "variants": variants}
    kw = dict(n_layer=n_layer, d_model=d_model, n_head=n_head, vocab_size=vocab_size, block_size=block_size,
              batch=batch, seeds=tuple(seeds), norm=norm)
    if {"post", "pre"} & set(variants):
        # The toll-booth page measures these two the same way: take its (cached) numbers.
        from .toll_booth import grad_per_layer as toll_booth_grads

        tb = toll_booth_grads(**kw)
        out.update({v: tb[v] for v in ("post", "pre") if v in variants})
    from .toll_booth import ffn_grad_rows

    model_kw = dict(n_layer=n_layer, d_model=d_model, n_head=n_head, vocab_size=vocab_size, block_size=block_size,
                    norm=norm)
    for v in variants:
        if v not in out:
            out[v] = ffn_grad_rows(lambda seed: _model(v, seed, **model_kw), seeds, vocab_size, block_size, batch)
    return out


def grad_ratio(r: dict, variant: str) -> float:
    """Layer 1's mean gradient norm over the last layer's (means over seeds first)."""
    m = r[variant].mean(axis=0)
    return float(m[0] / m[-1])


# The control of the gradient measurement: the variants it is run for (every one; it is cheap).
DETACH_VARIANTS = VARIANTS


@cache.memo
@one_thread()
def grad_paths(variants: tuple = DETACH_VARIANTS, n_layer: int = GRAD["n_layer"], d_model: int = GRAD["d_model"],
               n_head: int = GRAD["n_head"], vocab_size: int = GRAD["vocab_size"],
               block_size: int = GRAD["block_size"], batch: int = GRAD["batch"], seeds: tuple = GRAD["seeds"],
               norm: str = "layernorm") -> dict:
    """Where the per-layer FFN gradient at initialization comes from: the same models, seeds and tokens as
    :func:`grad_per_layer`, as is and with every sub-layer's input detached.

    Detaching leaves the forward pass unchanged, but the only way back from the loss to the stream x_l is
    then the residual path, so any difference left between layers comes from the layers themselves and
    none from the gradient the stream collects from the branches above. Returns ``{variant: {"ffn",
    "ffn_detached": (seeds, L) ‖∂loss/∂W‖_F of each layer's two FFN matrices; "stream", "stream_detached":
    (seeds, L + 1) ‖∂loss/∂x_l‖ of x_0 (the embeddings) … x_L}, "layers": 1..L, ...}``. ``ffn`` equals
    :func:`grad_per_layer`'s rows (the same loop, :func:`normref.experiments.toll_booth.ffn_grad_rows`).
    """
    from .toll_booth import ffn_grad_rows

    variants = _check_variants(variants)
    if len(seeds) < 1:
        raise ValueError("seeds must name at least one seed")
    model_kw = dict(n_layer=n_layer, d_model=d_model, n_head=n_head, vocab_size=vocab_size, block_size=block_size,
                    norm=norm)
    out = {"layers": np.arange(1, n_layer + 1), "seeds": tuple(seeds), "norm": norm, "variants": variants}
    for v in variants:
        r = {}
        for detached in (False, True):
            suffix = "_detached" if detached else ""
            r["ffn" + suffix], r["stream" + suffix] = ffn_grad_rows(
                lambda seed: _model(v, seed, **model_kw), seeds, vocab_size, block_size, batch,
                detach_inputs=detached, stream=True)
        out[v] = r
    return out


def spread(per_layer) -> dict:
    """How uneven a per-layer profile is (seed means first): layer 1 ÷ last, max ÷ min, and the coefficient of
    variation across layers (population standard deviation over the mean)."""
    m = np.asarray(per_layer, dtype=float)
    m = m.mean(axis=0) if m.ndim == 2 else m
    return {"first_over_last": float(m[0] / m[-1]), "max_over_min": float(m.max() / m.min()),
            "cv": float(m.std() / m.mean())}


def stream_grad_ratio(r: dict, variant: str, detached: bool = False) -> float:
    """‖∂loss/∂x_0‖ ÷ ‖∂loss/∂x_L‖ (seed means): how much more gradient the stream carries at its entrance than
    where it leaves the stack."""
    m = r[variant]["stream_detached" if detached else "stream"].mean(axis=0)
    return float(m[0] / m[-1])


# ------------------------------------------------------------------ 2. residual stream at init


@cache.memo
@one_thread()
def stream_lengths(n_layer: int, variants: tuple = VARIANTS, d_model: int = STREAM["d_model"],
                   n_head: int = STREAM["n_head"], tokens: int = STREAM["tokens"], batch: int = STREAM["batch"],
                   seeds: tuple = STREAM["seeds"], norm: str = "layernorm") -> dict:
    """E‖x_l‖² of the residual stream after each layer at initialization, input entries i.i.d. N(0, 1).

    The setting of Lemma 2 (Xiong et al. 2020), as on the toll-booth page, for
    every variant and a stack of ``n_layer`` layers. Returns ``{variant:
    (seeds, L+1) array, "layers": 0..L, "d": d_model, ...}``; column 0 is the
    input, E‖x_0‖² ≈ d.
    """
    variants = _check_variants(variants)
    cfg = dict(n_layer=n_layer, d_model=d_model, n_head=n_head, vocab_size=2, block_size=tokens, norm=norm)
    res = {"layers": np.arange(0, n_layer + 1), "d": d_model, "seeds": tuple(seeds), "norm": norm,
           "variants": variants}
    for v in variants:
        rows = []
        for seed in seeds:
            model = _model(v, seed, **cfg)
            x0 = torch.randn(batch, tokens, d_model, generator=torch.Generator().manual_seed(20_000 + seed))
            with torch.no_grad():
                rows.append([float(x.square().sum(-1).mean()) for x in model.stream(x0)])
        res[v] = np.array(rows)
    return res


def stream_growth(r: dict, variant: str) -> float:
    """√(E‖x_L‖² / E‖x_0‖²): how many times longer the stream leaves the stack than it entered."""
    m = r[variant].mean(axis=0)
    return float(math.sqrt(m[-1] / m[0]))


# ------------------------------------------------------------------ 3. training a small language model


@dataclass(frozen=True)
class LMSetting:
    """One lab: a character-level LM per variant, learning rate, warmup and seed."""

    n_layer: int = 8
    d_model: int = 32
    n_head: int = 2
    block_size: int = 32  # characters of context
    batch: int = 16
    steps: int = 300
    warmup: int = 60  # linear warmup steps of the "with warmup" runs; the others start at the peak rate
    lrs: tuple = (3e-3, 3e-2)  # Adam's peak learning rate: a moderate one and a high one
    seeds: tuple = (0, 1, 2)
    variants: tuple = VARIANTS
    norm: str = "layernorm"
    eval_every: int = 50  # held-out loss and attention logits every this many steps (and at step 0)
    val_seqs: int = 64  # held-out sequences per evaluation
    betas: tuple = (0.9, 0.98)  # Adam, as in Xiong et al. 2020

    def __post_init__(self):
        for k in ("n_layer", "d_model", "n_head", "block_size", "batch", "steps", "eval_every", "val_seqs"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ValueError(f"{k} must be a positive integer, got {v!r}")
        if isinstance(self.warmup, bool) or not isinstance(self.warmup, int) or not 0 < self.warmup <= self.steps:
            raise ValueError(f"warmup must be an integer in [1, steps], got {self.warmup!r}")
        if not self.lrs or any(not (isinstance(lr, float) and lr > 0) for lr in self.lrs):
            raise ValueError(f"lrs must be positive floats, got {self.lrs!r}")
        if not self.seeds:
            raise ValueError("seeds must name at least one seed")
        _check_variants(self.variants)

    def runs(self) -> list[dict]:
        """Every run of the lab, in a fixed order: variant, learning rate, warmup (0 or the setting's), seed."""
        return [dict(variant=v, lr=lr, warmup=w, seed=s) for v in self.variants for lr in self.lrs
                for w in (0, self.warmup) for s in self.seeds]


FULL = LMSetting()
QUICK = LMSetting(steps=20, warmup=5, eval_every=10, seeds=(0,), variants=("post", "pre+qk"), val_seqs=8)


@dataclass(frozen=True)
class Corpus:
    """Text, its character vocabulary, and a train/held-out split by chunks."""

    text: str
    files: tuple = ()
    chunk: int = 1024  # the split's unit: every tenth chunk of this many characters is held out
    every: int = 10
    vocab: str = field(init=False)

    def __post_init__(self):
        if not isinstance(self.text, str) or len(self.text) < 10 * self.chunk:
            raise ValueError(f"text must be a string of at least {10 * self.chunk} characters")
        object.__setattr__(self, "vocab", "".join(sorted(set(self.text))))

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    @functools.cached_property
    def ids(self) -> torch.Tensor:
        index = {c: i for i, c in enumerate(self.vocab)}
        return torch.tensor([index[c] for c in self.text], dtype=torch.long)

    @functools.cached_property
    def split(self) -> tuple[torch.Tensor, torch.Tensor]:
        chunks = self.ids.split(self.chunk)
        train = torch.cat([c for i, c in enumerate(chunks) if i % self.every != self.every - 1])
        val = torch.cat([c for i, c in enumerate(chunks) if i % self.every == self.every - 1])
        return train, val

    def unigram_loss(self) -> float:
        """The held-out loss (nats per character) of predicting the training text's character frequencies and
        nothing more: the mark a model must beat to have learned anything beyond them (add-one smoothing, so
        a character missing from the training part costs a finite amount)."""
        train, val = self.split
        counts = torch.bincount(train, minlength=len(self.vocab)).double() + 1
        logp = (counts / counts.sum()).log()
        return float(-logp[val].mean())

    def describe(self) -> dict:
        train, val = self.split
        return {"files": list(self.files), "chars": len(self.text), "vocab": len(self.vocab), "chunk": self.chunk,
                "every": self.every,
                "train_chars": len(train), "val_chars": len(val), "sha256": self.sha256,
                "unigram_loss": self.unigram_loss(), "text": self.text}


def docs_corpus(root: Path | str = ".") -> Corpus:
    """The site's English pages (``docs/en/*.md``, Markdown source, sorted by name), joined by blank lines."""
    files = sorted((Path(root) / "docs" / "en").glob("*.md"))
    if not files:
        raise FileNotFoundError(f"no docs/en/*.md under {Path(root).resolve()}: run from the repository root or pass --root")
    return Corpus("\n\n".join(f.read_text(encoding="utf-8") for f in files),
                  files=tuple(f"docs/en/{f.name}" for f in files))


def _batch(data: torch.Tensor, n: int, T: int, g: torch.Generator) -> torch.Tensor:
    ix = torch.randint(len(data) - T - 1, (n,), generator=g)
    return torch.stack([data[i:i + T + 1] for i in ix.tolist()])


def max_logits(model: TinyTransformer, idx: torch.Tensor) -> list[float]:
    """The largest attention logit q·k/√d_h of each layer (over heads, positions and sequences) on ``idx``."""
    seen = []
    hooks = [b.attn.register_forward_pre_hook(lambda m, a: seen.append(m.logits(a[0]))) for b in model.blocks]
    try:
        with torch.no_grad():
            model(idx)
    finally:
        for h in hooks:
            h.remove()
    return [float(s[torch.isfinite(s)].max()) if torch.isfinite(s).any() else float("nan") for s in seen]


def _round(v: float, digits: int = 5):
    return None if not math.isfinite(v) else round(v, digits)


@one_thread()
def train_run(corpus: Corpus, s: LMSetting, variant: str, lr: float, warmup: int, seed: int,
              steps: int | None = None) -> dict:
    """Train one model and return its record (losses per step, checkpoints, divergence).

    The initialization is ``torch.manual_seed(seed)``; the batches come from a
    generator seeded ``1000 + seed``, so every variant of one seed sees the same
    batches in the same order. A run whose loss becomes non-finite has
    diverged: it stops there, and its record says at which step.
    ``steps`` (default: the setting's) cuts a run short, for tests.
    """
    model = _model(variant, seed, n_layer=s.n_layer, d_model=s.d_model, n_head=s.n_head,
                   vocab_size=len(corpus.vocab), block_size=s.block_size, norm=s.norm)
    return {"variant": variant, "lr": lr, "warmup": warmup, "seed": seed,
            **train(model, corpus, s, lr, warmup, seed, steps)}


def train(model: TinyTransformer, corpus: Corpus, s: LMSetting, lr: float, warmup: int, seed: int,
          steps: int | None = None) -> dict:
    """The lab's training loop, for a freshly initialized ``model`` (this lab's :func:`train_run` and the
    drop-norm lab's, normref.experiments.dropnorm, both train with it): Adam with the setting's betas, the
    learning rate warmed up linearly over ``warmup`` steps then constant, batches from a generator seeded
    ``1000 + seed``, the held-out loss and each layer's largest attention logit at step 0, every
    ``s.eval_every`` steps and at the end. {"losses", "checks", "diverged_at", "seconds"}: the loss of each
    step, the checkpoints, the step at which the loss became non-finite (None if never), the wall time."""
    steps = s.steps if steps is None else steps
    train_data, val = corpus.split
    opt = torch.optim.Adam(model.parameters(), lr=lr, betas=s.betas, foreach=True)
    g = torch.Generator().manual_seed(1000 + seed)
    held_out = _batch(val, s.val_seqs, s.block_size, torch.Generator().manual_seed(99))  # the same for every run
    losses, checks, diverged = [], [], None

    def check(step):
        with torch.no_grad():
            _, vl = model(held_out[:, :-1], held_out[:, 1:])
        checks.append({"step": step, "val_loss": _round(float(vl)),
                       "max_logit": [_round(x, 3) for x in max_logits(model, held_out[:, :-1])]})

    t0 = time.perf_counter()
    check(0)
    for step in range(steps):
        for group in opt.param_groups:  # linear warmup, then constant
            group["lr"] = lr * min(1.0, (step + 1) / warmup) if warmup else lr
        batch = _batch(train_data, s.batch, s.block_size, g)
        _, loss = model(batch[:, :-1], batch[:, 1:])
        value = loss.item()
        if not math.isfinite(value):
            diverged = step + 1
            break
        losses.append(round(value, 4))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if (step + 1) % s.eval_every == 0 or step + 1 == steps:
            check(step + 1)
            if checks[-1]["val_loss"] is None:
                diverged = step + 1
                break
    return {"losses": losses, "checks": checks, "diverged_at": diverged, "seconds": round(time.perf_counter() - t0, 2)}


def _worker(args):
    corpus, s, run = args
    return train_run(corpus, s, **run)


def run_lab(s: LMSetting = FULL, corpus: Corpus | None = None, jobs: int = 1, log=print) -> dict:
    """Every run of the setting; a report with the machine, versions, date, corpus and setting."""
    from ..bench import machine_info

    if not isinstance(s, LMSetting):
        raise TypeError(f"setting must be an LMSetting, got {type(s).__name__}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    corpus = docs_corpus() if corpus is None else corpus
    machine = machine_info(threads=1)  # at the start: the date and the load the run began with
    machine["processes"] = jobs
    todo = s.runs()
    t0 = time.perf_counter()
    results = []
    from ..cores import starmap  # normref's one process pool; jobs=1 runs here, in order

    it = starmap(_worker, [((corpus, s, r),) for r in todo], jobs)
    for i, rec in enumerate(it, 1):
        results.append(rec)
        last = rec["checks"][-1]["val_loss"]
        log(f"[{i}/{len(todo)}] {rec['variant']:<10} lr={rec['lr']:g} warmup={rec['warmup']:<3} seed={rec['seed']} "
            f"held-out loss {'diverged at step ' + str(rec['diverged_at']) if rec['diverged_at'] else f'{last:.3f}'}"
            f" ({rec['seconds']:.1f} s)")
    machine["load_average_at_end"] = list(_loadavg())
    return {"schema": SCHEMA, "machine": machine, "seconds": round(time.perf_counter() - t0, 1),
            "setting": asdict(s), "corpus": corpus.describe(), "uniform_loss": math.log(len(corpus.vocab)),
            "runs": results}


def _loadavg():
    try:
        import os

        return os.getloadavg()
    except (OSError, AttributeError):
        return ()


def corpus_of(report: dict) -> Corpus:
    """The corpus a report trained on, rebuilt from its own copy of the text (and checked against its hash)."""
    c = report["corpus"]
    corpus = Corpus(c["text"], files=tuple(c["files"]), **{k: c[k] for k in ("chunk", "every") if k in c})
    if corpus.sha256 != c["sha256"]:
        raise ValueError("the report's corpus text does not match its sha256")
    return corpus


def setting_of(report: dict) -> LMSetting:
    s = dict(report["setting"])
    for k in ("lrs", "seeds", "variants", "betas"):
        s[k] = tuple(s[k])
    return LMSetting(**s)


# ------------------------------------------------------------------ reading a report


def final_loss(run: dict) -> float:
    """A run's held-out loss at its last step; NaN for a run that diverged."""
    if run["diverged_at"]:
        return float("nan")
    v = run["checks"][-1]["val_loss"]
    return float("nan") if v is None else v


def summarize(report: dict) -> dict:
    """Per variant and (learning rate, warmup): held-out loss at the end (mean, min, max over the seeds that
    did not diverge), how many seeds diverged, how many stalled (ended no better than the unigram loss: the
    model learned the character frequencies and nothing else), the mean training-loss curve, and the largest
    attention logit per layer at the end (mean over seeds)."""
    s = report["setting"]
    floor = report["corpus"]["unigram_loss"]
    out = {}
    for v in s["variants"]:
        for lr in s["lrs"]:
            for w in (0, s["warmup"]):
                runs = [r for r in report["runs"] if (r["variant"], r["lr"], r["warmup"]) == (v, lr, w)]
                finals = np.array([final_loss(r) for r in runs])
                ok = finals[np.isfinite(finals)]
                full = [r["losses"] for r in runs if len(r["losses"]) == s["steps"]]
                logits = [r["checks"][-1]["max_logit"] for r in runs if not r["diverged_at"]]
                out[(v, lr, w)] = {
                    "seeds": len(runs),
                    "diverged": int(sum(1 for r in runs if r["diverged_at"])),
                    "stalled": int(np.sum(ok >= floor)),
                    "final": float(ok.mean()) if len(ok) else float("nan"),
                    "final_min": float(ok.min()) if len(ok) else float("nan"),
                    "final_max": float(ok.max()) if len(ok) else float("nan"),
                    "curve": np.mean(full, axis=0) if full else None,
                    "max_logit": np.mean(np.array(logits, dtype=float), axis=0) if logits else None,
                }
    return out


SMOOTH, EVERY = 10, 5  # how the training curves are drawn: a 10-step moving average, one point in five steps


def smoothed(curve) -> tuple[list[int], np.ndarray]:
    """A training curve as the figure and the widget draw it: the SMOOTH-step moving average, at the step
    where each window ends, one point in EVERY steps (and the last)."""
    y = np.convolve(np.asarray(curve, dtype=float), np.ones(SMOOTH) / SMOOTH, mode="valid")
    steps = np.arange(SMOOTH, len(curve) + 1)
    keep = (steps % EVERY == 0) | (steps == steps[-1])
    return steps[keep].tolist(), y[keep]


# ------------------------------------------------------------------ command line


def add_arguments(p) -> None:
    p.add_argument("--json", type=Path, metavar="PATH",
                   help="write the report as JSON to PATH (the site reads normref/results/placement-cpu.json)")
    p.add_argument("--quick", action="store_true", help="two variants, one seed, 20 steps: seconds (for tests)")
    p.add_argument("--jobs", type=positive_int, default=1,
                   help="processes, one torch thread each (default 1; the machine may be shared)")
    p.add_argument("--root", type=Path,
                   help="a clone's root, whose docs/en/*.md are the corpus (default: the current folder if it has "
                        "docs/en/*.md, else the text the committed run trained on, which the wheel ships)")
    p.add_argument("--variants", type=subset_of(VARIANTS), help="comma-separated subset of " + ", ".join(VARIANTS))
    p.add_argument("--steps", type=positive_int, help="training steps per run")


def _cli_corpus(root: Path | None) -> Corpus:
    """The corpus the command trains on: a clone's docs/en/*.md, else the committed run's own copy of it."""
    if root is not None or any((Path(".") / "docs" / "en").glob("*.md")):
        try:
            return docs_corpus(root or ".")
        except FileNotFoundError:
            raise UsageError(f"--root: expected a clone of the site's repository (with docs/en/*.md), "
                             f"got {Path(root).resolve()}") from None
    # The committed run (normref.results.placement reads it too; importing that module here would be a cycle).
    committed = Path(__file__).resolve().parent.parent / "results" / "placement-cpu.json"
    corpus = corpus_of(json.loads(committed.read_text(encoding="utf-8")))
    print(f"corpus: the text the committed run trained on ({len(corpus.files)} pages of docs/en, "
          f"{len(corpus.text):,} characters, shipped in normref/results/placement-cpu.json); "
          "--root CLONE trains on a clone's pages instead")
    return corpus


def run(args) -> int:
    s = QUICK if args.quick else FULL
    over = {}
    if args.variants:
        over["variants"] = args.variants
    if args.steps is not None:
        over["steps"] = args.steps
        over["warmup"] = min(s.warmup, args.steps)
        over["eval_every"] = min(s.eval_every, args.steps)
    if over:
        s = LMSetting(**{**asdict(s), **over})
    report = run_lab(s, _cli_corpus(args.root), jobs=args.jobs)
    print()
    print(format_summary(report))
    return finish(report, args.json, f"{report['machine']['processes']} process(es)")


def finish(report: dict, json_path: Path | None, processes: str) -> int:
    """The end of a lab's command (this one's and the drop-norm lab's): the machine line, and the report
    written to ``json_path`` (compact JSON, one line) when given. ``processes``: "1 process", "2 process(es)"."""
    m = report["machine"]
    print(f"machine: {m['cpu_model']}, {m['cpu_cores']} cores, {processes} of 1 thread, "
          f"torch {m['torch']}, {m['date']}; {report['seconds']:.0f} s")
    if json_path:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(report, indent=None, separators=(",", ":"), ensure_ascii=False) + "\n",
                             encoding="utf-8")
        print(f"wrote {json_path}")
    return 0


def format_summary(report: dict) -> str:
    """A plain-text table: held-out loss at the end per variant and setting (diverged / stalled seeds)."""
    s, summ = report["setting"], summarize(report)
    cols = [(lr, w) for lr in s["lrs"] for w in (0, s["warmup"])]
    head = "variant     " + "".join(f"lr {lr:g} {'warmup' if w else 'no warmup':<12}" for lr, w in cols)
    lines = [f"held-out loss after {s['steps']} steps (unigram {report['corpus']['unigram_loss']:.3f}, "
             f"uniform {report['uniform_loss']:.3f}); (diverged, stalled) of {len(s['seeds'])} seeds", head]
    for v in s["variants"]:
        cells = []
        for lr, w in cols:
            e = summ[(v, lr, w)]
            cells.append(f"{e['final']:.3f} ({e['diverged']},{e['stalled']})".ljust(len(f"lr {lr:g} ") + 12))
        lines.append(f"{v:<12}" + "".join(cells))
    return "\n".join(lines)
