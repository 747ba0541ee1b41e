"""Double DQN on Atari-sized frames with the whole replay buffer kept on the GPU as uint8.

The "environment" is a stand-in that returns random frames (64 vectorised envs); the point is the
training side: a 100k-transition uint8 buffer on the device, Nature-CNN online + target networks,
Huber loss, minibatches of 512 sampled on the GPU.
"""
import argparse
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

DEFAULTS = dict(
    capacity=100_000,
    frame_stack=4,
    frame_size=84,
    n_actions=18,
    n_envs=64,
    batch_size=512,
    gamma=0.99,
    lr=6.25e-5,
    warmup_transitions=50_000,
    train_iters=300,
    env_steps_per_iter=1,
    target_sync=100,
    eps=0.05,
)
cfg = argparse.Namespace(**DEFAULTS)
dev = torch.device("cuda")


class ReplayBuffer:
    def __init__(self, capacity, obs_shape, device):
        self.obs = torch.zeros((capacity, *obs_shape), dtype=torch.uint8, device=device)
        self.next_obs = torch.zeros((capacity, *obs_shape), dtype=torch.uint8, device=device)
        self.actions = torch.zeros(capacity, dtype=torch.long, device=device)
        self.rewards = torch.zeros(capacity, dtype=torch.float32, device=device)
        self.dones = torch.zeros(capacity, dtype=torch.bool, device=device)
        self.capacity, self.ptr, self.size = capacity, 0, 0

    def add(self, obs, act, rew, nxt, done):
        n = obs.shape[0]
        idx = (torch.arange(n, device=obs.device) + self.ptr) % self.capacity
        self.obs[idx], self.actions[idx], self.rewards[idx] = obs, act, rew
        self.next_obs[idx], self.dones[idx] = nxt, done
        self.ptr = (self.ptr + n) % self.capacity
        self.size = min(self.size + n, self.capacity)

    def sample(self, batch_size):
        idx = torch.randint(0, self.size, (batch_size,), device=self.obs.device)
        return self.obs[idx], self.actions[idx], self.rewards[idx], self.next_obs[idx], self.dones[idx]


class NatureCNN(nn.Module):
    def __init__(self, in_ch, n_actions):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(in_ch, 32, 8, stride=4), nn.ReLU(),
            nn.Conv2d(32, 64, 4, stride=2), nn.ReLU(),
            nn.Conv2d(64, 64, 3, stride=1), nn.ReLU(),
            nn.Flatten(), nn.Linear(64 * 7 * 7, 512), nn.ReLU(), nn.Linear(512, n_actions))

    def forward(self, x):
        return self.net(x.float() / 255.0)


class FakeVecEnv:
    def __init__(self, n, shape, device):
        self.n, self.shape, self.device = n, shape, device

    def reset(self):
        return torch.randint(0, 256, (self.n, *self.shape), dtype=torch.uint8, device=self.device)

    def step(self, actions):
        obs = torch.randint(0, 256, (self.n, *self.shape), dtype=torch.uint8, device=self.device)
        rew = torch.randn(self.n, device=self.device).clamp(-1, 1)
        done = torch.rand(self.n, device=self.device) < 0.01
        return obs, rew, done


obs_shape = (cfg.frame_stack, cfg.frame_size, cfg.frame_size)
buffer = ReplayBuffer(cfg.capacity, obs_shape, dev)
env = FakeVecEnv(cfg.n_envs, obs_shape, dev)
q_net = NatureCNN(cfg.frame_stack, cfg.n_actions).to(dev)
target = copy.deepcopy(q_net).requires_grad_(False)
opt = torch.optim.Adam(q_net.parameters(), lr=cfg.lr, eps=1.5e-4)


def act(obs, eps):
    with torch.no_grad():
        greedy = q_net(obs).argmax(1)
    rand = torch.randint(0, cfg.n_actions, greedy.shape, device=dev)
    return torch.where(torch.rand(greedy.shape, device=dev) < eps, rand, greedy)


obs = env.reset()
while buffer.size < cfg.warmup_transitions:
    a = torch.randint(0, cfg.n_actions, (cfg.n_envs,), device=dev)
    nxt, r, d = env.step(a)
    buffer.add(obs, a, r, nxt, d)
    obs = nxt
print(f"buffer warm: {buffer.size} transitions, {torch.cuda.memory_allocated() / 2**30:.2f} GiB allocated")

for it in range(cfg.train_iters):
    for _ in range(cfg.env_steps_per_iter):
        a = act(obs, cfg.eps)
        nxt, r, d = env.step(a)
        buffer.add(obs, a, r, nxt, d)
        obs = nxt
    s, a_b, r_b, s2, d_b = buffer.sample(cfg.batch_size)
    with torch.no_grad():
        best = q_net(s2).argmax(1, keepdim=True)
        q_next = target(s2).gather(1, best).squeeze(1)
        y = r_b + cfg.gamma * (~d_b).float() * q_next
    q = q_net(s).gather(1, a_b.unsqueeze(1)).squeeze(1)
    loss = F.smooth_l1_loss(q, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    nn.utils.clip_grad_norm_(q_net.parameters(), 10.0)
    opt.step()
    if it % cfg.target_sync == 0:
        target.load_state_dict(q_net.state_dict())
        print(f"iter {it} loss {loss.item():.4f} q {q.mean().item():.3f}")

print("peak GiB", torch.cuda.max_memory_allocated() / 2**30)
