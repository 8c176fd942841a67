"""输入越大，LayerNorm 的雅可比矩阵越小（Xiong 等人 2020，引理 3）。

LayerNorm 的输出与输入的长度无关，所以 x 越长，x 的一点小变化对输出的影响就越小：
雅可比矩阵的谱范数是 sqrt(d) / ||x - mean(x)||。我们把一个向量放大 c 倍，用 torch
的自动求导算出雅可比矩阵，再与这个式子比较。
"""
import numpy as np
import torch
from torch.autograd.functional import jacobian

import normref.nn

d = 64
x = torch.from_numpy(np.random.default_rng(0).standard_normal(d))  # float64，种子为 0
print(f"{'c':>6} {'||c x||':>9} {'||J||_2':>9} {'sqrt(d)/||c x - mean||':>24}")
for c in (0.1, 1.0, 10.0, 100.0):
    xc = c * x
    J = jacobian(lambda v: normref.nn.layer_norm(v), xc)
    spectral = torch.linalg.matrix_norm(J, ord=2).item()
    bound = d**0.5 / torch.linalg.vector_norm(xc - xc.mean()).item()
    print(f"{c:>6g} {torch.linalg.vector_norm(xc).item():>9.3f} {spectral:>9.4f} {bound:>24.4f}")
