"""Instruction-tune a 1.3B causal LM with DeepSpeed ZeRO-2 (falls back to plain PyTorch without --deepspeed).

    deepspeed --num_gpus 4 deepspeed_engine_finetune.py --deepspeed --ds_config ds_zero2.json
"""
import argparse
import json
import os

os.environ["CUDA_VISIBLE_DEVICES"] = "0,1,2,3"  # expect: OOM105

import torch
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoTokenizer, default_data_collator

try:
    import deepspeed
except ImportError:  # CPU dev boxes
    deepspeed = None

PROMPT = "### Instruction:\n{instruction}\n\n### Response:\n"


def tokenize(example, tok, max_len):
    prompt = PROMPT.format(instruction=example["instruction"])
    full = prompt + example["output"] + tok.eos_token
    ids = tok(full, max_length=max_len, truncation=True, padding="max_length")
    n_prompt = len(tok(prompt)["input_ids"])
    labels = [-100 if (i < n_prompt or m == 0) else t
              for i, (t, m) in enumerate(zip(ids["input_ids"], ids["attention_mask"]))]
    ids["labels"] = labels
    return ids


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    tot, n = 0.0, 0
    for batch in loader:
        batch = {k: v.to(device) for k, v in batch.items()}
        tot += model(**batch).loss.float().item()
        n += 1
    model.train()
    return tot / max(n, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="EleutherAI/pythia-1.4b")
    ap.add_argument("--deepspeed", action="store_true")
    ap.add_argument("--ds_config", default="ds_zero2.json")
    ap.add_argument("--local_rank", type=int, default=-1)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--max_len", type=int, default=512)
    args = ap.parse_args()

    tok = AutoTokenizer.from_pretrained(args.model)
    tok.pad_token = tok.eos_token
    ds = load_dataset("yahma/alpaca-cleaned", split="train").train_test_split(test_size=0.02, seed=0)
    ds = ds.map(lambda e: tokenize(e, tok, args.max_len), remove_columns=ds["train"].column_names)
    ds.set_format("torch")
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=torch.bfloat16)
    model.gradient_checkpointing_enable()

    with open(args.ds_config) as f:
        ds_cfg = json.load(f)
    micro_bs = ds_cfg.get("train_micro_batch_size_per_gpu", 4)
    eval_dl = DataLoader(ds["test"], batch_size=micro_bs, collate_fn=default_data_collator)

    if args.deepspeed:
        engine, optimizer, train_dl, _ = deepspeed.initialize(
            model=model, model_parameters=[p for p in model.parameters() if p.requires_grad],
            training_data=ds["train"], collate_fn=default_data_collator, config=ds_cfg)
        device = engine.device
    else:
        device = torch.device("cuda")
        engine = model.to(device)
        optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5, weight_decay=0.0)
        train_dl = DataLoader(ds["train"], batch_size=micro_bs, shuffle=True, collate_fn=default_data_collator)

    recent_losses = []
    step = 0
    for epoch in range(args.epochs):
        engine.train()
        for batch in train_dl:
            batch = {k: v.to(device) for k, v in batch.items()}
            loss = engine(**batch).loss
            if args.deepspeed:
                engine.backward(loss)
                engine.step()
            else:
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
            recent_losses.append(loss)  # expect: OOM101
            step += 1
            if step % 10 == 0:
                avg = sum(float(l) for l in recent_losses[-10:]) / 10
                print(f"[epoch {epoch} step {step}] loss {avg:.4f}", flush=True)
        print(f"epoch {epoch}: eval loss {evaluate(engine, eval_dl, device):.4f}")
        if args.deepspeed:
            engine.save_checkpoint("ckpt", tag=f"epoch{epoch}")
        else:
            model.save_pretrained(f"ckpt/epoch{epoch}")


if __name__ == "__main__":
    main()
