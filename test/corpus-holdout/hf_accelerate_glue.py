"""GLUE/MRPC fine-tuning with 🤗 Accelerate (works on 1 GPU, DDP via `accelerate launch`, or TPU)."""
import argparse
import math
import os

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import evaluate
import torch
from accelerate import Accelerator
from accelerate.utils import set_seed
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import (AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding,
                          get_cosine_schedule_with_warmup)


def build_dataloaders(tok, bs, eval_bs):
    raw = load_dataset("glue", "mrpc")

    def encode(ex):
        return tok(ex["sentence1"], ex["sentence2"], truncation=True, max_length=128)

    ds = raw.map(encode, batched=True, remove_columns=["idx", "sentence1", "sentence2"])
    ds = ds.rename_column("label", "labels")
    collate = DataCollatorWithPadding(tok, pad_to_multiple_of=8)
    return (DataLoader(ds["train"], shuffle=True, batch_size=bs, collate_fn=collate),
            DataLoader(ds["validation"], batch_size=eval_bs, collate_fn=collate))


def run_validation(model, loader, accelerator, metric):
    model.eval()
    losses = []
    for batch in loader:
        with torch.no_grad():
            outputs = model(**batch)
        preds = outputs.logits.argmax(dim=-1)
        preds, refs = accelerator.gather_for_metrics((preds, batch["labels"]))
        metric.add_batch(predictions=preds, references=refs)
        losses.append(accelerator.gather_for_metrics(outputs.loss.repeat(batch["labels"].shape[0])))
    score = metric.compute()
    score["eval_loss"] = torch.cat(losses).mean().item()
    return score


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="roberta-base")
    ap.add_argument("--lr", type=float, default=2e-5)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--bs", type=int, default=16)
    ap.add_argument("--grad-accum", type=int, default=4)
    ap.add_argument("--mixed-precision", default="bf16")
    args = ap.parse_args()

    accelerator = Accelerator(mixed_precision=args.mixed_precision, gradient_accumulation_steps=args.grad_accum,
                              log_with="tensorboard", project_dir="runs/mrpc")
    set_seed(42)
    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForSequenceClassification.from_pretrained(args.model, num_labels=2)
    train_dl, eval_dl = build_dataloaders(tok, args.bs, args.bs * 2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    steps = math.ceil(len(train_dl) / args.grad_accum) * args.epochs
    scheduler = get_cosine_schedule_with_warmup(optimizer, int(0.06 * steps), steps)
    model, optimizer, train_dl, eval_dl, scheduler = accelerator.prepare(model, optimizer, train_dl, eval_dl,
                                                                         scheduler)
    accelerator.init_trackers("mrpc", config=vars(args))
    metric = evaluate.load("glue", "mrpc")

    step = 0
    for epoch in range(args.epochs):
        model.train()
        total_loss = 0
        for batch in train_dl:
            with accelerator.accumulate(model):
                outputs = model(**batch)
                loss = outputs.loss
                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
            total_loss += loss.detach().float()
            if accelerator.sync_gradients:
                step += 1
                if step % 25 == 0:
                    accelerator.log({"train/loss": loss.item(), "lr": scheduler.get_last_lr()[0]}, step=step)

        score = run_validation(model, eval_dl, accelerator, metric)
        accelerator.print(f"epoch {epoch}: {score} train_loss {total_loss.item() / len(train_dl):.4f}")
        accelerator.log({"train/epoch_loss": total_loss.item() / len(train_dl), **score}, step=step)

    accelerator.wait_for_everyone()
    accelerator.unwrap_model(model).save_pretrained("out/mrpc", save_function=accelerator.save,
                                                    is_main_process=accelerator.is_main_process)
    accelerator.end_training()


if __name__ == "__main__":
    main()
