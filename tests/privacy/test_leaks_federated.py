"""Leak tests for the federated env and agents (docs/design/threat-model.md; paper 2).

1. ``FederatedLinearBandit-v0``'s ``info`` never carries a realized reward (per silo or summed):
   with Gaussian reward noise the rewards are continuous, so any copy would show up exactly.
2. ``FedLinUCB`` with a private Gaussian protocol (``"ldp"``, ``"sdp-amplification"``) and the
   super agent's central protocol (``"central"``): what the server and the other silos receive
   at every sync, (W̃, Ũ), equals the exact sums of all silos' data so far plus noise that does
   not depend on the data — a coupling test: two instances with
   different raw data (another θ*, so other labels and other chosen actions), the same seeds →
   W̃ − ΣφφᵀΣ and Ũ − Σyφ are identical. (``"sdp-vector-sum"`` is not additive: its randomized
   rounding depends on the data by design; its unbiasedness and variance are tested in
   tests/privacy/test_federated_protocol.py.)
3. ``episode_info`` of the federated agents holds no realized reward.

Each check also runs on a deliberately leaky variant and must flag it (mutation tests).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from privenv.agents.federated import FedLinUCB, SuperAgent
from privenv.envs.federated import FederatedLinearBanditVectorEnv
from privenv.privacy.audit import info_holds_values

M, K, D, T, B, N = 3, 4, 3, 24, 4, 6  # silos, actions, dimension, horizon, batch, runs
REWARD_BOUND = 2.0


def _env(theta_seed: int = 0) -> FederatedLinearBanditVectorEnv:
    return FederatedLinearBanditVectorEnv(
        N, horizon=T, M=M, K=K, d=D, reward="silo", theta_seed=theta_seed,
        autoreset_mode=AutoresetMode.DISABLED)



# -- 1. the env's info ---------------------------------------------------------------------------


def test_federated_info_never_carries_realized_rewards() -> None:
    env = _env()
    env.reset(seed=3)
    rewards, infos = [], []
    for t in range(T):
        _, r, _, _, info = env.step(np.full((N, M), t % K))
        rewards.append(np.asarray(r))
        infos.append(info)
    raw = np.concatenate([np.ravel(r) for r in rewards])
    raw = np.concatenate([raw, np.stack(rewards).sum(axis=-1).ravel()])  # the summed reward too
    assert np.unique(raw).size > 0.9 * raw.size  # continuous (Gaussian noise)
    assert not any(info_holds_values(i, raw) for i in infos)
    # mutation: the check flags a raw per-silo reward copied into info
    assert info_holds_values({**infos[0], "silo_reward": rewards[0]}, raw)


# -- 2. coupling: (W̃, Ũ) = exact sums + data-independent noise -----------------------------------


def _server_noise(agent_cls: type, protocol: str, theta_seed: int, **kw: Any
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Play ``agent_cls`` on the env with θ* from ``theta_seed`` (same seeds otherwise); return,
    at every sync, W̃ − Σφφᵀ and Ũ − Σyφ (sums over all silos' users so far, with the agent's
    boundary: ‖φ‖ ≤ 1 and y clipped to [−b, b]) and the raw rewards."""
    env = _env(theta_seed)
    kw = {"epsilon": 1.0, "delta": 1e-4, **kw}
    agent = agent_cls(M=M, K=K, d=D, horizon=T, protocol=protocol, batch=B,
                      reward_bound=REWARD_BOUND, n_runs=N, **kw)
    obs, _ = env.reset(seed=11)
    agent.reset(seed=5)
    G, U = np.zeros((N, D, D)), np.zeros((N, D))
    noise_w, noise_u, raw = [], [], []
    for t in range(T):
        phi = np.asarray(obs, dtype=np.float64)
        a = agent.act_batch(obs)
        obs, r, *_ = env.step(a)
        x = phi[np.arange(N)[:, None], np.arange(M)[None, :], a]
        x = x / np.maximum(np.linalg.norm(x, axis=-1), 1.0)[..., None]
        y = np.clip(r, -REWARD_BOUND, REWARD_BOUND)
        G += np.einsum("nmi,nmj->nij", x, x)
        U += np.einsum("nm,nmi->ni", y, x)
        raw.append(r)
        agent.observe_batch(a, r, obs)
        if (t + 1) % B == 0:
            noise_w.append(agent.W_tilde - G)
            noise_u.append(agent.U_tilde - U)
    return np.stack(noise_w), np.stack(noise_u), np.stack(raw)


class _LeakyServer(FedLinUCB):
    """Mutant: the server's Ũ also carries a trace of the silos' raw local sums."""

    def _synchronize(self, due: np.ndarray) -> None:
        leak = 1e-3 * self.U_loc.sum(axis=1)
        super()._synchronize(due)
        self.U_tilde += leak


@pytest.mark.parametrize(("cls", "protocol"), [(FedLinUCB, "ldp"),
                                               (FedLinUCB, "sdp-amplification"),
                                               (SuperAgent, "central")])
def test_server_output_is_exact_sum_plus_data_independent_noise(cls: type, protocol: str
                                                                ) -> None:
    kw = {"epsilon": 0.5} if protocol == "sdp-amplification" else {}
    w0, u0, raw0 = _server_noise(cls, protocol, 0, **kw)
    w1, u1, raw1 = _server_noise(cls, protocol, 1, **kw)
    assert not np.allclose(raw0, raw1)  # the raw data differ
    assert np.abs(w0).max() > 1e-3  # there is noise at all
    np.testing.assert_allclose(w0, w1, rtol=0, atol=1e-9)
    np.testing.assert_allclose(u0, u1, rtol=0, atol=1e-9)


def test_coupling_check_flags_a_leaky_server() -> None:
    w0, u0, _ = _server_noise(_LeakyServer, "ldp", 0)
    w1, u1, _ = _server_noise(_LeakyServer, "ldp", 1)
    np.testing.assert_allclose(w0, w1, rtol=0, atol=1e-9)  # the Gram part is still clean
    assert not np.allclose(u0, u1, rtol=0, atol=1e-9)


# -- 3. episode_info ---------------------------------------------------------------------------


@pytest.mark.parametrize(("cls", "protocol"), [(FedLinUCB, "none"), (FedLinUCB, "ldp"),
                                               (SuperAgent, "central")])
def test_episode_info_holds_no_realized_reward(cls: type, protocol: str) -> None:
    env = _env()
    agent = cls(M=M, K=K, d=D, horizon=T, protocol=protocol, batch=B,
                reward_bound=REWARD_BOUND, n_runs=N)
    obs, _ = env.reset(seed=2)
    agent.reset(seed=2)
    raw = []
    for _ in range(T):
        a = agent.act_batch(obs)
        obs, r, *_ = env.step(a)
        raw.append(np.asarray(r).ravel())
        agent.observe_batch(a, r, obs)
    raw = np.concatenate(raw)
    assert not info_holds_values(agent.episode_info(), raw)
