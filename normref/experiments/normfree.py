"""Inside a trained model: what SmolLM2-135M-Instruct's RMSNorms do, measured over several texts.

The drop-norm page asks "can we drop the norm?" of a small lab trained from
scratch. This module asks it of a trained Pre-RMSNorm model,
SmolLM2-135M-Instruct, without any training, on the English texts of
``normfree.yml`` (drafted for this measurement; SmolLM2 was pretrained on
about 2T tokens of public web, code and math text, so they are not called held
out). Each text is cut to its first :data:`N_TOKENS` tokens. Four groups of
measurements, each as next-token cross-entropy (nats) per text unless said:

1. **Freeze the normalizer.** Each RMSNorm ``g ⊙ x / rms(x)`` becomes
   ``g ⊙ c·x``: its per-token 1/rms replaced by one constant ``c``, the
   median of its 1/rms over the tokens of a separate calibration text. The
   gain is kept. One norm at a time (all 61: two per block and the final
   norm), then all at once; each also with position 0 kept per-token (its
   own 1/rms). That separates what the norm does for ordinary tokens from what
   it does for the first token, which in many LLMs is an attention sink
   (Xiao et al. 2023) with massive activations (Sun et al. 2024); in SmolLM2
   its stream is far longer than the others' (the real-models page measures it).
2. **DyT fitted to the model.** Each norm becomes ``g ⊙ s·tanh(α x)`` (DyT
   with the model's gain), α and s fitted by weighted least squares (weights
   g²) to the norm's own output on the calibration text, position 0 left out
   of the fit. Substituted one at a time and all at once, with and without
   position 0 kept.
3. **Drop each block** (x_{ℓ+1} = x_ℓ), one at a time: close to the
   per-layer removal the Curse of Depth code describes, but scored by
   cross-entropy on these texts rather than by benchmark accuracy.
4. **Angular distance** between each block's input and output, arccos(cos)/π:
   the distance the Curse of Depth repository's code computes between the
   inputs of blocks ℓ and ℓ+n on the last token (code derived from a ShortGPT
   reimplementation and linked to Gromov et al.); here n = 1, averaged over
   positions 1.. and also at the last position.

Every one-at-a-time variant starts from the stream cached at its block's
input, so it runs only the blocks from there on. The result is committed
(``normref/results/normfree-cpu.json``, :mod:`normref.results.normfree`) with
the machine, versions, date and seconds: refresh it with ``python -m normref
normfree --json normref/results/normfree-cpu.json``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import time
from pathlib import Path

import numpy as np

from ..usage import positive_int
from .layer_drop import ce_from as _ce_from, streams as _streams

__all__ = ["MODEL", "N_TOKENS", "texts", "norm_sites", "fit_dyt", "calibrate", "measure_text", "run_all",
           "summarize", "bootstrap_mean", "add_arguments", "run"]

MODEL = "smollm2-135m"
N_TOKENS = 256  # every text is cut to this many tokens, so each weighs the same in a mean over texts
SCHEMA = "normref.normfree/1"
_TEXTS_FILE = Path(__file__).with_suffix(".yml")


@functools.lru_cache(maxsize=None)
def texts() -> dict:
    """``normfree.yml``: ``{"calibration": str, "texts": [{"id", "genre", "text"}, ...]}``."""
    import yaml

    with _TEXTS_FILE.open(encoding="utf-8") as fh:
        d = yaml.safe_load(fh)
    if not isinstance(d, dict) or not isinstance(d.get("calibration"), str) or not isinstance(d.get("texts"), list):
        raise ValueError(f"{_TEXTS_FILE.name}: expected {{calibration: text, texts: [{{id, genre, text}}]}}")
    ids = []
    for t in d["texts"]:
        if not isinstance(t, dict) or not all(isinstance(t.get(k), str) and t[k].strip() for k in ("id", "genre", "text")):
            raise ValueError(f"{_TEXTS_FILE.name}: each text needs a non-empty id, genre and text, got {t!r}")
        ids.append(t["id"])
    if len(set(ids)) != len(ids):
        raise ValueError(f"{_TEXTS_FILE.name}: text ids repeat: {ids}")
    return d


def norm_sites(net) -> list[tuple[str, object]]:
    """(site, Norm module) of every RMSNorm in forward order: blk.0.attn_norm, blk.0.ffn_norm, ..., final_norm."""
    out = []
    for b in net.blocks:
        out += [(b.attn_norm.site, b.attn_norm), (b.ffn_norm.site, b.ffn_norm)]
    return out + [(net.final_norm.site, net.final_norm)]


def _inv_rms(x, eps):
    import torch

    return torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)


def _keep_first(y, norm, x):
    """``y`` with position 0 (of the token axis, -2) replaced by the real norm of ``x``'s position 0 (the real
    norm sees only that token: the others may have overflowed under a substitution)."""
    y = y.clone()
    y[..., :1, :] = norm(x[..., :1, :])
    return y


class _Frozen:
    """RMSNorm with 1/rms a constant: g ⊙ c·x (position 0 per-token when keep0)."""

    def __init__(self, norm, c: float, keep0: bool):
        self.norm, self.c, self.keep0 = norm, float(c), keep0

    def __call__(self, x):
        y = x * self.c * self.norm.weight
        return _keep_first(y, self.norm, x) if self.keep0 else y


class _DyT:
    """DyT with the model's gain: g ⊙ s·tanh(α x) (position 0 through the real norm when keep0)."""

    def __init__(self, norm, alpha: float, scale: float, keep0: bool):
        self.norm, self.alpha, self.scale, self.keep0 = norm, float(alpha), float(scale), keep0

    def __call__(self, x):
        import torch

        y = self.scale * torch.tanh(self.alpha * x) * self.norm.weight
        return _keep_first(y, self.norm, x) if self.keep0 else y


