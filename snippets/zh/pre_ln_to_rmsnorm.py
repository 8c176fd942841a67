"""Pre-LN ≡ Pre-RMSNorm：把一个随机初始化的小 Pre-LN 模型换成 Pre-RMSNorm，打印两者输出相差多少。

一个 4 层的 Pre-LN 解码器（每个块有单头因果注意力和 ReLU MLP，LayerNorm 的增益和偏置
随机取值，最后是最终 LayerNorm 和 LM 头），纯 numpy、float64 实现。转换方法
出自 Jiang 等人（NeurIPS 2023，arXiv 2305.14858）：把每个归一化的增益和偏置并进读取它的
线性映射，让写进残差流的每一项都变成零均值（嵌入，以及每个分支的输出投影），再把每个
LayerNorm 换成 RMSNorm。normref.equivalence 在 normref 的 TinyTransformer 上做同样的事。
只需要 numpy。
"""
import numpy as np

rng = np.random.default_rng(0)
d, T, L, V = 16, 8, 4, 11  # 隐藏维度、词元数、块数、词表大小


def layer_norm(x, g=1.0, b=0.0, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps) * g + b


def rms_norm(x, eps=1e-5):
    return x / np.sqrt((x ** 2).mean(-1, keepdims=True) + eps)


def attention(h, Wq, Wk, Wv):  # 单头、因果；返回混合后的值向量，尚未乘输出投影
    s = (h @ Wq) @ (h @ Wk).T / np.sqrt(d)
    s = np.where(np.triu(np.ones((T, T), bool), 1), -np.inf, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ (h @ Wv)


def W(*shape):
    return rng.normal(0, 1 / np.sqrt(shape[0]), shape)


# Pre-LN 模型。向量按行写：线性映射是 x @ W + b，W 的形状为 (d_in, d_out)。
emb, pos, head = W(V, d) * 3 + 0.5, W(T, d), W(d, V)  # 故意让嵌入的均值不为 0
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


def center(a):  # 这个数组写进残差流的每个 d 维向量，各自减去它在 d 个特征上的均值
    return a - a.mean(-1, keepdims=True)


# 转换。注意力的 q、k、v 读的是同一个归一化后的 h，所以各自并入同一组增益和偏置：
# (n * g + b) @ W = n @ (g[:, None] * W) + b @ W。给一行分数加上同一个常数，softmax 不受影响；
# 但 q 或 k 上的偏置不是这样的常数，所以 q 和 k 各自保留偏置。v 的偏置穿过加权平均
# （注意力权重之和为 1），落到输出投影上。
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
