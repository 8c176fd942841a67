"""Post-LN 与 Pre-LN，以及 Pre-LN 的恒等路径。

用 normref.blocks 各搭一个 4 层的堆叠（只有一个词元，所以每个注意力只关注它自己）。
对 Pre-LN，先验证展开后的和 x_L = x_0 + 各分支输出之和，再计算雅可比矩阵 dx_L/dx_0：
把每个分支都关掉（输出投影置零）之后，Pre-LN 的雅可比矩阵恰好是单位矩阵；Post-LN 的
则不是，因为它的归一化就在这条路径上。
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


x0 = torch.randn(1, 1, d)  # (批, 词元, d)

# 展开后的和：x_L = x_0 + 对各子层求和 f(LN(x))。
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

# 关掉每个分支：f = 0。剩下的就是这条路径本身。
with torch.no_grad():
    for p in blocks:
        for b in blocks[p]:
            b.attn.proj.weight.zero_(), b.attn.proj.bias.zero_(), b.mlp.proj.weight.zero_(), b.mlp.proj.bias.zero_()
for p in ("pre", "post"):
    J = jacobian(lambda v: run(blocks[p], v.view(1, 1, d)).view(d), x0.view(d))
    print(f"{p:>4}-LN, branches off: dx_L/dx_0 == I ? {torch.allclose(J, torch.eye(d), atol=1e-6)}"
          f"  (||J - I|| = {torch.linalg.matrix_norm(J - torch.eye(d)):.3f})")
