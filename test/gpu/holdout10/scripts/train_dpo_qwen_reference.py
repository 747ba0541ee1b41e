"""Direct Preference Optimization (DPO) of Qwen2.5-0.5B, written by hand (no TRL).

The policy is trained in its stored bf16 with HF gradient checkpointing; the reference model is a second,
frozen copy of the same checkpoint, run under no_grad. Chosen and rejected responses are concatenated into one
batch, and per-token log-probabilities come from log_softmax over the full vocabulary.
"""
from types import SimpleNamespace

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForCausalLM

args = SimpleNamespace(
    model_name="Qwen/Qwen2.5-0.5B",
    beta=0.1,
    pairs_per_batch=4,
    prompt_len=256,
    response_len=256,
    lr=5e-7,
    max_steps=4,
    vocab_size=151_643,
)


class PreferencePairs(Dataset):
    def __init__(self, n, a):
        self.n, self.a = n, a

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        a = self.a
        prompt = torch.randint(0, a.vocab_size, (a.prompt_len,))
        chosen = torch.randint(0, a.vocab_size, (a.response_len,))
        rejected = torch.randint(0, a.vocab_size, (a.response_len,))
        return {"chosen": torch.cat([prompt, chosen]), "rejected": torch.cat([prompt, rejected])}


def concatenated_inputs(batch, prompt_len):
    ids = torch.cat([batch["chosen"], batch["rejected"]], dim=0)
    labels = ids.clone()
    labels[:, :prompt_len] = -100
    return ids, labels


def sequence_logps(logits, labels):
    logits = logits[:, :-1, :]
    labels = labels[:, 1:].clone()
    mask = labels != -100
    labels[~mask] = 0
    per_token = torch.gather(logits.float().log_softmax(-1), 2, labels.unsqueeze(2)).squeeze(2)
    return (per_token * mask).sum(-1)


def dpo_loss(pol_c, pol_r, ref_c, ref_r, beta):
    logits = (pol_c - pol_r) - (ref_c - ref_r)
    losses = -F.logsigmoid(beta * logits)
    rewards_c = beta * (pol_c - ref_c).detach()
    rewards_r = beta * (pol_r - ref_r).detach()
    return losses.mean(), (rewards_c > rewards_r).float().mean()


def main():
    device = "cuda"
    policy = AutoModelForCausalLM.from_pretrained(args.model_name)   # stored dtype (bf16)
    policy.to(device)
    reference = AutoModelForCausalLM.from_pretrained(args.model_name).to(device).eval()
    reference.requires_grad_(False)

    policy.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    policy.config.use_cache = False
    policy.train()
    optimizer = torch.optim.AdamW(policy.parameters(), lr=args.lr, weight_decay=0.0)
    loader = DataLoader(PreferencePairs(args.pairs_per_batch * args.max_steps, args), batch_size=args.pairs_per_batch)

    for step, batch in enumerate(loader):
        ids, labels = concatenated_inputs(batch, args.prompt_len)
        ids, labels = ids.to(device), labels.to(device)
        n = args.pairs_per_batch
        with torch.no_grad():
            ref_logps = sequence_logps(reference(input_ids=ids).logits, labels)
        pol_logps = sequence_logps(policy(input_ids=ids).logits, labels)
        loss, acc = dpo_loss(pol_logps[:n], pol_logps[n:], ref_logps[:n], ref_logps[n:], args.beta)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        optimizer.step()
        print(f"step {step}: dpo loss {loss.item():.4f} reward acc {acc.item():.2f}")
    print("peak GiB", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
