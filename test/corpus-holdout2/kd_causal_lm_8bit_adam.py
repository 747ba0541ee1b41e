"""Token-level KD from a 7B teacher into a 1B student, with 8-bit AdamW and gradient accumulation."""
import argparse

import bitsandbytes as bnb
import torch
import torch.nn.functional as F
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling

ap = argparse.ArgumentParser()
ap.add_argument("--teacher", default="Qwen/Qwen2.5-7B")
ap.add_argument("--student", default="Qwen/Qwen2.5-1.5B")
ap.add_argument("--lr", type=float, default=1e-5)
ap.add_argument("--grad_accum", type=int, default=8)
ap.add_argument("--temperature", type=float, default=2.0)
ap.add_argument("--alpha", type=float, default=0.5)
ap.add_argument("--epochs", type=int, default=1)
args = ap.parse_args()
device = torch.device("cuda")

tok = AutoTokenizer.from_pretrained(args.student)
tok.pad_token = tok.eos_token
student = AutoModelForCausalLM.from_pretrained(args.student, torch_dtype=torch.bfloat16).to(device)
teacher = AutoModelForCausalLM.from_pretrained(args.teacher, torch_dtype=torch.bfloat16).to(device)
student.gradient_checkpointing_enable()
optimizer = bnb.optim.AdamW8bit(student.parameters(), lr=args.lr, weight_decay=0.0)

ds = load_dataset("HuggingFaceFW/fineweb-edu", name="sample-10BT", split="train", streaming=True).take(200_000)
ds = ds.map(lambda ex: tok(ex["text"], truncation=True, max_length=1024), remove_columns=["text", "id", "dump", "url",
                                                                                         "file_path", "language",
                                                                                         "language_score", "token_count",
                                                                                         "score", "int_score"])
loader = DataLoader(ds, batch_size=2, collate_fn=DataCollatorForLanguageModeling(tok, mlm=False))


def teacher_probs(batch, temperature):
    logits = teacher(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    return F.softmax(logits.float() / temperature, dim=-1)


T = args.temperature
for epoch in range(args.epochs):
    student.train()
    for step, batch in enumerate(loader):
        batch = {k: v.to(device) for k, v in batch.items()}
        out = student(**batch)
        t_probs = teacher_probs(batch, T)
        kd = F.kl_div(F.log_softmax(out.logits.float() / T, dim=-1), t_probs, reduction="batchmean") * T * T
        loss = (args.alpha * kd + (1 - args.alpha) * out.loss) / args.grad_accum
        loss.backward()
        if (step + 1) % args.grad_accum == 0:
            torch.nn.utils.clip_grad_norm_(student.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
        if step % 100 == 0:
            print(f"step {step}: kd {kd.item():.4f} ce {out.loss.item():.4f}")

student.save_pretrained("student-kd")
