"""BERT fine-tuning for CoLA without the Trainer (manual loop, linear warmup)."""
import random
import time

import numpy as np
import pandas as pd
import torch
from sklearn.metrics import matthews_corrcoef
from torch.nn import DataParallel
from torch.utils.data import DataLoader, RandomSampler, SequentialSampler, TensorDataset
from transformers import BertForSequenceClassification, BertTokenizer, get_linear_schedule_with_warmup

SEED = 42
random.seed(SEED)
np.random.seed(SEED)
torch.manual_seed(SEED)
torch.cuda.manual_seed_all(SEED)

device = torch.device("cuda")
n_gpu = torch.cuda.device_count()
print(f"There are {n_gpu} GPU(s) available.")

df = pd.read_csv("cola_public/raw/in_domain_train.tsv", delimiter="\t", header=None,
                 names=["sentence_source", "label", "label_notes", "sentence"])
sentences = df.sentence.values
labels = df.label.values

tokenizer = BertTokenizer.from_pretrained("bert-base-uncased", do_lower_case=True)
input_ids, attention_masks = [], []
for sent in sentences:
    encoded = tokenizer.encode_plus(sent, add_special_tokens=True, max_length=64, padding="max_length",
                                    truncation=True, return_attention_mask=True, return_tensors="pt")
    input_ids.append(encoded["input_ids"])
    attention_masks.append(encoded["attention_mask"])
input_ids = torch.cat(input_ids, dim=0)
attention_masks = torch.cat(attention_masks, dim=0)
labels = torch.tensor(labels)

dataset = TensorDataset(input_ids, attention_masks, labels)
train_size = int(0.9 * len(dataset))
train_dataset, val_dataset = torch.utils.data.random_split(dataset, [train_size, len(dataset) - train_size])
batch_size = 32
train_dataloader = DataLoader(train_dataset, sampler=RandomSampler(train_dataset), batch_size=batch_size)
validation_dataloader = DataLoader(val_dataset, sampler=SequentialSampler(val_dataset), batch_size=batch_size)

model = BertForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2,
                                                      output_attentions=False, output_hidden_states=False)
if n_gpu > 1:
    model = DataParallel(model)  # expect: OOM108
model.to(device)

optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5, eps=1e-8)
epochs = 4
total_steps = len(train_dataloader) * epochs
scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=0, num_training_steps=total_steps)


def flat_accuracy(preds, labels):
    pred_flat = np.argmax(preds, axis=1).flatten()
    labels_flat = labels.flatten()
    return np.sum(pred_flat == labels_flat) / len(labels_flat)


training_stats = []
model.zero_grad()
for epoch_i in range(epochs):
    print(f"\n======== Epoch {epoch_i + 1} / {epochs} ========")
    t0 = time.time()
    total_train_loss = 0
    model.train()
    for step, batch in enumerate(train_dataloader):
        b_input_ids = batch[0].to(device)
        b_input_mask = batch[1].to(device)
        b_labels = batch[2].to(device)
        outputs = model(b_input_ids, token_type_ids=None, attention_mask=b_input_mask, labels=b_labels)
        loss = outputs.loss.mean()
        total_train_loss += loss.item()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()  # expect: OOM103
        scheduler.step()
        if step % 40 == 0 and step != 0:
            print(f"  Batch {step:>5,}  of  {len(train_dataloader):>5,}.  Elapsed: {time.time() - t0:.0f}s")

    avg_train_loss = total_train_loss / len(train_dataloader)

    print("Running Validation...")
    model.eval()
    total_eval_accuracy = 0
    all_preds, all_labels = [], []
    for batch in validation_dataloader:
        b_input_ids = batch[0].to(device)
        b_input_mask = batch[1].to(device)
        b_labels = batch[2].to(device)
        result = model(b_input_ids, token_type_ids=None, attention_mask=b_input_mask)  # expect: OOM104
        logits = result.logits.detach().cpu().numpy()
        label_ids = b_labels.to("cpu").numpy()
        total_eval_accuracy += flat_accuracy(logits, label_ids)
        all_preds.append(np.argmax(logits, axis=1))
        all_labels.append(label_ids)

    avg_val_accuracy = total_eval_accuracy / len(validation_dataloader)
    mcc = matthews_corrcoef(np.concatenate(all_labels), np.concatenate(all_preds))
    print(f"  Accuracy: {avg_val_accuracy:.2f}  MCC: {mcc:.3f}")
    training_stats.append({"epoch": epoch_i + 1, "train_loss": avg_train_loss,
                           "val_acc": avg_val_accuracy, "mcc": mcc})

print("Training complete!")
model_to_save = model.module if hasattr(model, "module") else model
model_to_save.save_pretrained("./cola_bert/")
tokenizer.save_pretrained("./cola_bert/")
