"""Online (per-step) advantage actor-critic for LunarLander-v3 with a shared LSTM trunk.

The LSTM state is carried across steps of an episode; instead of detaching it,
retain_graph=True was added to make the error go away.
"""
import argparse

import gymnasium as gym
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical


class RecurrentAC(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=128):
        super().__init__()
        self.inp = nn.Linear(obs_dim, hidden)
        self.cell = nn.LSTMCell(hidden, hidden)
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)
        self.hidden = hidden

    def initial_state(self, device):
        z = torch.zeros(1, self.hidden, device=device)
        return z, z.clone()

    def forward(self, obs, state):
        h, c = self.cell(F.relu(self.inp(obs)), state)
        return self.pi(h), self.v(h).squeeze(-1), (h, c)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=2000)
    ap.add_argument("--gamma", type=float, default=0.99)
    ap.add_argument("--lr", type=float, default=7e-4)
    ap.add_argument("--entropy", type=float, default=0.01)
    args = ap.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    env = gym.make("LunarLander-v3")
    net = RecurrentAC(env.observation_space.shape[0], env.action_space.n).to(device)
    optimizer = torch.optim.RMSprop(net.parameters(), lr=args.lr)

    returns_log = []
    for ep in range(args.episodes):
        obs, _ = env.reset()
        state = net.initial_state(device)
        episode_loss = 0.0
        ep_return = 0.0
        done = False
        while not done:
            o = torch.as_tensor(obs, dtype=torch.float32, device=device).unsqueeze(0)
            logits, value, state = net(o, state)
            dist = Categorical(logits=logits)
            action = dist.sample()
            obs, reward, terminated, truncated, _ = env.step(action.item())
            done = terminated or truncated
            ep_return += reward

            with torch.no_grad():
                o2 = torch.as_tensor(obs, dtype=torch.float32, device=device).unsqueeze(0)
                _, next_value, _ = net(o2, state)
                target = reward + args.gamma * next_value * (0.0 if terminated else 1.0)

            advantage = target - value
            loss = (-dist.log_prob(action) * advantage.detach()
                    + 0.5 * advantage.pow(2)
                    - args.entropy * dist.entropy()).sum()

            optimizer.zero_grad()
            loss.backward(retain_graph=True)  # expect: OOM107
            optimizer.step()
            episode_loss = episode_loss + loss  # expect: OOM102

        returns_log.append(ep_return)
        if ep % 20 == 0:
            recent = returns_log[-20:]
            print(f"episode {ep}: return {sum(recent) / len(recent):.1f} loss {episode_loss.item():.3f}")

    torch.save(net.state_dict(), "lunar_ac.pt")


if __name__ == "__main__":
    main()
