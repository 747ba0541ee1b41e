"""One-step-return actor-critic (episodic) on CartPole, GPU variant for the RL reading group."""
import os
from collections import namedtuple
from itertools import count

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

os.environ["CUDA_VISIBLE_DEVICES"] = "2"  # expect: OOM105
os.environ["CUDA_LAUNCH_BLOCKING"] = "1"

GAMMA = 0.99
SEED = 543
LOG_INTERVAL = 10
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

SavedAction = namedtuple("SavedAction", ["log_prob", "value"])


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(4, 128)
        self.action_head = nn.Linear(128, 2)
        self.value_head = nn.Linear(128, 1)
        self.saved_actions = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.affine1(x))
        action_prob = F.softmax(self.action_head(x), dim=-1)
        state_values = self.value_head(x)
        return action_prob, state_values


model = ActorCritic().to(device)
optimizer = optim.Adam(model.parameters(), lr=3e-2)
eps = np.finfo(np.float32).eps.item()


def select_action(state):
    state = torch.from_numpy(state).float().to(device)
    probs, state_value = model(state)
    m = Categorical(probs)
    action = m.sample()
    model.saved_actions.append(SavedAction(m.log_prob(action), state_value))
    return action.item()


def main():
    env = gym.make("CartPole-v1")
    env.reset(seed=SEED)
    torch.manual_seed(SEED)

    running_reward = 10
    all_losses = []          # for the loss curve in the notebook
    value_estimates = []

    for i_episode in count(1):
        state, _ = env.reset()
        ep_reward = 0
        for t in range(1, 10000):
            action = select_action(state)
            state, reward, terminated, truncated, _ = env.step(action)
            model.rewards.append(reward)
            ep_reward += reward
            if terminated or truncated:
                break

        running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward

        # ---- compute the loss for this episode ----
        R = 0
        returns = []
        for r in model.rewards[::-1]:
            R = r + GAMMA * R
            returns.insert(0, R)
        returns = torch.tensor(returns, device=device)
        returns = (returns - returns.mean()) / (returns.std() + eps)

        log_probs = torch.stack([sa.log_prob for sa in model.saved_actions])
        values = torch.cat([sa.value for sa in model.saved_actions])
        advantage = returns - values.detach()
        policy_loss = -(log_probs * advantage).sum()
        value_loss = F.smooth_l1_loss(values, returns, reduction="sum")

        optimizer.zero_grad()
        loss = policy_loss + value_loss
        loss.backward()
        optimizer.step()

        all_losses.append(loss)  # expect: OOM101
        value_estimates.append(values.detach().mean().cpu())

        del model.rewards[:]
        del model.saved_actions[:]

        if i_episode % LOG_INTERVAL == 0:
            print(f"Episode {i_episode}\tLast reward: {ep_reward:.2f}\tAverage reward: {running_reward:.2f}")

        if running_reward > env.spec.reward_threshold:
            print(f"Solved! Running reward is now {running_reward} and the last episode runs to {t} time steps!")
            break

    torch.save({"losses": [l.item() for l in all_losses]}, "ac_curve.pt")


if __name__ == "__main__":
    main()
