# REINFORCE with a learned baseline on LunarLander-v2.
# Tabs for indentation: this file came out of an old vim config and nobody re-indented it.
import argparse
from itertools import count

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical
from torch.utils.tensorboard import SummaryWriter


class PolicyWithBaseline(nn.Module):
	def __init__(self, obs_dim, n_act, hidden=256):
		super().__init__()
		self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
		self.pi = nn.Linear(hidden, n_act)
		self.v = nn.Linear(hidden, 1)
		self.saved_log_probs = []
		self.saved_values = []
		self.rewards = []

	def forward(self, x):
		h = self.body(x)
		return F.softmax(self.pi(h), dim=-1), self.v(h)


def discounted_returns(rewards, gamma):
	R, out = 0.0, []
	for r in reversed(rewards):
		R = r + gamma * R
		out.insert(0, R)
	out = torch.tensor(out)
	return (out - out.mean()) / (out.std() + 1e-8)


def main():
	ap = argparse.ArgumentParser()
	ap.add_argument("--gamma", type=float, default=0.99)
	ap.add_argument("--lr", type=float, default=3e-4)
	ap.add_argument("--episodes", type=int, default=3000)
	ap.add_argument("--logdir", default="runs/reinforce")
	args = ap.parse_args()

	device = torch.device("cuda")
	env = gym.make("LunarLander-v2")
	policy = PolicyWithBaseline(env.observation_space.shape[0], env.action_space.n).to(device)
	optimizer = torch.optim.Adam(policy.parameters(), lr=args.lr)
	writer = SummaryWriter(args.logdir)

	running_reward = 0.0
	loss_history = []
	for episode in range(args.episodes):
		# collect one episode, keeping log-probs WITH their graph: the update backpropagates through them
		state, _ = env.reset()
		ep_reward = 0.0
		for t in count():
			s = torch.from_numpy(state).float().unsqueeze(0).to(device)
			probs, value = policy(s)
			m = Categorical(probs)
			action = m.sample()
			policy.saved_log_probs.append(m.log_prob(action))
			policy.saved_values.append(value.squeeze())
			state, reward, terminated, truncated, _ = env.step(action.item())
			policy.rewards.append(reward)
			ep_reward += reward
			if terminated or truncated:
				break

		returns = discounted_returns(policy.rewards, args.gamma).to(device)
		values = torch.stack(policy.saved_values)
		advantages = returns - values.detach()
		policy_loss = torch.stack([-lp * a for lp, a in zip(policy.saved_log_probs, advantages)]).sum()
		value_loss = F.smooth_l1_loss(values, returns)

		optimizer.zero_grad()
		(policy_loss + value_loss).backward(retain_graph=True)  # expect: OOM107
		optimizer.step()
		loss_history.append(policy_loss)  # expect: OOM101
		del policy.saved_log_probs[:]
		del policy.saved_values[:]
		del policy.rewards[:]

		running_reward = 0.05 * ep_reward + 0.95 * running_reward
		writer.add_scalar("reward/episode", ep_reward, episode)
		writer.add_scalar("loss/value", value_loss.item(), episode)
		if episode % 50 == 0:
			print(f"episode {episode}\tlast reward {ep_reward:.1f}\trunning {running_reward:.1f}")
		if running_reward > env.spec.reward_threshold:
			print(f"solved at episode {episode}, running reward {running_reward:.1f}")
			break

	torch.save({"policy": policy.state_dict(), "losses": loss_history}, "reinforce_lander.pt")
	writer.close()


if __name__ == "__main__":
	main()
