"""Softmax saturation: one fixed score pattern, its overall size swept.

An illustration, not a model reading. If a hidden vector grows c times longer,
every dot-product score it produces grows c times. Six fixed scores keep their
pattern; as c grows the softmax collapses onto the largest one, and the
Jacobian diag(p) - p p^T, through which every gradient must pass, goes to zero.
"""
import numpy as np

from normref.experiments.softmax import LABELS, SCORES, softmax, softmax_jacobian

print("scores s =", SCORES)
print(f"{'c':>5}  " + "  ".join(f"{a:>5}" for a in LABELS) + "    top  ||J||_2")
for c in (0.5, 1.0, 2.0, 4.0, 8.0, 16.0):
    p = softmax(c * SCORES)
    jac = np.linalg.norm(softmax_jacobian(p), 2)
    print(f"{c:>5g}  " + "  ".join(f"{v:5.3f}" for v in p) + f"  {p.max():5.3f}  {jac:7.4f}")
