"""Small statistics shared by the result summaries."""

from __future__ import annotations

from typing import Any

import numpy as np


def sample_sd(x: Any) -> float:
    """The sample standard deviation (ddof = 1) over runs; 0 for a single run."""
    x = np.asarray(x, dtype=float)
    return float(x.std(ddof=1)) if len(x) > 1 else 0.0
