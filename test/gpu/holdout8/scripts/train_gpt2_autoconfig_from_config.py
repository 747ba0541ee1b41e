"""Pre-train a shallower GPT-2 from scratch, starting from the gpt2 config with a few fields changed.

AutoConfig.from_pretrained("gpt2", n_layer=8, n_positions=2048) -> AutoModelForCausalLM.from_config: random
weights, fp32 with TF32 matmuls. Samples are prompt + response; prompt tokens are masked with -100.
"""
import time

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AutoConfig, AutoModelForCausalLM

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True

SEQ_LEN = 1024
PROMPT_LEN = 256
BATCH_SIZE = 8
TRAIN_STEPS = 6
LR = 3e-4


class PromptResponse(Dataset):
    def __init__(self, n, vocab_size):
        self.ids = torch.randint(0, vocab_size, (n, SEQ_LEN))

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        ids = self.ids[i]
        labels = ids.clone()
        labels[:PROMPT_LEN] = -100
        return ids, labels


def train_one_epoch(model, loader, optimizer, scheduler, device, max_steps):
    model.train()
    for step, (ids, labels) in enumerate(loader):
        ids, labels = ids.to(device), labels.to(device)
        loss = model(input_ids=ids, labels=labels).loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        print(f"step {step} loss {loss.item():.3f} lr {scheduler.get_last_lr()[0]:.2e}")
        if step + 1 == max_steps:
            return


def main():
    device = torch.device("cuda")
    config = AutoConfig.from_pretrained("gpt2", n_layer=8, n_positions=2048)
    config.resid_pdrop = config.embd_pdrop = config.attn_pdrop = 0.0
    model = AutoModelForCausalLM.from_config(config).to(device)
    print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters, "
          f"{config.n_layer} layers, {config.n_positions} positions")

    loader = DataLoader(PromptResponse(BATCH_SIZE * TRAIN_STEPS, config.vocab_size), batch_size=BATCH_SIZE,
                        shuffle=True, drop_last=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR, betas=(0.9, 0.95))
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 2))

    t0 = time.time()
    train_one_epoch(model, loader, optimizer, scheduler, device, TRAIN_STEPS)
    print(f"done in {time.time() - t0:.1f}s, peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
