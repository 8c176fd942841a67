"""LayerNorm 就是对中心化之后的向量做 RMSNorm。

仍用首页的算例 x = [2, -1, 3, 0]。LayerNorm 先减去均值，再除以标准差（即中心化后
向量的 RMS），最后乘增益、加偏置。所以增益为 1、偏置为 0 时，
LayerNorm(x) = RMSNorm(x - mean(x))；RMSNorm 只是省掉了减均值这一步。
需要 numpy 和 normref。
"""
import numpy as np

import normref
from normref.stats import std, variance

x = np.array([2.0, -1.0, 3.0, 0.0])

mean = x.mean()
centred = x - mean
print("mean(x)      =", mean)
print("x - mean(x)  =", centred)
print("variance(x)  =", float(variance(x)), "  (mean of the squared centred values)")
print("std(x)       =", round(float(std(x)), 4), " (its square root)")

ln = normref.layer_norm(x)  # 增益为 1，无偏置，eps = 1e-5
rms_of_centred = normref.rms_norm(centred, eps=1e-5)
print("LayerNorm(x)            =", np.round(ln, 4))
print("RMSNorm(x - mean(x))    =", np.round(rms_of_centred, 4))
print("the same                :", np.allclose(ln, rms_of_centred))
print("RMSNorm(x), no centring =", np.round(normref.rms_norm(x), 4))
print("L2 of LayerNorm(x)      =", round(float(np.linalg.norm(ln)), 4), " sqrt(d) =", np.sqrt(x.size))