@contextlib.contextmanager
def _substituted(net, subs: dict):
    """Swap the RMSNorm inside each Norm module of ``subs`` ({Norm module: callable}) for the callable; restore."""
    saved = {}
    try:
        for mod, fn in subs.items():
            saved[mod] = mod._modules["norm"]
            # Norm.forward calls self.norm(x): shadow the submodule with the callable for these calls.
            mod.__dict__["norm"] = fn
        yield
    finally:
        for mod in saved:
            mod.__dict__.pop("norm", None)


def fit_dyt(x, xhat, gain, *, grid: int = 241) -> dict:
    """Fit s·tanh(α x) to a norm's normalized output ``xhat`` (= x / rms(x)) by least squares weighted by
    gain² (the output the model reads is g ⊙ xhat). ``x``, ``xhat``: (tokens, d) arrays; ``gain``: (d,).
    α on a log grid from 1e-7 to 10, refined by golden-section search; s in closed form for each α.
    Returns ``{"alpha", "scale", "r2", "linear"}`` (r2: weighted R² of the fit to g ⊙ xhat; linear: α·max|x|
    < 0.1, so tanh never bends on these inputs and the fit is a constant scale, a frozen norm)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(xhat, dtype=np.float64)
    w = np.asarray(gain, dtype=np.float64) ** 2
    if x.ndim != 2 or x.shape != y.shape or w.shape != (x.shape[1],):
        raise ValueError(f"x and xhat must be (tokens, d) arrays of one shape and gain (d,), got {x.shape}, "
                         f"{y.shape} and {w.shape}")
    wy2 = float((w * y * y).sum())
    if wy2 == 0:
        raise ValueError("xhat is zero wherever the gain is non-zero: nothing to fit")

    def sse(log_a):
        t = np.tanh(math.exp(log_a) * x)
        tt, ty = float((w * t * t).sum()), float((w * t * y).sum())
        return (wy2 - ty * ty / tt if tt > 0 else wy2), (ty / tt if tt > 0 else 0.0)

    logs = np.linspace(math.log(1e-7), math.log(10.0), grid)
    errs = [sse(v)[0] for v in logs]
    i = int(np.argmin(errs))
    lo, hi = logs[max(i - 1, 0)], logs[min(i + 1, grid - 1)]
    phi = (math.sqrt(5) - 1) / 2
    a, b = hi - phi * (hi - lo), lo + phi * (hi - lo)
    fa, fb = sse(a)[0], sse(b)[0]
    for _ in range(40):
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - phi * (hi - lo)
            fa = sse(a)[0]
        else:
            lo, a, fa = a, b, fb
            b = lo + phi * (hi - lo)
            fb = sse(b)[0]
    best = min((errs[i], logs[i]), (fa, a), (fb, b))
    err, s = sse(best[1])
    mean = float((w * y).sum() / (w.sum() * y.shape[0]))
    tot = float((w * (y - mean) ** 2).sum())
    alpha = math.exp(best[1])
    return {"alpha": alpha, "scale": s, "r2": 1.0 - err / tot, "linear": bool(alpha * float(np.abs(x).max()) < 0.1)}


def _tokens(m, text: str) -> list[int]:
    ids = m.encode(text)
    if len(ids) < N_TOKENS:
        raise ValueError(f"a text of normfree.yml is {len(ids)} tokens long, fewer than {N_TOKENS}: "
                         f"lengthen it ({text[:40]!r}...)")
    return ids[:N_TOKENS]


def calibrate(m) -> list[dict]:
    """Per norm, on the calibration text: the median 1/rms over its tokens (the frozen constant), position 0's
    1/rms over that median, and DyT's fitted α, s and R² (positions 1..)."""
    import torch

    net = m.net
    ids = _tokens(m, texts()["calibration"])
    sites = norm_sites(net)
    seen = {}
    hooks = [mod.register_forward_pre_hook(lambda mod, args, site=site: seen.__setitem__(site, args[0][0].detach()))
             for site, mod in sites]
    try:
        with torch.no_grad():
            m.forward(ids)
    finally:
        for h in hooks:
            h.remove()
    out = []
    for site, mod in sites:
        x = seen[site]
        eps = mod.norm.eps
        inv = _inv_rms(x, eps)[:, 0]
        c = float(inv.median())
        xhat = (x * _inv_rms(x, eps)).numpy()
        fit = fit_dyt(x[1:].numpy(), xhat[1:], mod.weight.detach().numpy())
        out.append({"site": site, "inv_rms": c, "pos0_over_median": float(inv[0]) / c, **fit})
    return out


