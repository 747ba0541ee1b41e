"""CoNLL-2003 NER with the HF Trainer; attention maps are returned so that a callback can
log the entropy of the last layer's attention."""
import numpy as np
import evaluate
from datasets import load_dataset
from transformers import (
    AutoConfig,
    AutoModelForTokenClassification,
    AutoTokenizer,
    DataCollatorForTokenClassification,
    Trainer,
    TrainingArguments,
)

model_name_or_path = "bert-base-cased"
raw = load_dataset("eriktks/conll2003")
label_list = raw["train"].features["ner_tags"].feature.names
num_labels = len(label_list)

tokenizer = AutoTokenizer.from_pretrained(model_name_or_path)
config = AutoConfig.from_pretrained(model_name_or_path, num_labels=num_labels)
config.output_attentions = True  # expect: OOM115
model = AutoModelForTokenClassification.from_pretrained(model_name_or_path, config=config)


def tokenize_and_align_labels(examples):
    tokenized = tokenizer(examples["tokens"], truncation=True, is_split_into_words=True, max_length=256)
    labels = []
    for i, tags in enumerate(examples["ner_tags"]):
        word_ids = tokenized.word_ids(batch_index=i)
        prev = None
        ids = []
        for w in word_ids:
            if w is None:
                ids.append(-100)
            elif w != prev:
                ids.append(tags[w])
            else:
                ids.append(-100)
            prev = w
        labels.append(ids)
    tokenized["labels"] = labels
    return tokenized


tokenized = raw.map(tokenize_and_align_labels, batched=True, remove_columns=raw["train"].column_names)
seqeval = evaluate.load("seqeval")


def preprocess_logits_for_metrics(logits, labels):
    if isinstance(logits, tuple):
        logits = logits[0]
    return logits.argmax(dim=-1)


def compute_metrics(p):
    predictions, labels = p
    true_predictions = [
        [label_list[pr] for (pr, l) in zip(prediction, label) if l != -100]
        for prediction, label in zip(predictions, labels)
    ]
    true_labels = [
        [label_list[l] for (pr, l) in zip(prediction, label) if l != -100]
        for prediction, label in zip(predictions, labels)
    ]
    results = seqeval.compute(predictions=true_predictions, references=true_labels)
    return {
        "precision": results["overall_precision"],
        "recall": results["overall_recall"],
        "f1": results["overall_f1"],
        "accuracy": results["overall_accuracy"],
    }


args = TrainingArguments(
    output_dir="ner-bert",
    learning_rate=3e-5,
    per_device_train_batch_size=32,
    per_device_eval_batch_size=64,
    num_train_epochs=3,
    weight_decay=0.01,
    eval_strategy="epoch",
    save_strategy="epoch",
    fp16=True,
)

trainer = Trainer(
    model=model,
    args=args,
    train_dataset=tokenized["train"],
    eval_dataset=tokenized["validation"],
    processing_class=tokenizer,
    data_collator=DataCollatorForTokenClassification(tokenizer),
    compute_metrics=compute_metrics,
    preprocess_logits_for_metrics=preprocess_logits_for_metrics,
)
trainer.train()
print(trainer.evaluate(tokenized["test"]))
print(np.round(trainer.state.best_metric or 0.0, 4))
