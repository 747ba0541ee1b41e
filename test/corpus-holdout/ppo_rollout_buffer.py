"""PPO (clipped objective, GAE) for vectorised Gymnasium envs -- CleanRL-flavoured, single file."""
import argparse
import time
from collections import defaultdict

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical


def layer_init(layer, std=np.sqrt(2), bias=0.0):
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


class Agent(nn.Module):
    def __init__(self, obs_dim, n_act):
        super().__init__()
        self.critic = nn.Sequential(layer_init(nn.Linear(obs_dim, 64)), nn.Tanh(),
                                    layer_init(nn.Linear(64, 64)), nn.Tanh(), layer_init(nn.Linear(64, 1), 1.0))
        self.actor = nn.Sequential(layer_init(nn.Linear(obs_dim, 64)), nn.Tanh(),
                                   layer_init(nn.Linear(64, 64)), nn.Tanh(), layer_init(nn.Linear(64, n_act), 0.01))

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, action=None):
        dist = Categorical(logits=self.actor(x))
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.critic(x)


class RolloutBuffer:
    def __init__(self, n_steps, n_envs, obs_dim, device):
        self.obs = torch.zeros((n_steps, n_envs, obs_dim), device=device)
        self.actions = torch.zeros((n_steps, n_envs), device=device)
        self.logprobs = torch.zeros((n_steps, n_envs), device=device)
        self.rewards = torch.zeros((n_steps, n_envs), device=device)
        self.dones = torch.zeros((n_steps, n_envs), device=device)
        self.values = torch.zeros((n_steps, n_envs), device=device)

    def compute_gae(self, next_value, next_done, gamma, lam):
        n_steps = self.rewards.shape[0]
        adv = torch.zeros_like(self.rewards)
        last = 0
        for t in reversed(range(n_steps)):
            nonterm = 1.0 - (next_done if t == n_steps - 1 else self.dones[t + 1])
            nv = next_value if t == n_steps - 1 else self.values[t + 1]
            delta = self.rewards[t] + gamma * nv * nonterm - self.values[t]
            adv[t] = last = delta + gamma * lam * nonterm * last
        return adv, adv + self.values


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--env-id", default="CartPole-v1")
    p.add_argument("--num-envs", type=int, default=8)
    p.add_argument("--num-steps", type=int, default=128)
    p.add_argument("--total-timesteps", type=int, default=500_000)
    p.add_argument("--update-epochs", type=int, default=4)
    p.add_argument("--minibatches", type=int, default=4)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--lr", type=float, default=2.5e-4)
    args = p.parse_args()
    device = torch.device("cuda")

    envs = gym.vector.SyncVectorEnv([lambda: gym.make(args.env_id) for _ in range(args.num_envs)])
    obs_dim = envs.single_observation_space.shape[0]
    agent = Agent(obs_dim, envs.single_action_space.n).to(device)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)
    buf = RolloutBuffer(args.num_steps, args.num_envs, obs_dim, device)

    batch_size = args.num_envs * args.num_steps
    mb_size = batch_size // args.minibatches
    next_obs = torch.tensor(envs.reset(seed=1)[0], device=device, dtype=torch.float32)
    next_done = torch.zeros(args.num_envs, device=device)
    stats = defaultdict(list)
    start = time.time()

    for update in range(1, args.total_timesteps // batch_size + 1):
        # ---- rollout: no graph is needed, the update recomputes log-probs and values
        with torch.no_grad():
            for step in range(args.num_steps):
                buf.obs[step] = next_obs
                buf.dones[step] = next_done
                action, logprob, _, value = agent.get_action_and_value(next_obs)
                buf.values[step] = value.flatten()
                buf.actions[step] = action
                buf.logprobs[step] = logprob
                o, r, term, trunc, _ = envs.step(action.cpu().numpy())
                buf.rewards[step] = torch.tensor(r, device=device, dtype=torch.float32)
                next_obs = torch.tensor(o, device=device, dtype=torch.float32)
                next_done = torch.tensor(np.logical_or(term, trunc), device=device, dtype=torch.float32)
            advantages, returns = buf.compute_gae(agent.get_value(next_obs).flatten(), next_done, 0.99, 0.95)

        b_obs = buf.obs.reshape(-1, obs_dim)
        b_act, b_logp = buf.actions.reshape(-1), buf.logprobs.reshape(-1)
        b_adv, b_ret = advantages.reshape(-1), returns.reshape(-1)

        # ---- optimisation
        clipfracs = []
        idx = np.arange(batch_size)
        for epoch in range(args.update_epochs):
            np.random.shuffle(idx)
            for start_i in range(0, batch_size, mb_size):
                mb = idx[start_i:start_i + mb_size]
                _, newlogp, entropy, newv = agent.get_action_and_value(b_obs[mb], b_act.long()[mb])
                ratio = (newlogp - b_logp[mb]).exp()
                adv = (b_adv[mb] - b_adv[mb].mean()) / (b_adv[mb].std() + 1e-8)
                pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip, 1 + args.clip)).mean()
                v_loss = 0.5 * ((newv.view(-1) - b_ret[mb]) ** 2).mean()
                loss = pg_loss - 0.01 * entropy.mean() + 0.5 * v_loss

                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                optimizer.step()

                clipfracs += [((ratio - 1.0).abs() > args.clip).float().mean().item()]
                stats["pg_loss"].append(pg_loss.item())
                stats["v_loss"].append(v_loss.detach())

        sps = int(update * batch_size / (time.time() - start))
        print(f"update {update} sps {sps} pg {np.mean(stats['pg_loss'][-8:]):.4f} "
              f"v {torch.stack(stats['v_loss'][-8:]).mean().item():.4f} clipfrac {np.mean(clipfracs):.3f}")

    torch.save(agent.state_dict(), "ppo_agent.pt")


if __name__ == "__main__":
    main()
