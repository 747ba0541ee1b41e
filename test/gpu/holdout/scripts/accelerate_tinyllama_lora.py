"""
LoRA instruction-tuning of TinyLlama-1.1B-Chat with Accelerate.

    accelerate launch accelerate_tinyllama_lora.py
"""
import math

import torch
from accelerate import Accelerator
from peft import LoraConfig, TaskType, get_peft_model
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForCausalLM, get_cosine_schedule_with_warmup

MODEL_ID = "TinyLlama/TinyLlama-1.1B-Chat-v1.0"
MAX_SEQ_LEN = 1024
PER_DEVICE_BATCH = 4
GRAD_ACCUM = 2
NUM_UPDATES = 3
LR = 2e-4


class ChatSFTDataset(Dataset):
    """Tokenized chat turns; prompt tokens are masked out of the loss with -100."""

    def __init__(self, n, seq_len, vocab_size=32000, prompt_len=256):
        self.ids = torch.randint(3, vocab_size, (n, seq_len))
        self.prompt_len = prompt_len

    def __len__(self):
        return self.ids.size(0)

    def __getitem__(self, i):
        ids = self.ids[i]
        labels = ids.clone()
        labels[: self.prompt_len] = -100
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": labels}


def main():
    accelerator = Accelerator(mixed_precision="bf16", gradient_accumulation_steps=GRAD_ACCUM)

    model = AutoModelForCausalLM.from_pretrained(MODEL_ID, dtype=torch.bfloat16)
    model.config.use_cache = False
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.enable_input_require_grads()

    lora_config = LoraConfig(
        task_type=TaskType.CAUSAL_LM,
        r=16,
        lora_alpha=32,
        lora_dropout=0.05,
        target_modules=["q_proj", "k_proj", "v_proj", "o_proj"],
    )
    model = get_peft_model(model, lora_config)
    model.print_trainable_parameters()

    train_ds = ChatSFTDataset(PER_DEVICE_BATCH * GRAD_ACCUM * NUM_UPDATES, MAX_SEQ_LEN)
    train_dl = DataLoader(train_ds, batch_size=PER_DEVICE_BATCH, shuffle=True)

    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=LR, weight_decay=0.0)
    num_training_steps = math.ceil(len(train_dl) / GRAD_ACCUM)
    lr_scheduler = get_cosine_schedule_with_warmup(optimizer, num_warmup_steps=1,
                                                   num_training_steps=num_training_steps)

    model, optimizer, train_dl, lr_scheduler = accelerator.prepare(model, optimizer, train_dl, lr_scheduler)

    model.train()
    completed = 0
    for step, batch in enumerate(train_dl):
        with accelerator.accumulate(model):
            outputs = model(**batch)
            loss = outputs.loss
            accelerator.backward(loss)
            if accelerator.sync_gradients:
                accelerator.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
        if accelerator.sync_gradients:
            completed += 1
            accelerator.print(f"update {completed} loss {loss.item():.4f}")

    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
