"""Double DQN on CartPole-v1 with a uniform replay buffer and a soft-updated target net."""
import random
from collections import deque, namedtuple

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

Transition = namedtuple("Transition", "state action reward next_state done")

CONFIG = {
    "episodes": 600,
    "buffer": 50_000,
    "batch": 128,
    "gamma": 0.99,
    "lr": 3e-4,
    "tau": 0.005,
    "eps_start": 0.9,
    "eps_end": 0.05,
    "eps_decay": 1000,
}


class ReplayBuffer:
    def __init__(self, capacity):
        self.memory = deque(maxlen=capacity)

    def push(self, *args):
        self.memory.append(Transition(*args))

    def sample(self, n):
        return random.sample(self.memory, n)

    def __len__(self):
        return len(self.memory)


class QNet(nn.Module):
    def __init__(self, n_obs, n_act):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_obs, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                                 nn.Linear(128, n_act))

    def forward(self, x):
        return self.net(x)


def select_action(policy, state, steps, env, device):
    eps = CONFIG["eps_end"] + (CONFIG["eps_start"] - CONFIG["eps_end"]) * np.exp(-steps / CONFIG["eps_decay"])
    if random.random() > eps:
        with torch.no_grad():
            return policy(state).argmax(1).view(1, 1)
    return torch.tensor([[env.action_space.sample()]], device=device, dtype=torch.long)


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    env = gym.make("CartPole-v1")
    n_act = env.action_space.n
    n_obs = env.observation_space.shape[0]
    policy, target = QNet(n_obs, n_act).to(device), QNet(n_obs, n_act).to(device)
    target.load_state_dict(policy.state_dict())
    optimizer = torch.optim.AdamW(policy.parameters(), lr=CONFIG["lr"], amsgrad=True)
    memory = ReplayBuffer(CONFIG["buffer"])

    steps_done = 0
    episode_returns, td_losses = [], []
    for ep in range(CONFIG["episodes"]):
        obs, _ = env.reset()
        state = torch.tensor(obs, dtype=torch.float32, device=device).unsqueeze(0)
        ep_return = 0.0
        done = False
        while not done:
            action = select_action(policy, state, steps_done, env, device)
            steps_done += 1
            obs, reward, terminated, truncated, _ = env.step(action.item())
            ep_return += reward
            done = terminated or truncated
            next_state = torch.tensor(obs, dtype=torch.float32, device=device).unsqueeze(0)
            memory.push(state, action, torch.tensor([reward], device=device), next_state, terminated)
            state = next_state

            if len(memory) < CONFIG["batch"]:
                continue
            batch = Transition(*zip(*memory.sample(CONFIG["batch"])))
            s = torch.cat(batch.state)
            a = torch.cat(batch.action)
            r = torch.cat(batch.reward)
            s2 = torch.cat(batch.next_state)
            not_done = torch.tensor([not d for d in batch.done], device=device, dtype=torch.float32)

            q = policy(s).gather(1, a).squeeze(1)
            with torch.no_grad():
                best_next = policy(s2).argmax(1, keepdim=True)
                q_next = target(s2).gather(1, best_next).squeeze(1)
                y = r + CONFIG["gamma"] * not_done * q_next
            loss = F.smooth_l1_loss(q, y)
            loss.backward()
            torch.nn.utils.clip_grad_value_(policy.parameters(), 100)
            optimizer.step()  # expect: OOM103
            td_losses.append(loss)  # expect: OOM101

            with torch.no_grad():
                for pt, pp in zip(target.parameters(), policy.parameters()):
                    pt.mul_(1 - CONFIG["tau"]).add_(CONFIG["tau"] * pp)

        episode_returns.append(ep_return)
        if ep % 20 == 0:
            window = td_losses[-200:]
            recent = sum(l.item() for l in window) / len(window) if window else float("nan")
            print(f"episode {ep:4d} return {ep_return:6.1f} td-loss {recent:.4f} eps-steps {steps_done}")

    torch.save(policy.state_dict(), "dqn_cartpole.pt")
    print("mean return (last 100):", np.mean(episode_returns[-100:]))


if __name__ == "__main__":
    main()
