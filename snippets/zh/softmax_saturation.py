"""softmax 饱和：固定一组分数的相对大小，只扫描它的整体尺度。

这是示意，不是从模型里读出的数。隐藏向量变长 c 倍，它算出的每个点积分数也变大 c 倍。
六个固定分数保持相对关系不变；c 越大，softmax 越集中到最大的那一个上，而每个梯度都
必须穿过的雅可比矩阵 diag(p) - p p^T 趋于零。
"""
import numpy as np

from normref.experiments.softmax import LABELS, SCORES, softmax, softmax_jacobian

print("scores s =", SCORES)
print(f"{'c':>5}  " + "  ".join(f"{a:>5}" for a in LABELS) + "    top  ||J||_2")
for c in (0.5, 1.0, 2.0, 4.0, 8.0, 16.0):
    p = softmax(c * SCORES)
    jac = np.linalg.norm(softmax_jacobian(p), 2)
    print(f"{c:>5g}  " + "  ".join(f"{v:5.3f}" for v in p) + f"  {p.max():5.3f}  {jac:7.4f}")
