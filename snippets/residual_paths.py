"""Post-LN and Pre-LN, and the identity path of Pre-LN.

Builds a 4-layer stack of each kind with normref.blocks (one token, so each
attention attends only to itself). For Pre-LN it checks the unrolled sum
x_L = x_0 + sum of the branch outputs, then computes the Jacobian dx_L/dx_0:
with every branch switched off (output projections zero) Pre-LN's Jacobian is
exactly the identity, while Post-LN's is not, because its norms sit on the path.
"""
import torch
from torch.autograd.functional import jacobian

from normref.blocks import BlockConfig, make_block

torch.manual_seed(0)
d, L = 16, 4
blocks = {p: [make_block(BlockConfig(d_model=d, n_head=2, placement=p)) for _ in range(L)] for p in ("pre", "post")}


def run(stack, x):
    for block in stack:
        x = block(x)
    return x


x0 = torch.randn(1, 1, d)  # (batch, tokens, d)

# The unrolled sum: x_L = x_0 + sum over sub-layers of f(LN(x)).
x, branches = x0, torch.zeros_like(x0)
for b in blocks["pre"]:
    a = b.attn(b.ln_1(x))
    x = x + a
    m = b.mlp(b.ln_2(x))
    x = x + m
    branches = branches + a + m
print("Pre-LN:  x_L == x_0 + sum of branches:", torch.allclose(run(blocks["pre"], x0), x0 + branches, atol=1e-5))

for p in ("pre", "post"):
    J = jacobian(lambda v: run(blocks[p], v.view(1, 1, d)).view(d), x0.view(d))
    print(f"{p:>4}-LN, at initialization  : ||dx_L/dx_0 - I|| = {torch.linalg.matrix_norm(J - torch.eye(d)):.3f}")

# Switch every branch off: f = 0. What is left is the path itself.
with torch.no_grad():
    for p in blocks:
        for b in blocks[p]:
            b.attn.proj.weight.zero_(), b.attn.proj.bias.zero_(), b.mlp.proj.weight.zero_(), b.mlp.proj.bias.zero_()
for p in ("pre", "post"):
    J = jacobian(lambda v: run(blocks[p], v.view(1, 1, d)).view(d), x0.view(d))
    print(f"{p:>4}-LN, branches off: dx_L/dx_0 == I ? {torch.allclose(J, torch.eye(d), atol=1e-6)}"
          f"  (||J - I|| = {torch.linalg.matrix_norm(J - torch.eye(d)):.3f})")
