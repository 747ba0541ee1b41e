"""BART-base on XSum with Seq2SeqTrainer + ROUGE. Config as a plain dict so sweeps can patch it."""
import os

os.environ["CUDA_VISIBLE_DEVICES"] = "0"  # expect: OOM105
os.environ["WANDB_PROJECT"] = "xsum-bart"

import nltk
import numpy as np
import torch
import evaluate
from datasets import load_dataset
from transformers import (AutoModelForSeq2SeqLM, AutoTokenizer, DataCollatorForSeq2Seq, Seq2SeqTrainer,
                          Seq2SeqTrainingArguments)

CONFIG = {
    "model": "facebook/bart-base",
    "max_source": 512,
    "max_target": 64,
    "lr": 5e-5,
    "epochs": 3,
    "bs": 16,
    "gen_beams": 4,
    "out": "out/bart-xsum",
}

nltk.download("punkt", quiet=True)
tokenizer = AutoTokenizer.from_pretrained(CONFIG["model"])
rouge = evaluate.load("rouge")


def preprocess(batch):
    enc = tokenizer(batch["document"], max_length=CONFIG["max_source"], truncation=True)
    enc["labels"] = tokenizer(text_target=batch["summary"], max_length=CONFIG["max_target"],
                              truncation=True)["input_ids"]
    return enc


def compute_metrics(eval_preds):
    preds, labels = eval_preds
    preds = np.where(preds != -100, preds, tokenizer.pad_token_id)
    labels = np.where(labels != -100, labels, tokenizer.pad_token_id)
    dec_p = ["\n".join(nltk.sent_tokenize(p.strip())) for p in tokenizer.batch_decode(preds, skip_special_tokens=True)]
    dec_l = ["\n".join(nltk.sent_tokenize(l.strip())) for l in tokenizer.batch_decode(labels, skip_special_tokens=True)]
    res = rouge.compute(predictions=dec_p, references=dec_l, use_stemmer=True)
    return {k: round(v * 100, 2) for k, v in res.items()}


def predict(model, texts, device="cuda"):
    model.eval()
    enc = tokenizer(texts, max_length=CONFIG["max_source"], truncation=True, padding=True,
                    return_tensors="pt").to(device)
    with torch.no_grad():
        out = model.generate(**enc, num_beams=CONFIG["gen_beams"], max_new_tokens=CONFIG["max_target"])
    return tokenizer.batch_decode(out, skip_special_tokens=True)


def main():
    raw = load_dataset("EdinburghNLP/xsum")
    tokenized = raw.map(preprocess, batched=True, remove_columns=raw["train"].column_names)
    model = AutoModelForSeq2SeqLM.from_pretrained(CONFIG["model"])
    args = Seq2SeqTrainingArguments(
        output_dir=CONFIG["out"],
        per_device_train_batch_size=CONFIG["bs"],
        per_device_eval_batch_size=CONFIG["bs"],
        learning_rate=CONFIG["lr"],
        num_train_epochs=CONFIG["epochs"],
        eval_strategy="epoch",
        predict_with_generate=True,
        generation_num_beams=CONFIG["gen_beams"],
        generation_max_length=CONFIG["max_target"],
        fp16=True,
        report_to="wandb",
    )
    trainer = Seq2SeqTrainer(  # expect: OOM109
        model=model,
        args=args,
        train_dataset=tokenized["train"],
        eval_dataset=tokenized["validation"].select(range(2000)),
        data_collator=DataCollatorForSeq2Seq(tokenizer, model=model),
        processing_class=tokenizer,
        compute_metrics=compute_metrics,
    )
    trainer.train()
    trainer.save_model(CONFIG["out"])
    print(predict(trainer.model, raw["test"]["document"][:4]))


if __name__ == "__main__":
    main()
