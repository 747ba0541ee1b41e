"""Fine-tune ViT on food101 (20% split) with the Trainer API. 🍕🍔🍜"""
import numpy as np
import torch
import evaluate
from datasets import load_dataset
from torchvision.transforms import Compose, Normalize, RandomResizedCrop, ToTensor
from transformers import AutoImageProcessor, AutoModelForImageClassification, Trainer, TrainingArguments
from transformers import DefaultDataCollator

food = load_dataset("food101", split="train[:20%]").train_test_split(test_size=0.2)
labels = food["train"].features["label"].names
label2id = {label: str(i) for i, label in enumerate(labels)}
id2label = {str(i): label for i, label in enumerate(labels)}

checkpoint = "google/vit-base-patch16-224-in21k"
image_processor = AutoImageProcessor.from_pretrained(checkpoint)
normalize = Normalize(mean=image_processor.image_mean, std=image_processor.image_std)
size = image_processor.size.get("shortest_edge", (image_processor.size["height"], image_processor.size["width"]))
_transforms = Compose([RandomResizedCrop(size), ToTensor(), normalize])


def transforms(examples):
    examples["pixel_values"] = [_transforms(img.convert("RGB")) for img in examples["image"]]
    del examples["image"]
    return examples


food = food.with_transform(transforms)
accuracy = evaluate.load("accuracy")


def compute_metrics(eval_pred):
    predictions, labels = eval_pred
    predictions = np.argmax(predictions, axis=1)
    return accuracy.compute(predictions=predictions, references=labels)


model = AutoModelForImageClassification.from_pretrained(
    checkpoint, num_labels=len(labels), id2label=id2label, label2id=label2id,
)

training_args = TrainingArguments(
    output_dir="vit_food101",
    remove_unused_columns=False,
    eval_strategy="epoch",
    save_strategy="epoch",
    learning_rate=5e-5,
    per_device_train_batch_size=16,
    gradient_accumulation_steps=4,
    per_device_eval_batch_size=16,
    num_train_epochs=3,
    warmup_ratio=0.1,
    logging_steps=10,
    load_best_model_at_end=True,
    metric_for_best_model="accuracy",
    report_to="none",
)

trainer = Trainer(  # expect: OOM109
    model=model,
    args=training_args,
    data_collator=DefaultDataCollator(),
    train_dataset=food["train"],
    eval_dataset=food["test"],
    processing_class=image_processor,
    compute_metrics=compute_metrics,
)

trainer.train()
print("done ✅", torch.cuda.max_memory_allocated() / 2**30, "GiB peak")
