"""SmolLM2 on a batch of real sentences: BatchNorm's statistics, and the follow-up questions.

The interview page asks why Transformers normalize per token (LayerNorm,
RMSNorm) and not per feature over the batch (BatchNorm). Shen et al. (2020,
PowerNorm) reported that in NLP "statistics of NLP data across the batch
dimension exhibit large fluctuations throughout training". This module measures
the same thing on a trained model: the residual stream of SmolLM2-135M-Instruct,
the vectors its RMSNorms receive, on a fixed set of sentences of different
lengths in English and Chinese (:data:`TEXTS`, written for this measurement).

One forward pass over all sentences (right-padded into one batch: attention is
causal, so a real token never sees the padding after it) keeps

- the stream entering a few layers (the input of their attention norm), per
  real token, to compute batch statistics from random batches of sentences;
- the stream entering the final norm, to ask what the final norm and its gain
  do to the next-token distribution;
- the attention logits of a few layers, to show how large they get although
  each attention layer reads a normalized vector.

Everything returned is a small summary (no activations), cached on disk by the
weights' SHA-256, the code it imports (its import closure) and the library versions.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from .. import cache

_TEXTS_FILE = Path(__file__).with_suffix(".yml")
# The sentences are data, read at import: every result whose code imports this module (its memo, and
# layer_drop's, which reads TEXTS) keys on them (normref.cache: a module's declared files count as its source).
__cache_files__ = ("smollm2_batch.yml",)


def _texts() -> tuple[str, ...]:
    """The sentences of smollm2_batch.yml: ``{en: [...], zh: [...]}``, each a non-empty list of non-empty strings."""
    from .._yaml import yaml_load

    with _TEXTS_FILE.open(encoding="utf-8") as fh:
        raw = yaml_load(fh)
    if not isinstance(raw, dict) or set(raw) != {"en", "zh"}:
        raise ValueError(f"{_TEXTS_FILE.name}: expected {{en: [sentences], zh: [sentences]}}, got "
                         f"{sorted(raw) if isinstance(raw, dict) else type(raw).__name__}")
    for lang, items in raw.items():
        if not (isinstance(items, list) and items and all(isinstance(x, str) and x.strip() for x in items)):
            raise ValueError(f"{_TEXTS_FILE.name}: {lang}: expected a non-empty list of sentences, got {items!r}")
    return tuple(raw["en"]) + tuple(raw["zh"])

__all__ = ["TEXTS", "LAYERS", "BATCH_SIZES", "N_BATCHES", "PAD_BATCH", "smollm2_batch", "collect"]

MODEL = "smollm2-135m"
# What this experiment needs done first (normref.experiments.declared): SmolLM2's weights, converted once.
EXPERIMENTS = ("normref.models.checkpoint:convert('smollm2-135m')",)

# Sentences of different lengths, in the site's two languages: the English ones, then the Chinese ones, from
# smollm2_batch.yml beside this file (data, not code; see there).
TEXTS = _texts()

# The layers whose incoming stream we keep (the input of their attention norm):
# early, middle and late in SmolLM2's 30.
LAYERS = (3, 15, 27)
BATCH_SIZES = (2, 4, 8, 16)
N_BATCHES = 200  # random batches per batch size
N_PREDICT = 256  # next-token predictions scored in the final-norm measurement
PAD_BATCH = 8  # batch size of the padding measurement
SEED = 0
ATTN_LAYERS = (0, 3, 15, 27, 29)


def collect():
    """Run SmolLM2 over :data:`TEXTS`; return (streams, final stream, attention logits, token info).

    ``streams[layer]`` is an (n_tokens, d) float64 array of the real tokens'
    stream entering ``layer`` (sentence after sentence, in :data:`TEXTS`
    order); ``final`` the same entering the final norm; ``attn[layer]`` the
    largest |attention logit| (q·k/√head_dim, causal, real tokens only) per
    sentence and head, shape (texts, heads); ``info`` has, per real token, its
    sentence index and position, and the model itself.

    Sentences of similar length are run together, right-padded to the longest
    of their group: attention is causal, so a real token never sees the
    padding after it, and little compute goes to padding.
    """
    import torch

    from ..models.checkpoint import load
    from ..models.llama import apply_rope, rope_angles

    m = load(MODEL)
    net, cfg = m.net, m.cfg
    ids = [m.encode(t) for t in TEXTS]
    lengths = np.array([len(i) for i in ids])
    hd = cfg.head_dim
    per_text: dict[int, dict] = {}
    order = np.argsort(lengths, kind="stable")
    with torch.no_grad():
        for group in np.array_split(order, max(1, len(order) // 8)):
            T = int(lengths[group].max())
            batch = torch.zeros((len(group), T), dtype=torch.long)
            for r, t in enumerate(group):
                batch[r, :lengths[t]] = torch.tensor(ids[t])
            real = torch.arange(T)[None, :] < torch.as_tensor(lengths[group])[:, None]
            cos, sin = rope_angles(T, hd, cfg.rope_base)
            keep = torch.tril(torch.ones(T, T, dtype=torch.bool))[None, None] & real[:, None, :, None] \
                & real[:, None, None, :]
            x = net.tok_emb(batch)
            rec = {r: {"streams": {}, "attn": {}} for r in range(len(group))}
            for i, block in enumerate(net.blocks):
                if i in LAYERS:
                    for r, t in enumerate(group):
                        rec[r]["streams"][i] = x[r, :lengths[t]].double().numpy()
                if i in ATTN_LAYERS:
                    h = block.attn_norm(x)
                    B = h.shape[0]
                    q = block.attn.q(h).view(B, T, cfg.n_head, hd).transpose(1, 2)
                    k = block.attn.k(h).view(B, T, cfg.n_kv_head, hd).transpose(1, 2)
                    q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
                    k = k.repeat_interleave(cfg.n_head // cfg.n_kv_head, dim=1)
                    logits = (q @ k.transpose(-1, -2)) / math.sqrt(hd)  # (B, heads, T, T)
                    amax = logits.abs().masked_fill(~keep, 0).amax(dim=(-1, -2)).double().numpy()
                    for r in range(len(group)):
                        rec[r]["attn"][i] = amax[r]
                x = block(x, cos, sin)
            for r, t in enumerate(group):
                rec[r]["final"] = x[r, :lengths[t]].double().numpy()
                per_text[int(t)] = rec[r]
    texts = range(len(ids))
    streams = {i: np.concatenate([per_text[t]["streams"][i] for t in texts]) for i in LAYERS}
    attn = {i: np.stack([per_text[t]["attn"][i] for t in texts]) for i in ATTN_LAYERS}
    final = np.concatenate([per_text[t]["final"] for t in texts])
    text_of = np.repeat(np.arange(len(ids)), lengths)
    pos = np.concatenate([np.arange(n) for n in lengths])
    return streams, final, attn, {"text": text_of, "pos": pos, "lengths": lengths, "model": m, "ids": ids}


def _batch_stats(x: np.ndarray, rows: np.ndarray):
    """Per-feature mean and (population) variance over the given token rows, as BatchNorm computes them."""
    sub = x[rows]
    return sub.mean(0), sub.var(0)


def _bn_fluctuation(x: np.ndarray, text_of: np.ndarray, pos: np.ndarray, n_texts: int, rng) -> dict:
    """How BatchNorm's statistics and outputs move from batch to batch, per batch size.

    For each batch size B, N_BATCHES random batches of B sentences. Per batch:
    the per-feature mean and variance over its real tokens (padding excluded,
    the kindest case for BatchNorm). Reported per B:

    - ``var_cv``: coefficient of variation of a feature's batch variance across
      batches, median over features (how much the statistics fluctuate);
    - ``var_cv_massive``: the same for the feature that carries position 0's
      massive activation;
    - ``out_change``: for tokens that appear in two different batches, the
      relative difference of their BatchNorm outputs, median (a token's output
      depends on its batch-mates);
    - ``train_vs_inference``: the relative difference between a token's output
      with batch statistics (training) and with the statistics of all tokens
      (what running averages converge to at inference), median.

    Per-token statistics (LayerNorm, RMSNorm) depend on the token alone, so the
    same three quantities are zero for them; ``per_token_change`` checks it by
    normalizing every token once alone and once inside a batch.
    """
    mu_all, var_all = x.mean(0), x.var(0)
    eps = 1e-5
    massive = int(np.argmax(np.abs(x[pos == 0]).mean(0)))
    out = {"massive_dim": massive, "by_batch": {}}
    tokens_of = [np.flatnonzero(text_of == t) for t in range(n_texts)]
    for B in BATCH_SIZES:
        variances, changes, gaps = [], [], []
        for _ in range(N_BATCHES):
            texts = rng.choice(n_texts, size=B, replace=False)
            rows = np.concatenate([tokens_of[t] for t in texts])
            mu, var = _batch_stats(x, rows)
            variances.append(var)
            # One token of the batch, normalized with the batch's statistics and with another batch's.
            tok = rows[rng.integers(len(rows))]
            others = rng.choice(np.setdiff1d(np.arange(n_texts), [text_of[tok]]), size=B - 1, replace=False)
            rows2 = np.concatenate([tokens_of[text_of[tok]]] + [tokens_of[t] for t in others])
            mu2, var2 = _batch_stats(x, rows2)
            y1 = (x[tok] - mu) / np.sqrt(var + eps)
            y2 = (x[tok] - mu2) / np.sqrt(var2 + eps)
            yi = (x[tok] - mu_all) / np.sqrt(var_all + eps)
            changes.append(np.linalg.norm(y1 - y2) / np.linalg.norm(y1))
            gaps.append(np.linalg.norm(y1 - yi) / np.linalg.norm(yi))
        v = np.array(variances)
        cv = v.std(0) / v.mean(0)
        out["by_batch"][B] = {
            "var_cv": float(np.median(cv)), "var_cv_massive": float(cv[massive]),
            "out_change": float(np.median(changes)), "train_vs_inference": float(np.median(gaps)),
            "tokens_per_batch": float(np.mean([sum(len(tokens_of[t]) for t in rng.choice(n_texts, B, replace=False))
                                               for _ in range(50)])),
        }
    # Per-token statistics: normalize tokens alone and as part of a batch (RMSNorm without gain).
    some = rng.choice(len(x), size=64, replace=False)
    alone = np.stack([x[i] / np.sqrt(np.mean(x[i] ** 2) + eps) for i in some])
    together = x[some] / np.sqrt(np.mean(x[some] ** 2, axis=1, keepdims=True) + eps)
    out["per_token_change"] = float(np.max(np.abs(alone - together)))
    return out


def _padding(x: np.ndarray, text_of: np.ndarray, lengths: np.ndarray, rng) -> dict:
    """BatchNorm over a right-padded batch that forgets to mask the padding (zeros count as tokens).

    Per batch of PAD_BATCH sentences padded to the longest: the share of
    padding positions, and the ratio of each feature's variance with the zeros
    included to the variance over real tokens only (median over features).
    """
    n = len(lengths)
    tokens_of = [np.flatnonzero(text_of == t) for t in range(n)]
    shares, ratios = [], []
    for _ in range(N_BATCHES // 2):
        texts = rng.choice(n, size=PAD_BATCH, replace=False)
        real = np.concatenate([tokens_of[t] for t in texts])
        T = int(lengths[texts].max())
        n_pad = PAD_BATCH * T - len(real)
        padded = np.concatenate([x[real], np.zeros((n_pad, x.shape[1]))])
        shares.append(n_pad / (PAD_BATCH * T))
        ratios.append(np.median(padded.var(0) / x[real].var(0)))
    return {"pad_share": float(np.mean(shares)), "pad_share_max": float(np.max(shares)),
            "var_ratio": float(np.median(ratios)), "var_ratio_min": float(np.min(ratios))}


def _final_norm(final: np.ndarray, info: dict, rng) -> dict:
    """What the final RMSNorm and its gain do to the next-token distribution on the sentences.

    Cross-entropy of the real next tokens (each position predicts the next
    token of its sentence; N_PREDICT of them, drawn at random) and the mean
    top-1 probability, for heads on the same stream: the model as trained; the
    final norm with its gain replaced by ones; the gain replaced by one number,
    its RMS; and no final norm at all (the stream straight into the tied head).
    ``best_scalar`` is the single number c for which x̂·c (no per-feature gain)
    predicts best, searched on a log grid: how much of the gain is a
    temperature.
    """
    import torch

    m = info["model"]
    net = m.net
    g = net.final_norm.weight.detach().float()
    E = net.tok_emb.weight.detach().float()  # the LM head is tied to the embeddings
    text_of, pos, lengths = info["text"], info["pos"], info["lengths"]
    ids = np.concatenate([np.array(i) for i in info["ids"]])
    candidates = np.flatnonzero(pos < lengths[text_of] - 1)
    src = np.sort(rng.choice(candidates, size=min(N_PREDICT, len(candidates)), replace=False))
    tgt = torch.from_numpy(ids[src + 1])
    eps = float(m.cfg.eps)
    x = torch.from_numpy(final[src]).float()
    xhat = x * torch.rsqrt(x.square().mean(-1, keepdim=True) + eps)
    rms_g = float(g.square().mean().sqrt())

    def score(logits, stats=True):
        lse = torch.logsumexp(logits, dim=-1)  # one pass; no log-softmax matrix
        out = {"ce": float((lse - logits[torch.arange(len(tgt)), tgt]).mean())}
        if stats:
            out.update(top_p=float((logits.max(-1).values - lse).exp().mean()), logit_std=float(logits.std(-1).median()))
        return out

    with torch.no_grad():
        plain = xhat @ E.T  # x̂ with gain 1; a scalar gain c scales these logits by c
        heads = {"trained": ((xhat * g) @ E.T, xhat * g), "gain_ones": (plain, xhat),
                 "gain_scalar": (plain * rms_g, xhat * rms_g), "no_final_norm": (x @ E.T, x)}
        out = {"rms_gain": rms_g, "median_gain": float(g.median()), "n_predictions": int(len(src)),
               "stream_l2": float(x.norm(dim=-1).median()), "heads": {}}
        for name, (logits, vec) in heads.items():
            out["heads"][name] = {**score(logits), "vector_l2": float(vec.norm(dim=-1).median())}
        grid = 2.0 ** np.arange(-2.0, 3.01, 0.5)  # 0.25 … 8, half-octave steps
        ces = [score(plain * float(c), stats=False)["ce"] for c in grid]
        best = int(np.argmin(ces))
        out["best_scalar"] = {"c": float(grid[best]), "ce": float(ces[best])}
    return out


@cache.memo
def _smollm2_batch(weights_sha256: str, libs: str, texts: tuple[str, ...]) -> dict:
    """``texts`` (:data:`TEXTS`, what _compute reads) is here for the cache key: the sentences live in a data file."""
    from . import one_thread

    # One thread: on this project's busy 2-core machine, torch's second thread spins
    # and waits; we measured this forward at 4.7 s on one thread and 68 s on two
    # (load average about 8).
    with one_thread():
        return _compute()


def _compute() -> dict:
    streams, final, attn, info = collect()
    rng = np.random.default_rng(SEED)
    n_texts = len(TEXTS)
    out = {
        "n_texts": n_texts, "n_tokens": int(len(info["pos"])), "lengths": [int(v) for v in info["lengths"]],
        "d": int(final.shape[1]), "layers": {}, "attn_max": {}, "model": info["model"].label,
        "weights": info["model"].weights_label,
    }
    for layer, x in streams.items():
        out["layers"][layer] = {
            "batchnorm": _bn_fluctuation(x, info["text"], info["pos"], n_texts, rng),
            "padding": _padding(x, info["text"], info["lengths"], rng),
        }
    for layer, a in attn.items():
        out["attn_max"][layer] = {"max": float(a.max()), "median_head": float(np.median(a.max(0)))}
    out["final_norm"] = _final_norm(final, info, rng)
    return out


def smollm2_batch() -> dict:
    """The batch measurements on SmolLM2 (see the module docstring), from the disk cache when possible."""
    return _smollm2_batch(*_inputs())


def _inputs() -> tuple:
    """What the measurements are keyed on besides their code: the weights file's SHA-256, the versions that compute
    them and the texts."""
    from ..models.checkpoint import spec
    from ..models.files import file_sha256

    return file_sha256(spec(MODEL).weights_path), cache.versions_hash(("torch", "numpy", "gguf", "tokenizers")), TEXTS


smollm2_batch.step_for = lambda: _smollm2_batch.step_for(*_inputs())  # its cache step, computing nothing (normref.results.committed)
