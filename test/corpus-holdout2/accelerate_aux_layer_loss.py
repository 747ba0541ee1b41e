"""Sequence classification with an auxiliary loss on a middle layer (deep supervision), HF Accelerate.

accelerate launch --mixed_precision bf16 accelerate_aux_layer_loss.py
"""
import argparse
import itertools

import evaluate
import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate import Accelerator
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding, get_scheduler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name_or_path", default="roberta-base")
    parser.add_argument("--per_device_batch_size", type=int, default=16)
    parser.add_argument("--num_epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--aux_weight", type=float, default=0.3)
    parser.add_argument("--return_attn", action="store_true")
    args = parser.parse_args()

    accelerator = Accelerator(gradient_accumulation_steps=4)
    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
    raw = load_dataset("glue", "mrpc")

    def tok(ex):
        return tokenizer(ex["sentence1"], ex["sentence2"], truncation=True, max_length=256)

    with accelerator.main_process_first():
        data = raw.map(tok, batched=True, remove_columns=["idx", "sentence1", "sentence2"])
    data = data.rename_column("label", "labels")
    collator = DataCollatorWithPadding(tokenizer, pad_to_multiple_of=8)
    train_dl = DataLoader(data["train"], shuffle=True, batch_size=args.per_device_batch_size, collate_fn=collator)
    eval_dl = DataLoader(data["validation"], batch_size=64, collate_fn=collator)

    model = AutoModelForSequenceClassification.from_pretrained(
        args.model_name_or_path, num_labels=2, output_attentions=args.return_attn
    )
    aux_head = nn.Linear(model.config.hidden_size, 2)
    optimizer = torch.optim.AdamW(itertools.chain(model.parameters(), aux_head.parameters()), lr=args.lr)
    num_steps = args.num_epochs * len(train_dl)
    scheduler = get_scheduler("linear", optimizer, num_warmup_steps=100, num_training_steps=num_steps)

    model, aux_head, optimizer, train_dl, eval_dl, scheduler = accelerator.prepare(
        model, aux_head, optimizer, train_dl, eval_dl, scheduler
    )
    metric = evaluate.load("glue", "mrpc")

    for epoch in range(args.num_epochs):
        model.train()
        for step, batch in enumerate(train_dl):
            with accelerator.accumulate(model):
                outputs = model(
                    input_ids=batch["input_ids"],
                    attention_mask=batch["attention_mask"],
                    labels=batch["labels"],
                    output_hidden_states=True,  # expect: OOM115
                )
                mid = outputs.hidden_states[len(outputs.hidden_states) // 2][:, 0]
                aux_loss = F.cross_entropy(aux_head(mid), batch["labels"])
                loss = outputs.loss + args.aux_weight * aux_loss
                accelerator.backward(loss)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
            if step % 50 == 0:
                accelerator.print(f"epoch {epoch} step {step} loss {loss.item():.4f}")

        model.eval()
        for batch in eval_dl:
            with torch.no_grad():
                outputs = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
            predictions = outputs.logits.argmax(dim=-1)
            predictions, references = accelerator.gather_for_metrics((predictions, batch["labels"]))
            metric.add_batch(predictions=predictions, references=references)
        accelerator.print(f"epoch {epoch}:", metric.compute())

    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        accelerator.unwrap_model(model).save_pretrained("mrpc-aux", save_function=accelerator.save)


if __name__ == "__main__":
    main()
