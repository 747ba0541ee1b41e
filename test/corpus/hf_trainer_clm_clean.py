#!/usr/bin/env python
# Continued pre-training of a small causal LM with token-level accuracy as the eval metric.
# preprocess_logits_for_metrics reduces the logits to argmax ids before they are gathered,
# so the evaluation loop never holds batch x seq x vocab floats.
import math
import os
from itertools import chain

import evaluate
import torch
from datasets import load_dataset
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    Trainer,
    TrainingArguments,
    default_data_collator,
    set_seed,
)

MODEL_NAME = os.environ.get("MODEL_NAME", "gpt2")
BLOCK = 1024

# do not override a device selection that the job scheduler already made
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")

set_seed(42)
raw = load_dataset("wikitext", "wikitext-103-raw-v1")
tokenizer = AutoTokenizer.from_pretrained(MODEL_NAME)


def tokenize_function(examples):
    return tokenizer(examples["text"])


def group_texts(examples):
    concatenated = {k: list(chain(*examples[k])) for k in examples.keys()}
    total_length = len(concatenated[list(examples.keys())[0]])
    total_length = (total_length // BLOCK) * BLOCK
    result = {
        k: [t[i: i + BLOCK] for i in range(0, total_length, BLOCK)]
        for k, t in concatenated.items()
    }
    result["labels"] = result["input_ids"].copy()
    return result


tokenized = raw.map(tokenize_function, batched=True, remove_columns=["text"], num_proc=8)
lm_datasets = tokenized.map(group_texts, batched=True, num_proc=8)

model = AutoModelForCausalLM.from_pretrained(MODEL_NAME, torch_dtype=torch.bfloat16)
metric = evaluate.load("accuracy")


def preprocess_logits_for_metrics(logits, labels):
    if isinstance(logits, tuple):
        # Depending on the model and config, logits may contain extra tensors,
        # like past_key_values, but logits always come first
        logits = logits[0]
    return logits.argmax(dim=-1)


def compute_metrics(eval_preds):
    preds, labels = eval_preds
    # preds have the same shape as the labels, after the argmax(-1) has been calculated
    # by preprocess_logits_for_metrics but we need to shift the labels
    labels = labels[:, 1:].reshape(-1)
    preds = preds[:, :-1].reshape(-1)
    return metric.compute(predictions=preds, references=labels)


args = TrainingArguments(
    output_dir="clm-out",
    per_device_train_batch_size=8,
    per_device_eval_batch_size=8,
    gradient_accumulation_steps=4,
    learning_rate=3e-4,
    num_train_epochs=1,
    bf16=True,
    eval_strategy="steps",
    eval_steps=1000,
    logging_steps=50,
    gradient_checkpointing=True,
    report_to="none",
)

trainer = Trainer(
    model=model,
    args=args,
    train_dataset=lm_datasets["train"],
    eval_dataset=lm_datasets["validation"],
    processing_class=tokenizer,
    data_collator=default_data_collator,
    compute_metrics=compute_metrics,
    preprocess_logits_for_metrics=preprocess_logits_for_metrics,
)

train_result = trainer.train()
trainer.save_model()
metrics = trainer.evaluate()
try:
    perplexity = math.exp(metrics["eval_loss"])
except OverflowError:
    perplexity = float("inf")
metrics["perplexity"] = perplexity
trainer.log_metrics("eval", metrics)
trainer.save_metrics("eval", metrics)
