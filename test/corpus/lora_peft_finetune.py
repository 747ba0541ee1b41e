"""LoRA instruction-tuning of a 1B Llama-style model with PEFT, plain PyTorch loop.

🚀 quick start:  python lora_peft_finetune.py --data alpaca_cleaned.json
"""
import argparse
import json
import math
import os
import random

import torch
from peft import LoraConfig, TaskType, get_peft_model
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, get_cosine_schedule_with_warmup

os.environ["CUDA_VISIBLE_DEVICES"] = "3"  # expect: OOM105
os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"

PROMPT = "### Instruction:\n{instruction}\n\n### Input:\n{input}\n\n### Response:\n"


class InstructionDataset(Dataset):
    def __init__(self, path, tokenizer, max_len=1024):
        with open(path) as f:
            self.rows = json.load(f)
        self.tok = tokenizer
        self.max_len = max_len

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        r = self.rows[i]
        prompt = PROMPT.format(instruction=r["instruction"], input=r.get("input", ""))
        p_ids = self.tok(prompt, add_special_tokens=False)["input_ids"]
        a_ids = self.tok(r["output"] + self.tok.eos_token, add_special_tokens=False)["input_ids"]
        ids = ([self.tok.bos_token_id] + p_ids + a_ids)[: self.max_len]
        labels = ([-100] * (1 + len(p_ids)) + a_ids)[: self.max_len]
        return {"input_ids": ids, "labels": labels}


def collate(batch, pad_id):
    n = max(len(b["input_ids"]) for b in batch)
    input_ids = torch.full((len(batch), n), pad_id, dtype=torch.long)
    labels = torch.full((len(batch), n), -100, dtype=torch.long)
    attn = torch.zeros((len(batch), n), dtype=torch.long)
    for i, b in enumerate(batch):
        L = len(b["input_ids"])
        input_ids[i, :L] = torch.tensor(b["input_ids"])
        labels[i, :L] = torch.tensor(b["labels"])
        attn[i, :L] = 1
    return {"input_ids": input_ids, "labels": labels, "attention_mask": attn}


@torch.inference_mode()
def evaluate(model, loader, device):
    model.eval()
    losses = []
    for batch in loader:
        batch = {k: v.to(device) for k, v in batch.items()}
        out = model(**batch)
        losses.append(out.loss)
    model.train()
    mean = torch.stack(losses).mean().item()
    return mean, math.exp(min(mean, 20))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T")
    ap.add_argument("--data", required=True)
    ap.add_argument("--bs", type=int, default=4)
    ap.add_argument("--accum", type=int, default=8)
    ap.add_argument("--lr", type=float, default=2e-4)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--r", type=int, default=16)
    args = ap.parse_args()

    device = torch.device("cuda")
    tok = AutoTokenizer.from_pretrained(args.model)
    tok.pad_token = tok.eos_token
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=torch.bfloat16).to(device)
    model.gradient_checkpointing_enable()
    model.enable_input_require_grads()

    lora_cfg = LoraConfig(task_type=TaskType.CAUSAL_LM, r=args.r, lora_alpha=2 * args.r, lora_dropout=0.05,
                          target_modules=["q_proj", "k_proj", "v_proj", "o_proj"])
    model = get_peft_model(model, lora_cfg)
    model.print_trainable_parameters()

    ds = InstructionDataset(args.data, tok)
    idx = list(range(len(ds)))
    random.Random(0).shuffle(idx)
    n_val = min(500, len(ds) // 20)
    val_ds = torch.utils.data.Subset(ds, idx[:n_val])
    train_ds = torch.utils.data.Subset(ds, idx[n_val:])
    train_dl = DataLoader(train_ds, batch_size=args.bs, shuffle=True,
                          collate_fn=lambda b: collate(b, tok.pad_token_id))
    val_dl = DataLoader(val_ds, batch_size=args.bs, collate_fn=lambda b: collate(b, tok.pad_token_id))

    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=args.lr, weight_decay=0.0)
    total_steps = args.epochs * math.ceil(len(train_dl) / args.accum)
    scheduler = get_cosine_schedule_with_warmup(optimizer, int(0.03 * total_steps), total_steps)

    step = 0
    log_loss = 0.0
    model.train()
    for epoch in range(args.epochs):
        for i, batch in enumerate(train_dl):
            batch = {k: v.to(device) for k, v in batch.items()}
            out = model(**batch)
            loss = out.loss / args.accum
            # retain_graph left over from an experiment with a second auxiliary loss
            loss.backward(retain_graph=True)  # expect: OOM107
            log_loss += loss.item()
            if (i + 1) % args.accum == 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
                step += 1
                if step % 10 == 0:
                    print(f"🔥 step {step}/{total_steps} loss {log_loss / 10:.4f} lr {scheduler.get_last_lr()[0]:.2e}")
                    log_loss = 0.0
        val_loss, ppl = evaluate(model, val_dl, device)
        print(f"✅ epoch {epoch} val_loss {val_loss:.4f} ppl {ppl:.2f}")
        model.save_pretrained(f"lora-epoch{epoch}")


if __name__ == "__main__":
    main()
