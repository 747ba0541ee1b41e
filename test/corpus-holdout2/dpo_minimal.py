"""Minimal DPO (Rafailov et al. 2023) without TRL, for a ~1B causal LM on one GPU."""
import argparse
import json

import torch
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer


class PreferenceDataset(Dataset):
    def __init__(self, path, tokenizer, max_len=512):
        with open(path) as f:
            self.rows = [json.loads(line) for line in f]
        self.tok = tokenizer
        self.max_len = max_len

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        row = self.rows[i]
        chosen = self.tok(row["prompt"] + row["chosen"], truncation=True, max_length=self.max_len, return_tensors="pt")
        rejected = self.tok(row["prompt"] + row["rejected"], truncation=True, max_length=self.max_len, return_tensors="pt")
        return chosen["input_ids"][0], rejected["input_ids"][0]


def pad_collate(batch, pad_id=0):
    chosen, rejected = zip(*batch)
    seqs = list(chosen) + list(rejected)
    ids = pad_sequence(seqs, batch_first=True, padding_value=pad_id)
    mask = (ids != pad_id).long()
    return {"input_ids": ids, "attention_mask": mask, "n": len(chosen)}


def sequence_logps(logits, labels, mask):
    logits = logits[:, :-1]
    labels = labels[:, 1:]
    per_token = torch.gather(logits.log_softmax(-1), 2, labels.unsqueeze(2)).squeeze(2)
    return (per_token * mask[:, 1:]).sum(-1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model_name", default="TinyLlama/TinyLlama-1.1B-Chat-v1.0")
    ap.add_argument("--data", default="data/prefs.jsonl")
    ap.add_argument("--beta", type=float, default=0.1)
    ap.add_argument("--lr", type=float, default=5e-7)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch_size", type=int, default=4)
    args = ap.parse_args()

    device = torch.device("cuda")
    tok = AutoTokenizer.from_pretrained(args.model_name)
    policy = AutoModelForCausalLM.from_pretrained(args.model_name, torch_dtype=torch.bfloat16).to(device)
    ref_model = AutoModelForCausalLM.from_pretrained(args.model_name, torch_dtype=torch.bfloat16).to(device)
    ref_model.eval()
    policy.gradient_checkpointing_enable()

    optimizer = torch.optim.AdamW(policy.parameters(), lr=args.lr)
    ds = PreferenceDataset(args.data, tok)
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, num_workers=2, collate_fn=pad_collate)

    reward_margins = []
    step = 0
    for epoch in range(args.epochs):
        policy.train()
        for batch in loader:
            input_ids = batch["input_ids"].to(device)
            attn = batch["attention_mask"].to(device)
            n = batch["n"]

            policy_logits = policy(input_ids, attention_mask=attn).logits
            ref_logits = ref_model(input_ids, attention_mask=attn).logits  # expect: OOM113

            policy_logps = sequence_logps(policy_logits.float(), input_ids, attn)
            ref_logps = sequence_logps(ref_logits.float(), input_ids, attn)
            chosen_rewards = args.beta * (policy_logps[:n] - ref_logps[:n])
            rejected_rewards = args.beta * (policy_logps[n:] - ref_logps[n:])
            loss = -F.logsigmoid(chosen_rewards - rejected_rewards).mean()

            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            optimizer.step()

            reward_margins.append((chosen_rewards - rejected_rewards).mean())  # expect: OOM101
            if step % 10 == 0:
                recent = torch.stack(reward_margins[-10:]).mean().item()
                print(f"step {step} loss {loss.item():.4f} margin {recent:.3f}")
            step += 1

    policy.save_pretrained("dpo-out")
    tok.save_pretrained("dpo-out")


if __name__ == "__main__":
    main()
