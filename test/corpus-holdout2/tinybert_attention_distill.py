"""TinyBERT-style task distillation: attention-map + prediction-layer distillation.

Teacher: fine-tuned BERT-base (12 layers).  Student: 4-layer, 312-wide BERT.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import (
    BertConfig,
    BertForSequenceClassification,
    BertTokenizerFast,
    DataCollatorWithPadding,
)

parser = argparse.ArgumentParser()
parser.add_argument("--teacher", default="checkpoints/bert-base-uncased-mnli")
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--batch_size", type=int, default=32)
parser.add_argument("--lr", type=float, default=5e-5)
parser.add_argument("--temperature", type=float, default=1.0)
args = parser.parse_args()
device = torch.device("cuda")

tokenizer = BertTokenizerFast.from_pretrained("bert-base-uncased")
teacher = BertForSequenceClassification.from_pretrained(args.teacher, output_attentions=True)  # expect: OOM115
teacher.requires_grad_(False)
teacher.to(device).eval()

student_config = BertConfig(
    vocab_size=30522,
    hidden_size=312,
    num_hidden_layers=4,
    num_attention_heads=12,
    intermediate_size=1200,
    num_labels=3,
    output_attentions=True,  # expect: OOM115
)
student = BertForSequenceClassification(student_config).to(device)
fit_dense = nn.Linear(312, 768).to(device)
optimizer = torch.optim.AdamW(list(student.parameters()) + list(fit_dense.parameters()), lr=args.lr)

raw = load_dataset("nyu-mll/glue", "mnli", split="train")
enc = raw.map(lambda ex: tokenizer(ex["premise"], ex["hypothesis"], truncation=True, max_length=128), batched=True)
enc = enc.remove_columns(["premise", "hypothesis", "idx"]).rename_column("label", "labels")
loader = DataLoader(enc, batch_size=args.batch_size, shuffle=True, collate_fn=DataCollatorWithPadding(tokenizer))

layer_map = [2, 5, 8, 11]  # student layer i <- teacher layer layer_map[i]
T = args.temperature
for epoch in range(args.epochs):
    student.train()
    for step, batch in enumerate(loader):
        batch = {k: v.to(device) for k, v in batch.items()}
        inputs = {k: batch[k] for k in ("input_ids", "attention_mask", "token_type_ids")}
        with torch.no_grad():
            t_out = teacher(**inputs)
        s_out = student(**inputs)

        att_loss = sum(
            F.mse_loss(
                torch.where(s_att <= -1e2, torch.zeros_like(s_att), s_att),
                torch.where(t_out.attentions[t_idx] <= -1e2, torch.zeros_like(s_att), t_out.attentions[t_idx]),
            )
            for s_att, t_idx in zip(s_out.attentions, layer_map)
        )
        pred_loss = F.kl_div(F.log_softmax(s_out.logits / T, -1), F.softmax(t_out.logits / T, -1), reduction="batchmean")
        loss = att_loss + pred_loss

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 200 == 0:
            print(f"epoch {epoch} step {step}: att {att_loss.item():.4f} pred {pred_loss.item():.4f}")

student.save_pretrained("tinybert-mnli")
