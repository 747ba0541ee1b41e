"""Image classification with 🤗 Accelerate.

Run with:  accelerate launch --multi_gpu --num_processes 4 accelerate_image_classifier.py
(do not use torchrun / LOCAL_RANK / init_process_group directly here: Accelerate does that.)
"""
import argparse
import os

import torch
import torch.nn.functional as F
import timm
from accelerate import Accelerator
from accelerate.utils import set_seed
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

# import torch.distributed as dist
# dist.init_process_group("nccl")   <- old version of this script


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_dir", default="data/imagenette2-320")
    parser.add_argument("--model", default="resnet50d")
    parser.add_argument("--init_weights", default="")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--grad_accum", type=int, default=2)
    args = parser.parse_args()

    accelerator = Accelerator(gradient_accumulation_steps=args.grad_accum, mixed_precision="bf16")
    set_seed(42)

    tf_train = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor()])
    tf_eval = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor()])
    train_ds = datasets.ImageFolder(os.path.join(args.data_dir, "train"), tf_train)
    eval_ds = datasets.ImageFolder(os.path.join(args.data_dir, "val"), tf_eval)
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, num_workers=8, pin_memory=True)
    eval_dl = DataLoader(eval_ds, batch_size=args.batch_size * 2, num_workers=8)

    model = timm.create_model(args.model, pretrained=False, num_classes=len(train_ds.classes))
    if args.init_weights:
        state = torch.load(args.init_weights)
        missing, unexpected = model.load_state_dict(state, strict=False)
        accelerator.print("missing:", missing, "unexpected:", unexpected)

    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-3, total_steps=args.epochs * len(train_dl))
    model, optimizer, train_dl, eval_dl, scheduler = accelerator.prepare(model, optimizer, train_dl, eval_dl, scheduler)

    for epoch in range(args.epochs):
        model.train()
        for step, (images, labels) in enumerate(train_dl):
            with accelerator.accumulate(model):
                logits = model(images)
                loss = F.cross_entropy(logits, labels)
                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()

        model.eval()
        correct = total = 0
        for images, labels in eval_dl:
            with torch.no_grad():
                logits = model(images)
            preds = logits.argmax(dim=-1)
            preds, labels = accelerator.gather_for_metrics((preds, labels))
            correct += (preds == labels).sum().item()
            total += labels.numel()
        accelerator.print(f"epoch {epoch}: acc {correct / total:.4f}")

    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        torch.save(accelerator.unwrap_model(model).state_dict(), "classifier.pt")


if __name__ == "__main__":
    main()
