"""初始化时每一层 FFN 权重的梯度范数：Post-LN 对比 Pre-LN。

收费站类比页那张图所做测量中的一个种子：用 normref.blocks 搭的 12 层解码器，随机词元，
下一词元交叉熵，一次反向传播。Post-LN 的梯度越靠近输出越大；Pre-LN 的更小，并随深度
缓慢减小。该页对多个种子取平均；这里打印种子 0。
"""
import torch

from normref.blocks import TinyConfig, TinyTransformer

torch.set_num_threads(1)  # 矩阵很小：一个线程比两个快
idx = torch.randint(64, (16, 33), generator=torch.Generator().manual_seed(10_000))
for placement in ("post", "pre"):
    torch.manual_seed(0)
    model = TinyTransformer(TinyConfig(placement=placement, n_layer=12, d_model=64, n_head=4, vocab_size=64))
    _, loss = model(idx[:, :-1], idx[:, 1:])
    loss.backward()
    norms = [sum(p.grad.square().sum() for p in b.mlp.parameters() if p.dim() == 2).sqrt().item() for b in model.blocks]
    print(f"{placement:>4}-LN  " + " ".join(f"{n:.2f}" for n in norms) + f"   layer 1 / layer 12 = {norms[0] / norms[-1]:.2f}")
