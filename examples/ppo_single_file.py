"""PPO in one file, for any Gymnasium id with a flat Box observation and Discrete actions.

Written the way single-file RL scripts are (CleanRL's ``ppo.py``): the env comes from an id string
through a ``SyncVectorEnv`` of ``make_env`` thunks, the MLP is sized from
``np.array(envs.single_observation_space.shape).prod()``, tensors are float32. It knows nothing of
privenv; privenv's RL ids work in it unchanged::

    python examples/ppo_single_file.py --env-id privenv:HuberBandit-RL-v0 \
        --env-kwargs '{"K": 3, "means": [50, 100, 0], "horizon": 100}' --total-timesteps 4096

prints the mean reward per step of the episodes of each iteration (``RecordEpisodeStatistics``:
return / length — the per-pull reward; the mean of the raw transitions would include Gymnasium's
next-step reset steps, see ``examples/README-rl.md``) and, at the end, the greedy policy's action
counts over a few evaluation episodes. The tests run it (``tests/rl/test_rl_ids.py``).
"""

from __future__ import annotations

import argparse
import json

import gymnasium as gym
import numpy as np
import torch


def make_env(env_id, **kwargs):
    def thunk():
        env = gym.make(env_id, **kwargs)
        return gym.wrappers.RecordEpisodeStatistics(env)

    return thunk


def layer_init(layer, std=2**0.5, bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class MLPAgent(torch.nn.Module):
    def __init__(self, envs):
        super().__init__()
        n_obs = np.array(envs.single_observation_space.shape).prod()
        nn = torch.nn
        self.critic = nn.Sequential(layer_init(nn.Linear(n_obs, 64)), nn.Tanh(),
                                    layer_init(nn.Linear(64, 64)), nn.Tanh(),
                                    layer_init(nn.Linear(64, 1), std=1.0))
        self.actor = nn.Sequential(layer_init(nn.Linear(n_obs, 64)), nn.Tanh(),
                                   layer_init(nn.Linear(64, 64)), nn.Tanh(),
                                   layer_init(nn.Linear(64, envs.single_action_space.n), std=0.01))

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, action=None):
        probs = torch.distributions.Categorical(logits=self.actor(x))
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


def ppo_single_file(env_id, env_kwargs, total_timesteps, seed=0, num_envs=4, num_steps=128,
                    learning_rate=3e-3, gamma=0.99, gae_lambda=0.95, num_minibatches=4,
                    update_epochs=4, clip_coef=0.2, ent_coef=0.01, vf_coef=0.5,
                    max_grad_norm=0.5, log=None):
    """PPO in one function: a ``SyncVectorEnv`` of ``make_env`` thunks (Gymnasium's default
    next-step autoreset), GAE, clipped surrogate. Returns the agent, the episodes logged by
    ``RecordEpisodeStatistics`` ((sub-env, return, length) per episode) and every transition's
    (rewards, whether it was a reset step). ``log``: a function given one line per iteration."""
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    envs = gym.vector.SyncVectorEnv([make_env(env_id, **env_kwargs) for _ in range(num_envs)])
    agent = MLPAgent(envs)
    optimizer = torch.optim.Adam(agent.parameters(), lr=learning_rate, eps=1e-5)
    batch_size = num_envs * num_steps
    minibatch_size = batch_size // num_minibatches
    obs = torch.zeros((num_steps, num_envs) + envs.single_observation_space.shape)
    actions = torch.zeros((num_steps, num_envs) + envs.single_action_space.shape)
    logprobs, rewards, dones, values = (torch.zeros((num_steps, num_envs)) for _ in range(4))
    episodes, transitions = [], []
    next_obs, _ = envs.reset(seed=seed)
    next_obs, next_done = torch.Tensor(next_obs), torch.zeros(num_envs)
    for iteration in range(total_timesteps // batch_size):
        logged = len(episodes)
        for step in range(num_steps):
            obs[step], dones[step] = next_obs, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs)
                values[step] = value.flatten()
            actions[step], logprobs[step] = action, logprob
            next_obs, reward, terminations, truncations, infos = envs.step(action.numpy())
            transitions.append((reward, next_done.numpy().astype(bool)))  # a reset step?
            rewards[step] = torch.tensor(reward).view(-1)
            next_obs = torch.Tensor(next_obs)
            next_done = torch.Tensor(np.logical_or(terminations, truncations))
            if "episode" in infos:
                for i in np.flatnonzero(infos["_episode"]):
                    episodes.append((i, infos["episode"]["r"][i], infos["episode"]["l"][i]))
        new = episodes[logged:]
        if log is not None and new:
            per_step = sum(r for _, r, _ in new) / sum(n for _, _, n in new)
            log(f"iteration {iteration + 1}: {len(new)} episodes, return/length {per_step:.3f}")
        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages = torch.zeros_like(rewards)
            lastgaelam = 0
            for t in reversed(range(num_steps)):
                if t == num_steps - 1:
                    nextnonterminal, nextvalues = 1.0 - next_done, next_value
                else:
                    nextnonterminal, nextvalues = 1.0 - dones[t + 1], values[t + 1]
                delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
                lastgaelam = delta + gamma * gae_lambda * nextnonterminal * lastgaelam
                advantages[t] = lastgaelam
            returns = advantages + values
        b_obs = obs.reshape((-1,) + envs.single_observation_space.shape)
        b_logprobs, b_actions = logprobs.reshape(-1), actions.reshape(-1)
        b_advantages, b_returns = advantages.reshape(-1), returns.reshape(-1)
        b_inds = np.arange(batch_size)
        for _epoch in range(update_epochs):
            rng.shuffle(b_inds)
            for start in range(0, batch_size, minibatch_size):
                mb = b_inds[start:start + minibatch_size]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(
                    b_obs[mb], b_actions.long()[mb])
                ratio = (newlogprob - b_logprobs[mb]).exp()
                adv = (b_advantages[mb] - b_advantages[mb].mean()) / (b_advantages[mb].std()
                                                                      + 1e-8)
                pg_loss = torch.max(-adv * ratio,
                                    -adv * torch.clamp(ratio, 1 - clip_coef, 1 + clip_coef)).mean()
                v_loss = 0.5 * ((newvalue.view(-1) - b_returns[mb]) ** 2).mean()
                loss = pg_loss - ent_coef * entropy.mean() + vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
                optimizer.step()
    envs.close()
    return agent, episodes, transitions


def evaluate(agent, env_id, env_kwargs, episodes=5, seed=1000):
    """The greedy policy's action counts over a few episodes."""
    env = gym.make(env_id, **env_kwargs)
    counts = np.zeros(env.action_space.n, dtype=np.int64)
    obs, _ = env.reset(seed=seed)
    for _ in range(episodes):
        done = False
        while not done:
            with torch.no_grad():
                action = int(agent.actor(torch.Tensor(obs)).argmax())
            counts[action] += 1
            obs, _, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
        obs, _ = env.reset()
    return counts


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env-id", default="privenv:HuberBandit-RL-v0")
    parser.add_argument("--env-kwargs", type=json.loads, default={},
                        help="JSON object of keyword arguments for gym.make")
    parser.add_argument("--total-timesteps", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--learning-rate", type=float, default=3e-3)
    parser.add_argument("--gamma", type=float, default=0.99)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    agent, episodes, _ = ppo_single_file(args.env_id, args.env_kwargs, args.total_timesteps,
                                         seed=args.seed, learning_rate=args.learning_rate,
                                         gamma=args.gamma, log=print)
    print("greedy action counts:", evaluate(agent, args.env_id, args.env_kwargs).tolist())


if __name__ == "__main__":
    main()
