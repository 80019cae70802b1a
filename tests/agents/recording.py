"""A private agent that records its actions, for the ledger tests of tests/agents (importable
from there: pytest puts a test file's folder on ``sys.path``)."""

from __future__ import annotations

import numpy as np


def recording(cls: type) -> type:
    """``cls`` recording its actions (a Python observe_batch: the step-by-step path)."""

    class Recording(cls):  # type: ignore[valid-type, misc]
        def reset_state(self):
            super().reset_state()
            self.actions = []

        def observe_batch(self, actions, rewards, observations):
            self.actions.append(np.array(actions))
            super().observe_batch(actions, rewards, observations)

    Recording.__name__ = f"Recording{cls.__name__}"
    return Recording
