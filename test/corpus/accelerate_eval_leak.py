"""Causal-LM fine-tuning with accelerate; evaluation computes perplexity and dumps logits.

accelerate launch accelerate_eval_leak.py --model gpt2 --train_file train.jsonl --eval_file dev.jsonl
"""
import argparse
import math

import torch
from accelerate import Accelerator
from accelerate.utils import set_seed
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling, get_scheduler


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="gpt2")
    p.add_argument("--train_file", required=True)
    p.add_argument("--eval_file", required=True)
    p.add_argument("--block_size", type=int, default=512)
    p.add_argument("--per_device_batch_size", type=int, default=8)
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--grad_accum", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def evaluate(model, eval_dataloader, accelerator):
    model.eval()
    eval_loss = 0.0
    all_logits = []
    for step, batch in enumerate(eval_dataloader):
        outputs = model(**batch)  # expect: OOM104
        eval_loss += outputs.loss  # expect: OOM102
        all_logits.append(outputs.logits)  # expect: OOM101
        if step % 100 == 0:
            accelerator.print(f"eval step {step}")
    eval_loss = accelerator.gather(eval_loss.reshape(1)).mean().item() / len(eval_dataloader)
    try:
        perplexity = math.exp(eval_loss)
    except OverflowError:
        perplexity = float("inf")
    return perplexity, all_logits


def main():
    args = parse_args()
    accelerator = Accelerator(gradient_accumulation_steps=args.grad_accum)
    set_seed(args.seed)

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    tokenizer.pad_token = tokenizer.eos_token
    raw = load_dataset("json", data_files={"train": args.train_file, "validation": args.eval_file})

    def tok(ex):
        return tokenizer(ex["text"], truncation=True, max_length=args.block_size)

    with accelerator.main_process_first():
        tokenized = raw.map(tok, batched=True, remove_columns=raw["train"].column_names)

    collator = DataCollatorForLanguageModeling(tokenizer, mlm=False)
    train_dl = DataLoader(tokenized["train"], shuffle=True, collate_fn=collator,
                          batch_size=args.per_device_batch_size)
    eval_dl = DataLoader(tokenized["validation"], collate_fn=collator,
                         batch_size=args.per_device_batch_size)

    model = AutoModelForCausalLM.from_pretrained(args.model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    num_training_steps = args.epochs * math.ceil(len(train_dl) / args.grad_accum)
    lr_scheduler = get_scheduler("cosine", optimizer=optimizer, num_warmup_steps=200,
                                 num_training_steps=num_training_steps)

    model, optimizer, train_dl, eval_dl, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dl, eval_dl, lr_scheduler)

    completed_steps = 0
    for epoch in range(args.epochs):
        model.train()
        total_loss = 0.0
        for step, batch in enumerate(train_dl):
            with accelerator.accumulate(model):
                outputs = model(**batch)
                loss = outputs.loss
                total_loss += loss.detach().float()
                accelerator.backward(loss)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                completed_steps += 1

        ppl, logits_list = evaluate(model, eval_dl, accelerator)
        accelerator.print(f"epoch {epoch}: train_loss {total_loss.item() / len(train_dl):.4f} ppl {ppl:.2f}")
        if accelerator.is_main_process:
            logits = torch.cat([l.float().cpu() for l in logits_list])
            torch.save(logits, f"eval_logits_epoch{epoch}.pt")

    accelerator.wait_for_everyone()
    accelerator.unwrap_model(model).save_pretrained("out", save_function=accelerator.save)


if __name__ == "__main__":
    main()
