"""Train a transformers Swin classifier (built from SwinConfig, size picked from an Enum) with Accelerate:
fp16 mixed precision and gradient accumulation through accelerator.accumulate()."""
import enum

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, Dataset
from transformers import SwinConfig, SwinForImageClassification


class SwinSize(enum.Enum):
    TINY = (96, (2, 2, 6, 2), (3, 6, 12, 24))
    SMALL = (96, (2, 2, 18, 2), (3, 6, 12, 24))
    BASE = (128, (2, 2, 18, 2), (4, 8, 16, 32))

    @property
    def embed_dim(self):
        return self.value[0]

    @property
    def depths(self):
        return list(self.value[1])

    @property
    def heads(self):
        return list(self.value[2])


SIZE = SwinSize.SMALL
IMAGE_SIZE = 224
NUM_LABELS = 365
BATCH_SIZE = 64
GRAD_ACCUM = 2
TOTAL_STEPS = 4     # optimizer steps


class Places(Dataset):
    def __len__(self):
        return BATCH_SIZE * GRAD_ACCUM * TOTAL_STEPS

    def __getitem__(self, i):
        return {"pixel_values": torch.randn(3, IMAGE_SIZE, IMAGE_SIZE), "labels": i % NUM_LABELS}


def main():
    accelerator = Accelerator(mixed_precision="fp16", gradient_accumulation_steps=GRAD_ACCUM)
    config = SwinConfig(image_size=IMAGE_SIZE, patch_size=4, embed_dim=SIZE.embed_dim, depths=SIZE.depths,
                        num_heads=SIZE.heads, window_size=7, drop_path_rate=0.3, num_labels=NUM_LABELS)
    model = SwinForImageClassification(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    loader = DataLoader(Places(), batch_size=BATCH_SIZE, shuffle=True, num_workers=4)
    scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.1, total_iters=TOTAL_STEPS)
    model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, loader, scheduler)

    model.train()
    for step, batch in enumerate(loader):
        with accelerator.accumulate(model):
            out = model(**batch)
            accelerator.backward(out.loss)
            if accelerator.sync_gradients:
                accelerator.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
        if accelerator.sync_gradients:
            accelerator.print(f"micro-step {step}: loss {out.loss.item():.4f}")
    accelerator.print("peak %.2f GiB" % (torch.cuda.max_memory_allocated() / 2 ** 30))


if __name__ == "__main__":
    main()
