"""CoNLL-2003 NER with bert-base-cased, HF Trainer + seqeval; plus a tiny interactive tagger."""
import sys

import numpy as np
import evaluate
from datasets import load_dataset
from transformers import (AutoModelForTokenClassification, AutoTokenizer, DataCollatorForTokenClassification,
                          EarlyStoppingCallback, Trainer, TrainingArguments)

CKPT = "bert-base-cased"
raw = load_dataset("conll2003")
label_names = raw["train"].features["ner_tags"].feature.names
id2label = dict(enumerate(label_names))
label2id = {v: k for k, v in id2label.items()}
tokenizer = AutoTokenizer.from_pretrained(CKPT)
seqeval = evaluate.load("seqeval")


def align_labels(batch):
    enc = tokenizer(batch["tokens"], truncation=True, is_split_into_words=True)
    all_labels = []
    for i, tags in enumerate(batch["ner_tags"]):
        prev, labels = None, []
        for wid in enc.word_ids(i):
            if wid is None:
                labels.append(-100)
            elif wid != prev:
                labels.append(tags[wid])
            else:
                lab = tags[wid]
                labels.append(lab + 1 if label_names[lab].startswith("B-") else lab)
            prev = wid
        all_labels.append(labels)
    enc["labels"] = all_labels
    return enc


def compute_metrics(p):
    logits, labels = p
    preds = np.argmax(logits, axis=-1)
    true_p = [[label_names[q] for q, l in zip(pr, la) if l != -100] for pr, la in zip(preds, labels)]
    true_l = [[label_names[l] for q, l in zip(pr, la) if l != -100] for pr, la in zip(preds, labels)]
    r = seqeval.compute(predictions=true_p, references=true_l)
    return {"precision": r["overall_precision"], "recall": r["overall_recall"], "f1": r["overall_f1"]}


def predict_entities(model, sentence):
    """Debug helper: print word-level tags for one sentence."""
    model.eval()
    words = sentence.split()
    enc = tokenizer(words, is_split_into_words=True, return_tensors="pt").to(model.device)
    logits = model(**enc).logits  # expect: OOM104
    ids = logits.argmax(-1)[0].tolist()
    seen, out = set(), []
    for tok_i, wid in enumerate(enc.word_ids(0)):
        if wid is not None and wid not in seen:
            seen.add(wid)
            out.append((words[wid], id2label[ids[tok_i]]))
    return out


if __name__ == "__main__":
    tokenized = raw.map(align_labels, batched=True, remove_columns=raw["train"].column_names)
    model = AutoModelForTokenClassification.from_pretrained(CKPT, id2label=id2label, label2id=label2id)
    args = TrainingArguments("out/bert-ner", eval_strategy="epoch", save_strategy="epoch", learning_rate=2e-5,
                             num_train_epochs=5, weight_decay=0.01, per_device_train_batch_size=32,
                             load_best_model_at_end=True, metric_for_best_model="f1", report_to="tensorboard")
    trainer = Trainer(model=model, args=args,  # expect: OOM109
                      train_dataset=tokenized["train"], eval_dataset=tokenized["validation"],
                      data_collator=DataCollatorForTokenClassification(tokenizer),
                      processing_class=tokenizer, compute_metrics=compute_metrics,
                      callbacks=[EarlyStoppingCallback(early_stopping_patience=2)])
    trainer.train()
    print(trainer.evaluate(tokenized["test"], metric_key_prefix="test"))
    for line in sys.stdin:
        print(predict_entities(trainer.model, line.strip()))
