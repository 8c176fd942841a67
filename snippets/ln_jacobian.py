"""The LayerNorm Jacobian shrinks as the input grows (Xiong et al. 2020, Lemma 3).

LayerNorm's output does not depend on the input's length, so the longer x is,
the less a small change of x moves the output: the spectral norm of the
Jacobian is sqrt(d) / ||x - mean(x)||. We compute the Jacobian with torch
autograd for one vector stretched by c, and compare.
"""
import numpy as np
import torch
from torch.autograd.functional import jacobian

import normref.nn

d = 64
x = torch.from_numpy(np.random.default_rng(0).standard_normal(d))  # float64, seed 0
print(f"{'c':>6} {'||c x||':>9} {'||J||_2':>9} {'sqrt(d)/||c x - mean||':>24}")
for c in (0.1, 1.0, 10.0, 100.0):
    xc = c * x
    J = jacobian(lambda v: normref.nn.layer_norm(v), xc)
    spectral = torch.linalg.matrix_norm(J, ord=2).item()
    bound = d**0.5 / torch.linalg.vector_norm(xc - xc.mean()).item()
    print(f"{c:>6g} {torch.linalg.vector_norm(xc).item():>9.3f} {spectral:>9.4f} {bound:>24.4f}")
