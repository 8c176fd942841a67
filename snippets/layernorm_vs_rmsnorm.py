"""LayerNorm is RMSNorm applied to the centred vector.

Take the worked example x = [2, -1, 3, 0]. LayerNorm subtracts the mean, divides
by the standard deviation (the RMS of the centred vector), then applies a gain
and a bias. So LayerNorm(x) = RMSNorm(x - mean(x)) when the gain is 1 and the
bias is 0; RMSNorm skips the mean. Needs numpy and normref.
"""
import numpy as np

import normref
from normref.stats import std, variance

x = np.array([2.0, -1.0, 3.0, 0.0])

mean = x.mean()
centred = x - mean
print("mean(x)      =", mean)
print("x - mean(x)  =", centred)
print("variance(x)  =", float(variance(x)), "  (mean of the squared centred values)")
print("std(x)       =", round(float(std(x)), 4), " (its square root)")

ln = normref.layer_norm(x)  # gain 1, no bias, eps = 1e-5
rms_of_centred = normref.rms_norm(centred, eps=1e-5)
print("LayerNorm(x)            =", np.round(ln, 4))
print("RMSNorm(x - mean(x))    =", np.round(rms_of_centred, 4))
print("the same                :", np.allclose(ln, rms_of_centred))
print("RMSNorm(x), no centring =", np.round(normref.rms_norm(x), 4))
print("L2 of LayerNorm(x)      =", round(float(np.linalg.norm(ln)), 4), " sqrt(d) =", np.sqrt(x.size))
