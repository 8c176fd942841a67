"""Gradient norm of each layer's FFN weights at initialization, Post-LN vs Pre-LN.

One seed of the measurement drawn on the toll-booth page: a 12-layer decoder
from normref.blocks, random tokens, next-token cross-entropy, one backward
pass. Post-LN's gradients grow towards the output; Pre-LN's are smaller and
shrink slowly with depth. The page averages several seeds; this prints seed 0.
"""
import torch

from normref.blocks import TinyConfig, TinyTransformer

torch.set_num_threads(1)  # tiny matrices: one thread is faster than two
idx = torch.randint(64, (16, 33), generator=torch.Generator().manual_seed(10_000))
for placement in ("post", "pre"):
    torch.manual_seed(0)
    model = TinyTransformer(TinyConfig(placement=placement, n_layer=12, d_model=64, n_head=4, vocab_size=64))
    _, loss = model(idx[:, :-1], idx[:, 1:])
    loss.backward()
    norms = [sum(p.grad.square().sum() for p in b.mlp.parameters() if p.dim() == 2).sqrt().item() for b in model.blocks]
    print(f"{placement:>4}-LN  " + " ".join(f"{n:.2f}" for n in norms) + f"   layer 1 / layer 12 = {norms[0] / norms[-1]:.2f}")
