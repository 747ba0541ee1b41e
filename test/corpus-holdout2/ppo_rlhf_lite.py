"""A compact PPO-style RLHF loop: policy + critic are trained, reference and reward models are frozen."""
import itertools
from types import SimpleNamespace

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader
from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer

cfg = SimpleNamespace(
    policy_name="EleutherAI/pythia-410m-deduped",
    reward_name="checkpoints/pythia-410m-reward-model",
    prompt_len=64,
    max_new_tokens=48,
    batch_size=16,
    iterations=500,
    ppo_epochs=4,
    clip_eps=0.2,
    kl_coef=0.05,
    vf_coef=0.5,
    lr=1e-5,
)
device = "cuda"

tok = AutoTokenizer.from_pretrained(cfg.policy_name, padding_side="left")
tok.pad_token = tok.eos_token
policy = AutoModelForCausalLM.from_pretrained(cfg.policy_name).to(device)
ref_model = AutoModelForCausalLM.from_pretrained(cfg.policy_name).to(device)
ref_model.requires_grad_(False)
critic = AutoModelForSequenceClassification.from_pretrained(cfg.policy_name, num_labels=1).to(device)
critic.config.pad_token_id = tok.pad_token_id
reward_model = AutoModelForSequenceClassification.from_pretrained(cfg.reward_name).to(device)
reward_model.requires_grad_(False)

optimizer = torch.optim.AdamW(itertools.chain(policy.parameters(), critic.parameters()), lr=cfg.lr)

prompts = load_dataset("Anthropic/hh-rlhf", split="train").select(range(20_000))
prompts = prompts.map(lambda ex: tok(ex["chosen"][:200], truncation=True, max_length=cfg.prompt_len,
                                     padding="max_length"), remove_columns=prompts.column_names)
prompts.set_format("torch")
prompt_loader = DataLoader(prompts, batch_size=cfg.batch_size, shuffle=True, drop_last=True)
prompt_iter = itertools.cycle(prompt_loader)


@torch.no_grad()
def sample(model, prompt_ids, max_new_tokens, temperature=1.0):
    ids = prompt_ids
    for _ in range(max_new_tokens):
        logits = model(ids).logits[:, -1, :] / temperature
        next_id = torch.multinomial(logits.softmax(-1), num_samples=1)
        ids = torch.cat([ids, next_id], dim=1)
    return ids


def logprobs_of(model, ids):
    logits = model(ids).logits[:, :-1]
    return torch.gather(logits.log_softmax(-1), 2, ids[:, 1:].unsqueeze(-1)).squeeze(-1)


reward_history = []
kl_history = []
for it in range(cfg.iterations):
    batch = next(prompt_iter)
    prompt_ids = batch["input_ids"].to(device)
    seqs = sample(policy, prompt_ids, cfg.max_new_tokens)

    with torch.no_grad():
        old_logp = logprobs_of(policy, seqs)
        ref_logp = logprobs_of(ref_model, seqs)
        rewards = reward_model(seqs).logits.squeeze(-1)
        values_old = critic(seqs).logits.squeeze(-1)
    kl = (old_logp - ref_logp).sum(-1)
    scores = rewards - cfg.kl_coef * kl
    advantages = scores - values_old
    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    reward_history.append(rewards.mean())
    kl_history.append(kl.mean().item())

    for ppo_epoch in range(cfg.ppo_epochs):
        new_logp = logprobs_of(policy, seqs)
        ratio = (new_logp - old_logp).sum(-1).exp()
        unclipped = ratio * advantages
        clipped = ratio.clamp(1 - cfg.clip_eps, 1 + cfg.clip_eps) * advantages
        pg_loss = -torch.min(unclipped, clipped).mean()
        v_loss = F.mse_loss(critic(seqs).logits.squeeze(-1), scores)
        loss = pg_loss + cfg.vf_coef * v_loss

        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(itertools.chain(policy.parameters(), critic.parameters()), 1.0)
        optimizer.step()

    if it % 10 == 0:
        print(f"it {it}: reward {torch.stack(reward_history[-10:]).mean().item():.3f} "
              f"kl {sum(kl_history[-10:]) / len(kl_history[-10:]):.3f} pg {pg_loss.item():.4f}")

policy.save_pretrained("ppo-policy")
