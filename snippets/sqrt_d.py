"""Why a normalized vector has length sqrt(d), and what the gain does to it.

After dividing by the RMS, the squares of the d entries average 1, so they sum
to d and the length is sqrt(d), whatever the input's length was. A learned gain
g then multiplies each entry; the length becomes about sqrt(d) * RMS(g). The
gain here is synthetic (1 + 0.3 * noise, seed 0), not a trained one.
"""
import numpy as np

import normref

d = 1024
rng = np.random.default_rng(0)
x = 7.0 * rng.standard_normal(d)  # a long vector: its length is far from sqrt(d)
g = 1.0 + 0.3 * rng.standard_normal(d)  # a stand-in for learned gains

y = normref.rms_norm(x)
print("L2(x)              =", round(float(np.linalg.norm(x)), 2))
print("mean(y^2)          =", round(float(np.mean(y**2)), 6))
print("L2(y)              =", round(float(np.linalg.norm(y)), 4), " sqrt(d) =", np.sqrt(d))

yg = normref.rms_norm(x, gain=g)
print("RMS(g)             =", round(float(normref.rms(g)), 4))
print("L2(y * g)          =", round(float(np.linalg.norm(yg)), 4))
print("sqrt(d) * RMS(g)   =", round(float(np.sqrt(d) * normref.rms(g)), 4))
