"""Token classification (NER) on CoNLL-2003 with bert-base-cased.

`python hf_trainer_ner.py config.json`
"""
import os
import sys
from dataclasses import dataclass, field

import numpy as np
import evaluate
from datasets import load_dataset
from transformers import (
    AutoModelForTokenClassification,
    AutoTokenizer,
    DataCollatorForTokenClassification,
    HfArgumentParser,
    Trainer,
    TrainingArguments,
)


@dataclass
class RunConfig:
    model_name: str = field(default="bert-base-cased")
    dataset_name: str = field(default="conll2003")
    gpu_ids: str = field(default="0")
    label_all_tokens: bool = field(default=False)


parser = HfArgumentParser((RunConfig, TrainingArguments))
if len(sys.argv) == 2 and sys.argv[1].endswith(".json"):
    run_cfg, training_args = parser.parse_json_file(json_file=os.path.abspath(sys.argv[1]))
else:
    run_cfg, training_args = parser.parse_args_into_dataclasses()

# taken from the config file, not hard-coded here
os.environ["CUDA_VISIBLE_DEVICES"] = run_cfg.gpu_ids

raw = load_dataset(run_cfg.dataset_name)
label_list = raw["train"].features["ner_tags"].feature.names
tokenizer = AutoTokenizer.from_pretrained(run_cfg.model_name)
model = AutoModelForTokenClassification.from_pretrained(run_cfg.model_name, num_labels=len(label_list))
seqeval = evaluate.load("seqeval")


def tokenize_and_align_labels(examples):
    tokenized_inputs = tokenizer(examples["tokens"], truncation=True, is_split_into_words=True)
    labels = []
    for i, label in enumerate(examples["ner_tags"]):
        word_ids = tokenized_inputs.word_ids(batch_index=i)
        previous_word_idx = None
        label_ids = []
        for word_idx in word_ids:
            if word_idx is None:
                label_ids.append(-100)
            elif word_idx != previous_word_idx:
                label_ids.append(label[word_idx])
            else:
                label_ids.append(label[word_idx] if run_cfg.label_all_tokens else -100)
            previous_word_idx = word_idx
        labels.append(label_ids)
    tokenized_inputs["labels"] = labels
    return tokenized_inputs


tokenized = raw.map(tokenize_and_align_labels, batched=True)


def compute_metrics(p):
    predictions, labels = p
    predictions = np.argmax(predictions, axis=2)
    true_predictions = [
        [label_list[p] for (p, l) in zip(prediction, label) if l != -100]
        for prediction, label in zip(predictions, labels)
    ]
    true_labels = [
        [label_list[l] for (p, l) in zip(prediction, label) if l != -100]
        for prediction, label in zip(predictions, labels)
    ]
    results = seqeval.compute(predictions=true_predictions, references=true_labels)
    return {
        "precision": results["overall_precision"],
        "recall": results["overall_recall"],
        "f1": results["overall_f1"],
        "accuracy": results["overall_accuracy"],
    }


trainer = Trainer(model=model, args=training_args, train_dataset=tokenized["train"],  # expect: OOM109
                  eval_dataset=tokenized["validation"], processing_class=tokenizer,
                  data_collator=DataCollatorForTokenClassification(tokenizer),
                  compute_metrics=compute_metrics)

if training_args.do_train:
    trainer.train()
    trainer.save_model()
if training_args.do_eval:
    metrics = trainer.evaluate()
    trainer.log_metrics("eval", metrics)
