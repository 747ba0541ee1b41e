"""Ticket routing: Qwen2.5-0.5B as a sequence classifier, LoRA adapters through peft.

The decoder is loaded in bf16, adapters on every projection, HF gradient checkpointing on, bf16 autocast.
"""
import time

import torch
import torch.nn.functional as F
from peft import LoraConfig, TaskType, get_peft_model
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForSequenceClassification, get_cosine_schedule_with_warmup

CFG = dict(
    model_name="Qwen/Qwen2.5-0.5B",
    num_labels=4,
    batch_size=16,
    max_len=1024,
    lora_r=16,
    lora_alpha=32,
    lora_dropout=0.05,
    lr=2e-4,
    epochs=1,
    steps_per_epoch=8,
    pad_token_id=151643,
)


class Tickets(Dataset):
    def __init__(self, n, max_len, num_labels, pad_id):
        self.ids = torch.randint(0, 150000, (n, max_len))
        self.mask = torch.ones(n, max_len, dtype=torch.long)
        # left part is text, right part is padding (tokenizer pads on the right)
        for i in range(n):
            L = int(torch.randint(max_len // 2, max_len + 1, ()))
            self.ids[i, L:] = pad_id
            self.mask[i, L:] = 0
        self.labels = torch.randint(0, num_labels, (n,))

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.ids[i], self.mask[i], self.labels[i]


def main():
    device = "cuda"
    model = AutoModelForSequenceClassification.from_pretrained(
        CFG["model_name"], num_labels=CFG["num_labels"], dtype=torch.bfloat16)
    model.config.pad_token_id = CFG["pad_token_id"]
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})

    lora_cfg = LoraConfig(
        task_type=TaskType.SEQ_CLS,
        r=CFG["lora_r"],
        lora_alpha=CFG["lora_alpha"],
        lora_dropout=CFG["lora_dropout"],
        target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    )
    model = get_peft_model(model, lora_cfg)
    model.print_trainable_parameters()
    model.to(device)

    ds = Tickets(CFG["batch_size"] * CFG["steps_per_epoch"], CFG["max_len"], CFG["num_labels"], CFG["pad_token_id"])
    loader = DataLoader(ds, batch_size=CFG["batch_size"], shuffle=True)

    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=CFG["lr"], weight_decay=0.0)
    total = CFG["epochs"] * len(loader)
    scheduler = get_cosine_schedule_with_warmup(optimizer, 1, total)

    model.train()
    t0 = time.time()
    for epoch in range(CFG["epochs"]):
        for step, (ids, mask, labels) in enumerate(loader):
            ids, mask, labels = ids.to(device), mask.to(device), labels.to(device)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(input_ids=ids, attention_mask=mask).logits
            loss = F.cross_entropy(logits.float(), labels)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
    print(f"{time.time() - t0:.1f}s  peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
