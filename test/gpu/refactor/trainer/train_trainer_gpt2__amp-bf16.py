"""GPT-2 small fine-tuned with the Hugging Face Trainer (random init from GPT2Config, no downloads): the script the
Trainer refactorings edit (TrainingArguments). Prints RESULT {json} with the peak memory, the optimizer steps the
Trainer made, its last learning rate and the losses it logged."""
import json

import torch
from torch.utils.data import Dataset
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

BATCH_SIZE = 16
SEQ_LEN = 512


class Tokens(Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, 1000, (n, SEQ_LEN), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config(use_cache=False))
args = TrainingArguments(
    output_dir="/tmp/oomguard-trainer-gpt2",
    per_device_train_batch_size=BATCH_SIZE,
    learning_rate=3e-4,
    lr_scheduler_type="linear",
    max_steps=8,
    logging_steps=2,
    save_strategy="no",
    report_to="none",
    seed=0,
    bf16=True,
)
trainer = Trainer(model=model, args=args, train_dataset=Tokens(BATCH_SIZE * 8))
torch.cuda.reset_peak_memory_stats()
trainer.train()
logged = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
print("RESULT " + json.dumps({
    "peak_alloc_bytes": torch.cuda.max_memory_allocated(),
    "optimizer_steps": trainer.state.global_step,
    "last_lr": trainer.lr_scheduler.get_last_lr()[0],
    "logged_losses": logged,
}))
