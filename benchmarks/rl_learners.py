"""Generic RL learners on the RL ids at their defaults, beside the zoo (docs/results/rl.md).

Run: ``nice -n 19 python benchmarks/rl_learners.py --out rl-learners.jsonl`` (one training run
at a time, torch on one thread; 1–4 CPU-minutes per run, each row records its wall and CPU
seconds), then
``python benchmarks/rl_learners.py --table rl-learners.jsonl`` prints the markdown table.

Each learner trains ``--steps`` (5·10⁴) steps on an RL id at its default instance (level 0), with
training seeds 0, 1, 2, and its greedy policy is scored by :func:`privenv.rl.evaluate` on the same
fresh episodes (seed 10 000 + i) as the zoo's agents and the uniform reference:

* learners: SB3's PPO, A2C and DQN with their stock hyperparameters, and ``cleanrl-ppo`` — the
  single-file PPO of ``examples/ppo_single_file.py`` with CleanRL's ``ppo.py`` defaults
  (learning rate 2.5·10⁻⁴, 4 envs × 128 steps, 4 minibatches, 4 epochs; a Gymnasium
  ``SyncVectorEnv`` of ``gym.make`` thunks: it knows nothing of privenv);
* settings: ``defaults``; ``vecnormalize`` (SB3's ``VecNormalize`` with its defaults, observation
  and reward, statistics frozen for the evaluation; ``vecnormalize-obs``: ``norm_reward=False``,
  ``vecnormalize-reward``: ``norm_obs=False``); and the common changes ``gamma=0.9`` (every SB3
  learner), ``dqn-slow-start`` (DQN with ``learning_starts=1000, exploration_fraction=0.3``,
  which learned nothing in 5·10⁴ steps on the former default) and ``dqn-target-1000`` (DQN with
  ``target_update_interval=1000`` instead of 10⁴);
* SB3 trains on 4 sub-envs of the native vector path (:func:`privenv.rl.make_sb3_vec_env`, the
  same runs as ``make_vec_env(id, 4, seed)``).
* ``--env-kwargs '{"horizon": 30, ...}'`` trains and scores on another instance (design runs,
  as for best-arm identification's default in docs/guides/rl.md); such rows record it and the
  table leaves them out.

Reference rows: ``uniform`` (uniformly random actions; best-arm identification: a uniformly random
action of the id's ``Discrete(K + 1)``, which stops after K + 1 steps on average with the
empirical best arm of the few pulls before) and the
classic agent — UCB1 (Huber), TTUCB (best-arm identification, δ = 0.1), KL-UCB (Bernoulli),
LinUCB (linear), FedLinUCB (federated) — with their defaults, on the same episodes. TTUCB's
δ-correct stopping rule needs more pulls than the default budget, so it runs with a budgeted
recommendation (:func:`privenv.rl.evaluate`'s ``stop_at_budget``): it samples as TTUCB and, if
its rule has not stopped by the last pull the budget allows, stops there with the empirical
best arm.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

RL_IDS = ("HuberBandit-RL-v0", "BestArmIdentification-RL-v0", "BernoulliBandit-RL-v0",
          "LinearContextualBandit-RL-v0", "FederatedLinearBandit-RL-v0")
CLASSIC = {"HuberBandit-RL-v0": ("ucb1", {}), "BestArmIdentification-RL-v0": ("ttucb",
                                                                               {"delta": 0.1}),
           "BernoulliBandit-RL-v0": ("kl-ucb", {}),
           "LinearContextualBandit-RL-v0": ("linucb", {}),
           "FederatedLinearBandit-RL-v0": ("fed-linucb", {})}
LEARNERS = ("ppo", "a2c", "dqn", "cleanrl-ppo")
#: setting → learners it applies to
SETTINGS = {"defaults": LEARNERS, "vecnormalize": ("ppo", "a2c", "dqn"),
            "vecnormalize-obs": ("ppo", "a2c", "dqn"), "vecnormalize-reward": ("ppo", "a2c", "dqn"),
            "gamma=0.9": ("ppo", "a2c", "dqn"), "dqn-slow-start": ("dqn",),
            "dqn-target-1000": ("dqn",)}
#: the learner's keyword arguments of each setting that changes a hyperparameter
HYPERPARAMETERS: dict[str, dict[str, Any]] = {
    "gamma=0.9": {"gamma": 0.9},
    "dqn-slow-start": {"learning_starts": 1000, "exploration_fraction": 0.3},
    "dqn-target-1000": {"target_update_interval": 1000}}
#: VecNormalize's keyword arguments of each vecnormalize setting (the others: none)
VECNORMALIZE = {"vecnormalize": {}, "vecnormalize-obs": {"norm_reward": False},
                "vecnormalize-reward": {"norm_obs": False}}
SEEDS = (0, 1, 2)
N_ENVS = 4


def episodes_for(env_id: str) -> int:
    """Evaluation episodes: 200 of best-arm identification (short), 20 of the others (T = 10³)."""
    return 200 if env_id.startswith("BestArm") else 20


def _sb3_train(algo: str, env_id: str, seed: int, steps: int, setting: str,
               env_kwargs: dict[str, Any] | None = None) -> Any:
    import stable_baselines3 as sb3
    from stable_baselines3.common.vec_env import VecNormalize

    from privenv.rl import make_sb3_vec_env

    env = make_sb3_vec_env(env_id, n_envs=N_ENVS, seed=seed, env_kwargs=env_kwargs)
    if setting in VECNORMALIZE:
        env = VecNormalize(env, **VECNORMALIZE[setting])
    kwargs = HYPERPARAMETERS.get(setting, {})
    cls = {"ppo": sb3.PPO, "a2c": sb3.A2C, "dqn": sb3.DQN}[algo]
    model = cls("MlpPolicy", env, seed=seed, device="cpu", **kwargs).learn(steps)
    if setting in VECNORMALIZE:  # the greedy policy on normalized observations
        env.training = False
        norm = env

        def policy(obs: np.ndarray) -> np.ndarray:
            return model.predict(norm.normalize_obs(obs), deterministic=True)[0]

        return policy
    return model


def _cleanrl_train(env_id: str, seed: int, steps: int,
                   env_kwargs: dict[str, Any] | None = None) -> Any:
    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
    from ppo_single_file import ppo_single_file

    agent, _, _ = ppo_single_file(f"privenv:{env_id}", env_kwargs or {}, steps, seed=seed,
                                  num_envs=4,
                                  num_steps=128, learning_rate=2.5e-4)

    def policy(obs: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return agent.actor(torch.as_tensor(obs, dtype=torch.float32)).argmax(-1).numpy()

    return policy


def _bai_uniform(env_id: str) -> Any:
    import gymnasium as gym

    n = gym.make(env_id).action_space.n
    rng = np.random.default_rng(0)
    return lambda obs: rng.integers(0, n, len(obs))


def _row(evaluation: Any, **fields: Any) -> dict[str, Any]:
    row = {**fields, "per_step": evaluation.per_step, "return": evaluation.mean_return,
           "length": float(evaluation.lengths.mean())}
    if evaluation.correct is not None:
        row.update(correct=evaluation.accuracy, stopped=float(evaluation.stopped.mean()))
    return row


def references(out: Any, ids: tuple[str, ...] = RL_IDS) -> None:
    from privenv.rl import evaluate

    for env_id in ids:
        n = episodes_for(env_id)
        uniform = _bai_uniform(env_id) if env_id.startswith("BestArm") else "uniform"
        name, params = CLASSIC[env_id]
        for label, policy, p in (("uniform", uniform, None), (name, name, params)):
            # best-arm identification: the classic agent answers at the budget's last pull
            budgeted = env_id.startswith("BestArm") and p is not None
            extra = {"stop_at_budget": True} if budgeted else {}
            row = _row(evaluate(policy, env_id, n_episodes=n, agent_params=p, **extra),
                       env=env_id, learner=label, setting="reference", seed=None, steps=0,
                       **extra)
            print(json.dumps(row), file=out, flush=True)


def run(out: Any, steps: int, ids: tuple[str, ...], learners: tuple[str, ...],
        settings: tuple[str, ...], seeds: tuple[int, ...],
        env_kwargs: dict[str, Any] | None = None) -> None:
    """Train and score every (setting, id, learner, seed), a JSON row each; ``env_kwargs``
    (another instance than level 0, for design experiments) is recorded in the rows, which the
    table leaves out."""
    import torch

    from privenv.rl import evaluate

    torch.set_num_threads(1)
    for setting in settings:
        for env_id in ids:
            for learner in learners:
                if learner not in SETTINGS[setting]:
                    continue
                for seed in seeds:
                    start, cpu = time.perf_counter(), time.process_time()
                    if learner == "cleanrl-ppo":
                        policy = _cleanrl_train(env_id, seed, steps, env_kwargs)
                    else:
                        policy = _sb3_train(learner, env_id, seed, steps, setting, env_kwargs)
                    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
                    extra = {"env_kwargs": env_kwargs} if env_kwargs else {}
                    row = _row(evaluate(policy, env_id, n_episodes=episodes_for(env_id),
                                        **(env_kwargs or {})),
                               env=env_id, learner=learner, setting=setting, seed=seed,
                               steps=steps, train_seconds=round(seconds, 1),
                               train_cpu_seconds=round(cpu, 1), **extra)
                    print(json.dumps(row), file=out, flush=True)


def vecnormalize_statistics(env_id: str = "HuberBandit-RL-v0", steps: int = 50_000) -> str:
    """What SB3's ``VecNormalize`` (defaults: γ = 0.99) divides by on ``env_id``'s default: the
    standard deviation of the γ-discounted return it tracks, after ``steps`` env-steps (4
    sub-envs, seed 0) of two policies — uniformly random arms, and always arm 0 (the best arm of
    the Huber default) — beside the reward it receives; and the per-feature standard deviations
    of the observations (those of arms a policy never pulls are 0: ``VecNormalize`` divides
    them by √ε = 10⁻⁴)."""
    from stable_baselines3.common.vec_env import VecNormalize

    from privenv.rl import make_sb3_vec_env

    lines = []
    for name in ("uniform", "arm 0"):
        env = VecNormalize(make_sb3_vec_env(env_id, n_envs=N_ENVS, seed=0))
        env.reset()
        rng = np.random.default_rng(0)
        n = env.action_space.n
        raw, normalized = [], []
        for _ in range(steps // N_ENVS):
            actions = rng.integers(0, n, N_ENVS) if name == "uniform" else np.zeros(N_ENVS, int)
            normalized.append(env.step(actions)[1])
            raw.append(env.get_original_reward())
        r, z = np.concatenate(raw), np.concatenate(normalized)
        lines.append(
            f"{env_id} {name}: reward mean {r.mean():.3f} std {r.std():.3f}; discounted return "
            f"mean {env.ret_rms.mean:.1f} std {np.sqrt(env.ret_rms.var):.2f} -> normalized "
            f"reward mean {z.mean():.4f} std {z.std():.4f}; observation std "
            f"{np.array2string(np.sqrt(env.obs_rms.var), precision=3)}")
    return "\n".join(lines)


def table(path: str) -> str:
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    rows = [r for r in rows if not r.get("env_kwargs")]  # level 0 only
    lines = []
    for env_id in RL_IDS:
        mine = [r for r in rows if r["env"] == env_id]
        if not mine:
            continue
        bai = env_id.startswith("BestArm")
        refs = {r["learner"]: r for r in mine if r["setting"] == "reference"}
        classic = refs.get(CLASSIC[env_id][0])
        lines += [f"\n**{env_id}** (level 0)\n"]
        key = "return" if bai else "per_step"
        head = ("| learner | setting | steps | seeds | return (mean; min–max) |" if bai else
                "| learner | setting | steps | seeds | per-step reward (mean; min–max) |")
        head += " correct | pulls |" if bai else " vs classic |"
        lines += [head, "|" + "---|" * (head.count("|") - 1)]
        for r in refs.values():
            extra = (f" {r['correct']:.2f} | {r['length'] - r['stopped']:.1f} |" if bai else
                     f" {r['per_step'] / classic['per_step']:.2f} |" if classic else " |")
            zoo = not (bai and r["learner"] == "uniform")
            who = f"{r['learner']} (zoo)" if zoo else "uniform actions"
            if r.get("stop_at_budget"):
                who = f"{r['learner']} (zoo, answers at the budget)"
            lines.append(f"| {who} | reference | — | — | {r[key]:.3f} |" + extra)
        groups: dict[tuple[str, str], dict[int, dict]] = {}
        for r in mine:  # a seed run again (same seed, same numbers) counts once: its last row
            if r["setting"] != "reference":
                groups.setdefault((r["learner"], r["setting"]), {})[r["seed"]] = r
        for (learner, setting), by_seed in groups.items():
            rs = [by_seed[seed] for seed in sorted(by_seed)]
            v = np.array([r[key] for r in rs])
            cell = f"{v.mean():.3f}; {v.min():.3f}–{v.max():.3f}"
            if bai:
                c = np.array([r["correct"] for r in rs])
                pulls = np.array([r["length"] - r["stopped"] for r in rs])
                extra = f" {c.mean():.2f} ({c.min():.2f}–{c.max():.2f}) | {pulls.mean():.1f} |"
            else:
                ratio = v / classic["per_step"] if classic else None
                extra = (f" {ratio.mean():.2f} ({ratio.min():.2f}–{ratio.max():.2f}) |"
                         if classic else " |")
            seeds = ", ".join(str(seed) for seed in sorted(by_seed))
            lines.append(f"| {learner} | {setting} | {rs[0]['steps']} | {seeds} | {cell} |"
                         + extra)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", help="append result rows (JSON lines) to this file")
    parser.add_argument("--table", help="print the markdown table of a results file")
    parser.add_argument("--steps", type=int, default=50_000)
    parser.add_argument("--ids", nargs="*", default=list(RL_IDS))
    parser.add_argument("--learners", nargs="*", default=list(LEARNERS))
    parser.add_argument("--settings", nargs="*", default=list(SETTINGS))
    parser.add_argument("--seeds", nargs="*", type=int, default=list(SEEDS))
    parser.add_argument("--references", action="store_true", help="the zoo's rows only")
    parser.add_argument("--env-kwargs", type=json.loads, default=None,
                        help="JSON keyword arguments of the ids (another instance than level 0; "
                             "recorded in the rows, left out of the table)")
    parser.add_argument("--vecnormalize-statistics", action="store_true",
                        help="print what VecNormalize divides by on the Huber id's default")
    args = parser.parse_args(argv)
    if args.vecnormalize_statistics:
        print(vecnormalize_statistics())
        return 0
    if args.table:
        print(table(args.table))
        return 0
    if not args.out:
        parser.error("--out or --table is required")
    with open(args.out, "a") as out:
        if args.references:
            references(out, tuple(args.ids))
        else:
            run(out, args.steps, tuple(args.ids), tuple(args.learners), tuple(args.settings),
                tuple(args.seeds), args.env_kwargs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
