"""Fine-tune google/vit-base-patch16-224-in21k on food101 with the 🤗 Trainer."""
import numpy as np
import torch
import transformers
from datasets import load_dataset
from torchvision.transforms import CenterCrop, Compose, Normalize, RandomResizedCrop, RandomHorizontalFlip, Resize, ToTensor

checkpoint = "google/vit-base-patch16-224-in21k"
food = load_dataset("ethz/food101")
labels = food["train"].features["label"].names
label2id = {l: str(i) for i, l in enumerate(labels)}
id2label = {str(i): l for i, l in enumerate(labels)}

image_processor = transformers.AutoImageProcessor.from_pretrained(checkpoint)
normalize = Normalize(mean=image_processor.image_mean, std=image_processor.image_std)
size = image_processor.size["height"]
train_tf = Compose([RandomResizedCrop(size), RandomHorizontalFlip(), ToTensor(), normalize])
val_tf = Compose([Resize(size), CenterCrop(size), ToTensor(), normalize])


def train_transforms(examples):
    examples["pixel_values"] = [train_tf(img.convert("RGB")) for img in examples["image"]]
    del examples["image"]
    return examples


def val_transforms(examples):
    examples["pixel_values"] = [val_tf(img.convert("RGB")) for img in examples["image"]]
    del examples["image"]
    return examples


food["train"].set_transform(train_transforms)
food["validation"].set_transform(val_transforms)


def collate_fn(examples):
    pixel_values = torch.stack([example["pixel_values"] for example in examples])
    labels = torch.tensor([example["label"] for example in examples])
    return {"pixel_values": pixel_values, "labels": labels}


def compute_metrics(eval_pred):
    predictions = np.argmax(eval_pred.predictions, axis=1)
    return {"accuracy": float((predictions == eval_pred.label_ids).mean())}


model = transformers.AutoModelForImageClassification.from_pretrained(
    checkpoint,
    num_labels=len(labels),
    id2label=id2label,
    label2id=label2id,
)

training_args = transformers.TrainingArguments(
    output_dir="vit-food101",
    remove_unused_columns=False,
    eval_strategy="epoch",
    save_strategy="epoch",
    learning_rate=5e-5,
    per_device_train_batch_size=64,
    gradient_accumulation_steps=4,
    per_device_eval_batch_size=64,
    num_train_epochs=3,
    warmup_ratio=0.1,
    logging_steps=10,
    load_best_model_at_end=True,
    metric_for_best_model="accuracy",
    dataloader_num_workers=8,
    bf16=True,
)

trainer = transformers.Trainer(  # expect: OOM109
    model=model,
    args=training_args,
    data_collator=collate_fn,
    train_dataset=food["train"],
    eval_dataset=food["validation"],
    processing_class=image_processor,
    compute_metrics=compute_metrics,
)
trainer.train()
trainer.save_model("vit-food101/best")
