"""Two-stage pipeline: (1) classify whether a question is answerable, (2) generate the answer.

Stage 1 uses a logits reducer; stage 2 uses a seq2seq trainer with exact-match.
"""
import numpy as np
import torch
import transformers
from datasets import load_dataset
from transformers import (
    AutoModelForSeq2SeqLM,
    AutoModelForSequenceClassification,
    AutoTokenizer,
    DataCollatorForSeq2Seq,
    DataCollatorWithPadding,
    Seq2SeqTrainer,
    Seq2SeqTrainingArguments,
    TrainingArguments,
)

squad = load_dataset("squad_v2")


# ---------------------------------------------------------------- stage 1
cls_tok = AutoTokenizer.from_pretrained("roberta-base")
cls_model = AutoModelForSequenceClassification.from_pretrained("roberta-base", num_labels=2)


def cls_preprocess(ex):
    enc = cls_tok(ex["question"], ex["context"], truncation="only_second", max_length=384)
    enc["labels"] = [int(len(a["text"]) > 0) for a in ex["answers"]]
    return enc


cls_ds = squad.map(cls_preprocess, batched=True, remove_columns=squad["train"].column_names)


def reduce_logits(logits, labels):
    return torch.argmax(logits, dim=-1)


def cls_metrics(eval_pred):
    preds, labels = eval_pred
    return {"accuracy": float((preds == labels).mean())}


stage1 = transformers.Trainer(
    model=cls_model,
    args=TrainingArguments(output_dir="stage1", num_train_epochs=1, per_device_train_batch_size=32,
                           eval_strategy="epoch", report_to="none"),
    train_dataset=cls_ds["train"],
    eval_dataset=cls_ds["validation"],
    data_collator=DataCollatorWithPadding(cls_tok),
    compute_metrics=cls_metrics,
    preprocess_logits_for_metrics=reduce_logits,
)
stage1.train()

# quick sanity run on a slice, full-logit metrics are fine on 256 examples... or so we thought
probe = transformers.Trainer(model=cls_model, args=TrainingArguments(output_dir="probe", report_to="none"),  # expect: OOM109
                             eval_dataset=cls_ds["validation"].select(range(256)),
                             data_collator=DataCollatorWithPadding(cls_tok),
                             compute_metrics=lambda p: {"acc": float((np.argmax(p.predictions, -1) == p.label_ids).mean())})
print(probe.evaluate())


# ---------------------------------------------------------------- stage 2
gen_tok = AutoTokenizer.from_pretrained("google/flan-t5-base")
gen_model = AutoModelForSeq2SeqLM.from_pretrained("google/flan-t5-base")


def gen_preprocess(ex):
    inputs = [f"question: {q} context: {c}" for q, c in zip(ex["question"], ex["context"])]
    targets = [a["text"][0] if a["text"] else "unanswerable" for a in ex["answers"]]
    enc = gen_tok(inputs, max_length=512, truncation=True)
    enc["labels"] = gen_tok(text_target=targets, max_length=32, truncation=True)["input_ids"]
    return enc


gen_ds = squad.map(gen_preprocess, batched=True, remove_columns=squad["train"].column_names)


def exact_match(eval_pred):
    preds, labels = eval_pred
    if isinstance(preds, tuple):
        preds = preds[0]
    preds = np.argmax(preds, axis=-1) if preds.ndim == 3 else preds
    labels = np.where(labels != -100, labels, gen_tok.pad_token_id)
    p = gen_tok.batch_decode(preds, skip_special_tokens=True)
    t = gen_tok.batch_decode(labels, skip_special_tokens=True)
    return {"em": float(np.mean([a.strip() == b.strip() for a, b in zip(p, t)]))}


gen_args = Seq2SeqTrainingArguments(
    output_dir="stage2",
    per_device_train_batch_size=8,
    per_device_eval_batch_size=8,
    learning_rate=3e-4,
    num_train_epochs=2,
    eval_strategy="epoch",
    bf16=True,
    report_to="none",
)
stage2 = Seq2SeqTrainer(model=gen_model, args=gen_args,  # expect: OOM109
                        train_dataset=gen_ds["train"], eval_dataset=gen_ds["validation"],
                        data_collator=DataCollatorForSeq2Seq(gen_tok, model=gen_model),
                        compute_metrics=exact_match)
stage2.train()
