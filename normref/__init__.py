"""normref: the small, tested reference package behind the normref docs site.

``normref.rms_norm`` and ``normref.layer_norm`` are the readable numpy
references; ``normref.nn`` has the torch versions for models (imported on
demand, so the numpy part works without torch).
"""

from .norms import layer_norm, rms_norm
from .stats import l2, mean_l2_per_token, rms, std, variance

__version__ = "0.1.0"
__all__ = ["rms_norm", "layer_norm", "rms", "l2", "mean_l2_per_token", "std", "variance"]
