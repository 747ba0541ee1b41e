"""Full fine-tuning of Qwen2.5-0.5B (weights kept in fp32) with Accelerate: bf16 mixed precision,
gradient accumulation through accelerator.accumulate, cosine schedule with warmup."""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForCausalLM, get_cosine_schedule_with_warmup

MODEL_ID = "Qwen/Qwen2.5-0.5B"
SEQ_LEN = 512
PER_DEVICE_BATCH = 4
GRAD_ACCUM = 4
MAX_UPDATES = 3
LR = 1e-5


class ChatSFT(Dataset):
    def __init__(self, n, vocab):
        self.n, self.vocab = n, vocab

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        ids = torch.randint(0, self.vocab, (SEQ_LEN,))
        labels = ids.clone()
        labels[:128] = -100
        return {"input_ids": ids, "attention_mask": torch.ones(SEQ_LEN, dtype=torch.long), "labels": labels}


def main():
    accelerator = Accelerator(mixed_precision="bf16", gradient_accumulation_steps=GRAD_ACCUM)
    model = AutoModelForCausalLM.from_pretrained(MODEL_ID, dtype=torch.float32)
    model.train()
    ds = ChatSFT(PER_DEVICE_BATCH * GRAD_ACCUM * MAX_UPDATES, model.config.vocab_size)
    loader = DataLoader(ds, batch_size=PER_DEVICE_BATCH, shuffle=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.0, betas=(0.9, 0.95))
    scheduler = get_cosine_schedule_with_warmup(optimizer, num_warmup_steps=1, num_training_steps=MAX_UPDATES)
    model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, loader, scheduler)

    for step, batch in enumerate(loader):
        with accelerator.accumulate(model):
            loss = model(**batch).loss
            accelerator.backward(loss)
            if accelerator.sync_gradients:
                accelerator.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
        if accelerator.sync_gradients:
            accelerator.print(f"micro-step {step}: loss {loss.item():.4f}")
    accelerator.wait_for_everyone()


if __name__ == "__main__":
    main()
