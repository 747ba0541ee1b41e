"""PPO on a batched (fake) vectorised environment kept entirely on the GPU.

Rollouts are collected under no_grad into a preallocated RolloutBuffer (obs, actions, log-probs, values, rewards,
dones), GAE is computed backwards, then a few epochs of clipped-surrogate updates run over shuffled minibatches.
"""
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.distributions import Categorical


@dataclass
class PPOConfig:
    num_envs: int = 2048
    num_steps: int = 128            # rollout length per env
    obs_dim: int = 384
    num_actions: int = 18
    hidden: int = 1024
    num_minibatches: int = 8
    update_epochs: int = 2
    iterations: int = 2
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_coef: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    lr: float = 2.5e-4
    max_grad_norm: float = 0.5

    @property
    def batch_size(self):
        return self.num_envs * self.num_steps

    @property
    def minibatch_size(self):
        return self.batch_size // self.num_minibatches


def mlp(sizes, out_gain=1.0):
    layers = []
    for i in range(len(sizes) - 1):
        lin = nn.Linear(sizes[i], sizes[i + 1])
        nn.init.orthogonal_(lin.weight, gain=out_gain if i == len(sizes) - 2 else 2 ** 0.5)
        nn.init.zeros_(lin.bias)
        layers.append(lin)
        if i < len(sizes) - 2:
            layers.append(nn.Tanh())
    return nn.Sequential(*layers)


class ActorCritic(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        h = cfg.hidden
        self.actor = mlp([cfg.obs_dim, h, h, h, cfg.num_actions], out_gain=0.01)
        self.critic = mlp([cfg.obs_dim, h, h, h, 1], out_gain=1.0)

    def get_value(self, obs):
        return self.critic(obs).squeeze(-1)

    def act(self, obs, action=None):
        dist = Categorical(logits=self.actor(obs))
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.get_value(obs)


class FakeVecEnv:
    def __init__(self, cfg, device):
        self.cfg, self.device = cfg, device

    def reset(self):
        return torch.randn(self.cfg.num_envs, self.cfg.obs_dim, device=self.device)

    def step(self, actions):
        n = self.cfg.num_envs
        obs = torch.randn(n, self.cfg.obs_dim, device=self.device)
        reward = torch.randn(n, device=self.device)
        done = (torch.rand(n, device=self.device) < 0.01).float()
        return obs, reward, done


class RolloutBuffer:
    def __init__(self, cfg, device):
        T, N = cfg.num_steps, cfg.num_envs
        self.obs = torch.zeros(T, N, cfg.obs_dim, device=device)
        self.actions = torch.zeros(T, N, dtype=torch.long, device=device)
        self.logprobs = torch.zeros(T, N, device=device)
        self.rewards = torch.zeros(T, N, device=device)
        self.dones = torch.zeros(T, N, device=device)
        self.values = torch.zeros(T, N, device=device)
        self.advantages = torch.zeros(T, N, device=device)
        self.returns = torch.zeros(T, N, device=device)

    def compute_gae(self, last_value, last_done, gamma, lam):
        lastgaelam = 0
        T = self.rewards.size(0)
        for t in reversed(range(T)):
            if t == T - 1:
                nextnonterminal, nextvalues = 1.0 - last_done, last_value
            else:
                nextnonterminal, nextvalues = 1.0 - self.dones[t + 1], self.values[t + 1]
            delta = self.rewards[t] + gamma * nextvalues * nextnonterminal - self.values[t]
            lastgaelam = delta + gamma * lam * nextnonterminal * lastgaelam
            self.advantages[t] = lastgaelam
        self.returns = self.advantages + self.values

    def flat(self, cfg):
        return (self.obs.reshape(-1, cfg.obs_dim), self.actions.reshape(-1), self.logprobs.reshape(-1),
                self.advantages.reshape(-1), self.returns.reshape(-1), self.values.reshape(-1))


def main():
    cfg = PPOConfig()
    device = torch.device("cuda")
    agent = ActorCritic(cfg).to(device)
    optimizer = torch.optim.Adam(agent.parameters(), lr=cfg.lr, eps=1e-5)
    env = FakeVecEnv(cfg, device)
    buf = RolloutBuffer(cfg, device)
    next_obs = env.reset()
    next_done = torch.zeros(cfg.num_envs, device=device)

    for it in range(cfg.iterations):
        # ---- rollout ----
        for t in range(cfg.num_steps):
            buf.obs[t] = next_obs
            buf.dones[t] = next_done
            with torch.no_grad():
                action, logprob, _, value = agent.act(next_obs)
            buf.values[t] = value
            buf.actions[t] = action
            buf.logprobs[t] = logprob
            next_obs, reward, next_done = env.step(action)
            buf.rewards[t] = reward
        with torch.no_grad():
            buf.compute_gae(agent.get_value(next_obs), next_done, cfg.gamma, cfg.gae_lambda)

        # ---- update ----
        b_obs, b_actions, b_logprobs, b_adv, b_returns, b_values = buf.flat(cfg)
        for epoch in range(cfg.update_epochs):
            perm = torch.randperm(cfg.batch_size, device=device)
            for start in range(0, cfg.batch_size, cfg.minibatch_size):
                mb = perm[start:start + cfg.minibatch_size]
                _, newlogprob, entropy, newvalue = agent.act(b_obs[mb], b_actions[mb])
                ratio = (newlogprob - b_logprobs[mb]).exp()
                adv = b_adv[mb]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - cfg.clip_coef, 1 + cfg.clip_coef)).mean()
                v_loss = 0.5 * ((newvalue - b_returns[mb]) ** 2).mean()
                loss = pg_loss - cfg.ent_coef * entropy.mean() + cfg.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), cfg.max_grad_norm)
                optimizer.step()
        print(f"iter {it} loss {loss.item():.4f} v_loss {v_loss.item():.4f}")
    print("peak GiB %.2f" % (torch.cuda.max_memory_allocated() / 2**30))


if __name__ == "__main__":
    main()
