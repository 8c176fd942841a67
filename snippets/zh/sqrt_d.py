"""为什么归一化后的向量长度是 sqrt(d)，以及增益会把它变成多少。

除以 RMS 之后，d 个元素的平方平均为 1，所以平方和为 d，长度就是 sqrt(d)，与输入原来
多长无关。之后学到的增益 g 逐元素相乘，长度变为约 sqrt(d) * RMS(g)。这里的增益是
人造的（1 + 0.3 * 噪声，种子为 0），不是训练出来的。
"""
import numpy as np

import normref

d = 1024
rng = np.random.default_rng(0)
x = 7.0 * rng.standard_normal(d)  # 一个很长的向量：长度远离 sqrt(d)
g = 1.0 + 0.3 * rng.standard_normal(d)  # 代替学到的增益

y = normref.rms_norm(x)
print("L2(x)              =", round(float(np.linalg.norm(x)), 2))
print("mean(y^2)          =", round(float(np.mean(y**2)), 6))
print("L2(y)              =", round(float(np.linalg.norm(y)), 4), " sqrt(d) =", np.sqrt(d))

yg = normref.rms_norm(x, gain=g)
print("RMS(g)             =", round(float(normref.rms(g)), 4))
print("L2(y * g)          =", round(float(np.linalg.norm(yg)), 4))
print("sqrt(d) * RMS(g)   =", round(float(np.sqrt(d) * normref.rms(g)), 4))
