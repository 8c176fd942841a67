"""RMSNorm by hand on four numbers, then with normref.

The worked example of the home page: x = [2, -1, 3, 0]. Square, average, take
the square root (that is the RMS), divide. The zero stays zero, the signs and
the proportions stay, only the size changes. Needs numpy; the last part needs
normref, which the site publishes as a wheel (the pip line is next to this code
on the site, and in the README).
"""
import numpy as np

x = np.array([2.0, -1.0, 3.0, 0.0])

# By hand: RMS(x) = sqrt(mean(x^2) + eps); eps is negligible here.
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

# The same with the reference implementation (gain g = 1 before training).
import normref

y_ref = normref.rms_norm(x)
print("normref.rms_norm(x) =", np.round(y_ref, 4))
print("agrees with by-hand :", np.allclose(y, y_ref))
