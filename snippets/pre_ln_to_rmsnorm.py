"""Pre-LN ≡ Pre-RMSNorm: convert a small random Pre-LN model and print how far apart the two outputs are.

A 4-layer Pre-LN decoder (one-head causal attention and a ReLU MLP per block,
LayerNorm with random gains and biases, a final LayerNorm, a head) in plain
numpy, float64. The conversion of Jiang et al. (NeurIPS 2023, arXiv 2305.14858):
fold each norm's gain and bias into the linear map that reads it, make every
write to the residual stream zero-mean (embeddings, each branch's output
projection), then replace every LayerNorm by an RMSNorm. normref.equivalence
does the same on normref's TinyTransformer. Needs numpy only.
"""
import numpy as np

rng = np.random.default_rng(0)
d, T, L, V = 16, 8, 4, 11  # width, tokens, blocks, vocabulary


def layer_norm(x, g=1.0, b=0.0, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps) * g + b


def rms_norm(x, eps=1e-5):
    return x / np.sqrt((x ** 2).mean(-1, keepdims=True) + eps)


def attention(h, Wq, Wk, Wv):  # one head, causal; returns the values mixed, before the output projection
    s = (h @ Wq) @ (h @ Wk).T / np.sqrt(d)
    s = np.where(np.triu(np.ones((T, T), bool), 1), -np.inf, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ (h @ Wv)


def W(*shape):
    return rng.normal(0, 1 / np.sqrt(shape[0]), shape)


# The Pre-LN model. Row vectors: a linear map is x @ W + b; W has shape (d_in, d_out).
emb, pos, head = W(V, d) * 3 + 0.5, W(T, d), W(d, V)  # embeddings with a non-zero mean on purpose
blocks = [dict(g1=1 + 0.3 * rng.normal(size=d), b1=0.3 * rng.normal(size=d), Wq=W(d, d), Wk=W(d, d), Wv=W(d, d),
               Wo=W(d, d), bo=0.1 * rng.normal(size=d),
               g2=1 + 0.3 * rng.normal(size=d), b2=0.3 * rng.normal(size=d), W1=W(d, 4 * d), b1f=np.zeros(4 * d),
               W2=W(4 * d, d), b2f=0.1 * rng.normal(size=d)) for _ in range(L)]
gf, bf = 1 + 0.3 * rng.normal(size=d), 0.3 * rng.normal(size=d)


def pre_ln(ids):
    x = emb[ids] + pos
    for k in blocks:
        x = x + attention(layer_norm(x, k["g1"], k["b1"]), k["Wq"], k["Wk"], k["Wv"]) @ k["Wo"] + k["bo"]
        x = x + np.maximum(layer_norm(x, k["g2"], k["b2"]) @ k["W1"] + k["b1f"], 0) @ k["W2"] + k["b2f"]
    return layer_norm(x, gf, bf) @ head, x


def center(a):  # every d-vector this array writes into the stream, minus its mean over the d features
    return a - a.mean(-1, keepdims=True)


# The conversion. Attention's q, k, v read the same normalized h, so each folds the same gain and bias:
# (n * g + b) @ W = n @ (g[:, None] * W) + b @ W. Softmax ignores a constant added to a row of scores, but
# a bias on q or k is not such a constant, so q and k keep theirs; v's bias passes through the averaging
# (the attention weights sum to one) and lands on the output projection.
conv = []
for k in blocks:
    Wq, Wk, Wv = (k["g1"][:, None] * k[w] for w in ("Wq", "Wk", "Wv"))
    bq, bk, bv = (k["b1"] @ k[w] for w in ("Wq", "Wk", "Wv"))
    conv.append(dict(Wq=Wq, bq=bq, Wk=Wk, bk=bk, Wv=Wv, Wo=center(k["Wo"]), bo=center(bv @ k["Wo"] + k["bo"]),
                     W1=k["g2"][:, None] * k["W1"], b1f=k["b2"] @ k["W1"] + k["b1f"],
                     W2=center(k["W2"]), b2f=center(k["b2f"])))
emb_c, pos_c, head_c, bias_c = center(emb), center(pos), gf[:, None] * head, bf @ head


def pre_rmsnorm(ids):
    x = emb_c[ids] + pos_c
    for k in conv:
        h = rms_norm(x)
        s = (h @ k["Wq"] + k["bq"]) @ (h @ k["Wk"] + k["bk"]).T / np.sqrt(d)
        s = np.where(np.triu(np.ones((T, T), bool), 1), -np.inf, s)
        p = np.exp(s - s.max(-1, keepdims=True))
        x = x + (p / p.sum(-1, keepdims=True)) @ (h @ k["Wv"]) @ k["Wo"] + k["bo"]
        x = x + np.maximum(rms_norm(x) @ k["W1"] + k["b1f"], 0) @ k["W2"] + k["b2f"]
    return rms_norm(x) @ head_c + bias_c, x


ids = rng.integers(0, V, T)
(a, xa), (b, xb) = pre_ln(ids), pre_rmsnorm(ids)
print("largest |mean| of the Pre-LN stream at the end:     ", f"{np.abs(xa.mean(-1)).max():.3f}")
print("largest |mean| of the converted stream at the end:  ", f"{np.abs(xb.mean(-1)).max():.1e}")
print("largest |logit difference|, Pre-LN vs Pre-RMSNorm:  ", f"{np.abs(a - b).max():.1e}")
print("the same function (difference < 1e-10):            ", bool(np.abs(a - b).max() < 1e-10))
