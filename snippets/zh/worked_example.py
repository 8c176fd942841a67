"""手算四个数的 RMSNorm，再用 normref 算一遍。

首页的算例：x = [2, -1, 3, 0]。先平方、再取平均、再开方（这就是 RMS），最后相除。
0 仍是 0，符号和比例都不变，变的只有大小。需要 numpy；最后一段还需要 normref，
本站把它发布成 wheel（站上这段代码旁边和 README 里都有 pip 安装命令）。
"""
import numpy as np

x = np.array([2.0, -1.0, 3.0, 0.0])

# 手算：RMS(x) = sqrt(mean(x^2) + eps)；这里 eps 小到可以忽略。
squares = x**2
mean_sq = squares.mean()
rms = np.sqrt(mean_sq + 1e-6)
y = x / rms
print("x^2       =", squares)
print("mean(x^2) =", mean_sq)
print("RMS(x)    =", round(rms, 4))
print("y         =", np.round(y, 4))
print("RMS(y)    =", round(float(np.sqrt(np.mean(y**2))), 4), " L2(y) =", round(float(np.linalg.norm(y)), 4),
      " sqrt(d) =", np.sqrt(x.size))

# 用参考实现再算一遍（训练之前增益 g = 1）。
import normref

y_ref = normref.rms_norm(x)
print("normref.rms_norm(x) =", np.round(y_ref, 4))
print("agrees with by-hand :", np.allclose(y, y_ref))
