"""Oxford-IIIT Pets (37 classes) with a timm ViT-B/16, trained through Accelerate.

    accelerate launch accelerate_vit_accumulate.py      (or plain python on one GPU)

bf16 mixed precision and gradient accumulation are Accelerate's: the loop only wraps each micro-batch in
accelerator.accumulate(model).
"""
import argparse

import timm
import torch
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.utils import set_seed
from torch.utils.data import DataLoader, Dataset


class PetsStub(Dataset):
    def __init__(self, n, image_size=224, num_classes=37):
        self.n, self.image_size, self.num_classes = n, image_size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"pixel_values": torch.randn(3, self.image_size, self.image_size),
                "labels": torch.randint(0, self.num_classes, ()).item()}


def training_function(args):
    accelerator = Accelerator(mixed_precision=args.mixed_precision,
                              gradient_accumulation_steps=args.gradient_accumulation_steps)
    set_seed(args.seed)

    model = timm.create_model(args.model_name, pretrained=False, num_classes=37, drop_path_rate=0.1)
    train_ds = PetsStub(args.train_batch_size * args.gradient_accumulation_steps * args.max_train_steps)
    train_dl = DataLoader(train_ds, batch_size=args.train_batch_size, shuffle=True, num_workers=4,
                          drop_last=True)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=0.05)
    lr_scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.max_train_steps)

    model, optimizer, train_dl, lr_scheduler = accelerator.prepare(model, optimizer, train_dl, lr_scheduler)

    completed_steps = 0
    model.train()
    for epoch in range(args.num_epochs):
        for step, batch in enumerate(train_dl):
            with accelerator.accumulate(model):
                outputs = model(batch["pixel_values"])
                loss = F.cross_entropy(outputs, batch["labels"], label_smoothing=0.1)
                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                completed_steps += 1
                accelerator.print(f"epoch {epoch} update {completed_steps} loss {loss.item():.4f}")
            if completed_steps >= args.max_train_steps:
                break
        if completed_steps >= args.max_train_steps:
            break

    accelerator.wait_for_everyone()
    accelerator.print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


def main():
    parser = argparse.ArgumentParser(description="ViT on pets with Accelerate")
    parser.add_argument("--model_name", type=str, default="vit_base_patch16_224")
    parser.add_argument("--mixed_precision", type=str, default="bf16", choices=["no", "fp16", "bf16"])
    parser.add_argument("--train_batch_size", type=int, default=64)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=4)
    parser.add_argument("--learning_rate", type=float, default=3e-4)
    parser.add_argument("--num_epochs", type=int, default=1)
    parser.add_argument("--max_train_steps", type=int, default=3)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    training_function(args)


if __name__ == "__main__":
    main()