def measure_text(m, ids, calib: list[dict]) -> dict:
    """Every cross-entropy and angular distance of one text (see the module docstring)."""
    import torch

    net = m.net
    sites = norm_sites(net)
    n_blk = len(net.blocks)
    r = {}
    with torch.no_grad():
        xs, cos, sin = _streams(net, ids)
        r["base"] = _ce_from(net, xs[-1], n_blk, cos, sin, ids)

        def variant(make, keep0):
            return {mod: make(mod, c, keep0) for (site, mod), c in zip(sites, calib)}

        kinds = {"freeze": lambda mod, c, k: _Frozen(mod.norm, c["inv_rms"], k),
                 "dyt": lambda mod, c, k: _DyT(mod.norm, c["alpha"], c["scale"], k)}
        for name, make in kinds.items():
            for keep0 in (False, True):
                tag = name + ("_keep0" if keep0 else "")
                subs = variant(make, keep0)
                one = []
                for j, (site, mod) in enumerate(sites):
                    start = min(j // 2, n_blk)  # the block this norm sits in (the final norm: after the last)
                    with _substituted(net, {mod: subs[mod]}):
                        one.append(_ce_from(net, xs[start], start, cos, sin, ids))
                r[tag + "_one"] = one
                with _substituted(net, subs):
                    r[tag + "_all"] = _ce_from(net, xs[0], 0, cos, sin, ids)
        r["drop"] = [_ce_from(net, xs[b], b, cos, sin, ids, skip=b) for b in range(n_blk)]
        ang, ang_last = [], []
        for b in range(n_blk):
            cs = torch.nn.functional.cosine_similarity(xs[b][0].double(), xs[b + 1][0].double(), dim=-1)
            a = torch.arccos(cs.clamp(-1, 1)) / math.pi
            ang.append(float(a[1:].mean()))
            ang_last.append(float(a[-1]))
        r["angular"], r["angular_last"] = ang, ang_last
    return r


def _one_text(i: int, calib: list[dict]) -> dict:
    """Text ``i`` of normfree.yml, measured on one torch thread (a worker of :func:`run_all`)."""
    import torch

    from ..models.checkpoint import load

    torch.set_num_threads(1)
    m = load(MODEL)
    t = texts()["texts"][i]
    t1 = time.perf_counter()
    return {"id": t["id"], "genre": t["genre"], **measure_text(m, _tokens(m, t["text"]), calib),
            "seconds": time.perf_counter() - t1}


def run_all(processes: int = 1, log=print) -> dict:
    """The whole measurement on every text of normfree.yml, ``processes`` texts at a time (each on one torch
    thread): a report with the machine, date and seconds."""
    import torch

    from ..bench import machine_info
    from ..models.checkpoint import load, spec
    from ..models.files import file_sha256

    t0 = time.perf_counter()
    m = load(MODEL)
    with torch.no_grad():
        calib = calibrate(m)
    n = len(texts()["texts"])
    from ..cores import starmap  # normref's one process pool; processes=1 runs here, in order

    per_text = list(starmap(_one_text, [(i, calib) for i in range(n)], processes))
    for r in per_text:
        log(f"{r['id']:<24} base {r['base']:.3f} nats ({r['seconds']:.0f} s)")
    return {
        "schema": SCHEMA, "model": m.label, "weights": m.weights_label + ", dequantized to float32",
        "weights_sha256": file_sha256(spec(MODEL).weights_path), "n_tokens": N_TOKENS,
        "sites": [c["site"] for c in calib], "calibration": calib, "texts": per_text,
        "machine": {**machine_info(threads=1), "processes": processes}, "seconds": time.perf_counter() - t0,
    }


def bootstrap_mean(values, *, n: int = 10_000, seed: int = 0, level: float = 0.95) -> dict:
    """Mean of ``values`` (one per text) and a percentile bootstrap interval over the texts."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1 or v.size < 2:
        raise ValueError(f"values must be a 1-D sequence of at least 2 numbers (one per text), got shape {v.shape}")
    rng = np.random.default_rng(seed)
    means = v[rng.integers(0, v.size, size=(n, v.size))].mean(axis=1)
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return {"mean": float(v.mean()), "lo": float(lo), "hi": float(hi), "min": float(v.min()), "max": float(v.max())}


def summarize(report: dict) -> dict:
    """The headline numbers of a report: each cost (cross-entropy minus the text's base) as a bootstrap mean over
    the texts; per block, the drop cost and angular distance; the curse-of-depth comparisons per half."""
    T = report["texts"]
    base = np.array([t["base"] for t in T])
    out = {"n_texts": len(T), "base": bootstrap_mean(base)}

    def cost(key):  # None (the stream overflowed float32) becomes NaN
        v = np.array([t[key] for t in T], dtype=object)
        v = np.where(v == None, np.nan, v).astype(np.float64)  # noqa: E711 (elementwise)
        return v - (base[:, None] if v.ndim == 2 else base)

    # All norms at once: the cost over the texts where the stream stayed finite, and on how many it overflowed.
    for k in ("freeze_all", "freeze_keep0_all", "dyt_all", "dyt_keep0_all"):
        c = cost(k)
        finite = c[np.isfinite(c)]
        out[k] = {**(bootstrap_mean(finite) if finite.size >= 2 else {}), "overflowed": int((~np.isfinite(c)).sum())}
    # One at a time: per norm (or block), the mean over the texts and the lowest and highest text.
    for k in ("freeze_one", "freeze_keep0_one", "dyt_one", "dyt_keep0_one", "drop"):
        c = cost(k)
        out[k] = {"mean": np.nanmean(c, 0).tolist(), "lo": np.nanmin(c, 0).tolist(), "hi": np.nanmax(c, 0).tolist(),
                  "overflowed": (~np.isfinite(c)).sum(0).tolist()}
    ang = np.array([t["angular"] for t in T])
    out["angular"] = {"mean": ang.mean(0).tolist(), "lo": ang.min(0).tolist(), "hi": ang.max(0).tolist()}
    drop = cost("drop")
    n_blk = drop.shape[1]
    half = n_blk // 2
    # Per text: the median drop cost of each half, and how many of the 10 cheapest blocks are deep.
    k = min(10, n_blk)
    cheap_deep = [(np.argsort(d)[:k] >= half).sum() for d in drop]
    out["halves"] = {
        "first_median": bootstrap_mean(np.median(drop[:, :half], axis=1)),
        "second_median": bootstrap_mean(np.median(drop[:, half:], axis=1)),
        "second_minus_first": bootstrap_mean(np.median(drop[:, half:], axis=1) - np.median(drop[:, :half], axis=1)),
        "cheapest_k": k, "cheapest_deep": bootstrap_mean(cheap_deep),
        "texts_deep_cheaper": int((np.median(drop[:, half:], axis=1) < np.median(drop[:, :half], axis=1)).sum()),
        "angular_first": bootstrap_mean(ang[:, :half].mean(1)), "angular_second": bootstrap_mean(ang[:, half:].mean(1)),
        # the median per half, which block 1's large turn (it maps the embeddings into the stream) cannot pull
        "angular_first_median": bootstrap_mean(np.median(ang[:, :half], axis=1)),
        "angular_second_median": bootstrap_mean(np.median(ang[:, half:], axis=1)),
        "angular_second_minus_first": bootstrap_mean(np.median(ang[:, half:], axis=1) - np.median(ang[:, :half], axis=1)),
    }
    return out


def format_summary(report: dict) -> str:
    s = summarize(report)

    def ci(e):
        if "mean" not in e:
            return f"the stream overflowed on {e['overflowed']} of {s['n_texts']} texts"
        tail = f"; overflowed on {e['overflowed']} of {s['n_texts']} texts" if e.get("overflowed") else ""
        return f"{e['mean']:+.3f} [{e['lo']:+.3f}, {e['hi']:+.3f}]{tail}"

    h = s["halves"]
    lines = [f"{report['model']} on {s['n_texts']} texts of {report['n_tokens']} tokens; base cross-entropy "
             f"{s['base']['mean']:.3f} nats; costs in nats, mean over texts [95% bootstrap interval]",
             f"freeze every norm's 1/rms          {ci(s['freeze_all'])}",
             f"  ... position 0 kept per-token    {ci(s['freeze_keep0_all'])}",
             f"DyT fitted in every norm           {ci(s['dyt_all'])}",
             f"  ... position 0 kept per-token    {ci(s['dyt_keep0_all'])}",
             f"block drop, median cost per half   first {ci(h['first_median'])}, second {ci(h['second_median'])}",
             f"deep blocks among the {h['cheapest_k']} cheapest   {h['cheapest_deep']['mean']:.1f} "
             f"[{h['cheapest_deep']['lo']:.1f}, {h['cheapest_deep']['hi']:.1f}]; deep half cheaper on "
             f"{h['texts_deep_cheaper']} of {s['n_texts']} texts"]
    return "\n".join(lines)


def add_arguments(p) -> None:
    p.add_argument("--json", type=Path, metavar="PATH",
                   help="write the report as JSON to PATH (the site reads normref/results/normfree-cpu.json)")
    p.add_argument("--processes", type=positive_int, default=1,
                   help="texts measured at once, each in its own process on one torch thread (default 1)")


def run(args) -> int:
    report = run_all(args.processes)
    print()
    print(format_summary(report))
    mi = report["machine"]
    print(f"machine: {mi['cpu_model']}, {mi['cpu_cores']} cores, {mi['processes']} process(es) of 1 torch thread, "
          f"torch {mi['torch']}, {mi['date']}; {report['seconds']:.0f} s")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, separators=(",", ":")) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0
