"""Imbalanced intent classification (CLINC-style) with a focal-loss Trainer subclass.

Runs two configs back to back: the plain CE baseline and the focal-loss model.
"""
import numpy as np
import torch
import torch.nn.functional as F
from datasets import load_dataset
from sklearn.metrics import f1_score
from transformers import (AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding, Trainer,
                          TrainingArguments)

MODEL = "microsoft/deberta-v3-base"


class FocalTrainer(Trainer):
    def __init__(self, *args, gamma=2.0, class_weights=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.gamma = gamma
        self.class_weights = class_weights
        self._focal_terms = []

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        logits = outputs.logits
        logp = F.log_softmax(logits, dim=-1)
        logp_t = logp.gather(1, labels[:, None]).squeeze(1)
        w = self.class_weights.to(logits.device)[labels] if self.class_weights is not None else 1.0
        loss = (-w * (1 - logp_t.exp()) ** self.gamma * logp_t).mean()
        self._focal_terms.append(loss)  # expect: OOM101
        return (loss, outputs) if return_outputs else loss

    def log(self, logs, *args, **kwargs):
        if self._focal_terms:
            logs["focal_loss_window"] = torch.stack(self._focal_terms).mean().item()
            self._focal_terms.clear()
        super().log(logs, *args, **kwargs)


def compute_metrics(eval_pred):
    preds, labels = eval_pred
    if preds.ndim > 1:
        preds = preds.argmax(-1)
    return {"macro_f1": f1_score(labels, preds, average="macro"), "acc": float((preds == labels).mean())}


def argmax_logits(logits, labels):
    return logits.argmax(dim=-1)


def main():
    tok = AutoTokenizer.from_pretrained(MODEL)
    ds = load_dataset("clinc_oos", "imbalanced")
    ds = ds.map(lambda b: tok(b["text"], truncation=True, max_length=64), batched=True)
    ds = ds.rename_column("intent", "labels")
    n_labels = ds["train"].features["labels"].num_classes
    counts = np.bincount(ds["train"]["labels"], minlength=n_labels)
    class_weights = torch.tensor((counts.sum() / (n_labels * np.maximum(counts, 1))) ** 0.5, dtype=torch.float)
    collator = DataCollatorWithPadding(tok)

    def args_for(name):
        return TrainingArguments(output_dir=f"out/{name}", per_device_train_batch_size=32,
                                 per_device_eval_batch_size=64, learning_rate=3e-5, num_train_epochs=5,
                                 eval_strategy="epoch", save_strategy="epoch", load_best_model_at_end=True,
                                 metric_for_best_model="macro_f1", bf16=True, logging_steps=50, report_to="none")

    baseline = Trainer(  # expect: OOM109
        model=AutoModelForSequenceClassification.from_pretrained(MODEL, num_labels=n_labels),
        args=args_for("ce"),
        train_dataset=ds["train"],
        eval_dataset=ds["validation"],
        data_collator=collator,
        compute_metrics=compute_metrics,
    )
    baseline.train()
    print("baseline:", baseline.evaluate(ds["test"]))

    focal = FocalTrainer(
        model=AutoModelForSequenceClassification.from_pretrained(MODEL, num_labels=n_labels),
        args=args_for("focal"),
        train_dataset=ds["train"],
        eval_dataset=ds["validation"],
        data_collator=collator,
        compute_metrics=compute_metrics,
        preprocess_logits_for_metrics=argmax_logits,
        gamma=2.0,
        class_weights=class_weights,
    )
    focal.train()
    print("focal:", focal.evaluate(ds["test"]))


if __name__ == "__main__":
    main()
