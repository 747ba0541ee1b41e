"""Domain-adaptive MLM pre-training of RoBERTa on our support tickets.

Only the loss is needed during evaluation, so no compute_metrics and
prediction_loss_only=True: the Trainer does not keep any logits around.
"""
import argparse
import os

from datasets import load_dataset
from transformers import (
    AutoModelForMaskedLM,
    AutoTokenizer,
    DataCollatorForLanguageModeling,
    Trainer,
    TrainingArguments,
)

ap = argparse.ArgumentParser()
ap.add_argument("--data", default="tickets.txt")
ap.add_argument("--gpus", default=None, help="comma separated GPU ids, e.g. 0,1")
ap.add_argument("--out", default="roberta-tickets")
cli = ap.parse_args()

if cli.gpus:
    os.environ["CUDA_VISIBLE_DEVICES"] = cli.gpus

tokenizer = AutoTokenizer.from_pretrained("roberta-base")
model = AutoModelForMaskedLM.from_pretrained("roberta-base")

ds = load_dataset("text", data_files={"train": cli.data})
ds = ds["train"].train_test_split(test_size=0.02, seed=13)


def tokenize(batch):
    return tokenizer(batch["text"], truncation=True, max_length=256, return_special_tokens_mask=True)


ds = ds.map(tokenize, batched=True, remove_columns=["text"])
collator = DataCollatorForLanguageModeling(tokenizer=tokenizer, mlm_probability=0.15)

training_args = TrainingArguments(
    output_dir=cli.out,
    per_device_train_batch_size=32,
    per_device_eval_batch_size=64,
    learning_rate=5e-5,
    warmup_ratio=0.06,
    num_train_epochs=3,
    eval_strategy="steps",
    eval_steps=2000,
    save_steps=2000,
    logging_steps=100,
    prediction_loss_only=True,
    bf16=True,
    report_to="none",
)

trainer = Trainer(
    model=model,
    args=training_args,
    data_collator=collator,
    train_dataset=ds["train"],
    eval_dataset=ds["test"],
)

if __name__ == "__main__":
    trainer.train()
    trainer.save_model(cli.out)
    print(trainer.evaluate())
