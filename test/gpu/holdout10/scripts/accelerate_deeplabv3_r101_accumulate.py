"""Aerial-image land-cover segmentation: torchvision DeepLabV3-ResNet101 under Accelerate
(fp16 mixed precision, gradient accumulation through accelerator.accumulate)."""
import torch
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader, Dataset
from torchvision.models.segmentation import deeplabv3_resnet101

cfg = {
    "data": {"crop": 384, "num_classes": 6, "n_train": 64},
    "train": {"batch_size": 8, "grad_accum": 2, "lr": 0.01, "momentum": 0.9, "wd": 1e-4, "max_updates": 4},
    "model": {"aux_loss": True, "aux_weight": 0.4},
}


class Tiles(Dataset):
    def __init__(self, n, crop, num_classes):
        self.n, self.crop, self.k = n, crop, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img = torch.rand(3, self.crop, self.crop)
        mask = torch.randint(0, self.k, (self.crop, self.crop))
        mask[:8] = 255  # unlabeled border
        return img, mask


def main():
    tc = cfg["train"]
    accelerator = Accelerator(mixed_precision="fp16", gradient_accumulation_steps=tc["grad_accum"])
    model = deeplabv3_resnet101(weights=None, weights_backbone=None,
                                num_classes=cfg["data"]["num_classes"], aux_loss=cfg["model"]["aux_loss"])
    optimizer = torch.optim.SGD(model.parameters(), lr=tc["lr"], momentum=tc["momentum"], weight_decay=tc["wd"])
    total = tc["max_updates"]
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: (1 - s / total) ** 0.9)
    loader = DataLoader(Tiles(cfg["data"]["n_train"], cfg["data"]["crop"], cfg["data"]["num_classes"]),
                        batch_size=tc["batch_size"], shuffle=True, num_workers=2, drop_last=True)
    model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, loader, scheduler)

    model.train()
    updates = 0
    for images, masks in loader:
        with accelerator.accumulate(model):
            out = model(images)
            loss = F.cross_entropy(out["out"], masks, ignore_index=255)
            loss = loss + cfg["model"]["aux_weight"] * F.cross_entropy(out["aux"], masks, ignore_index=255)
            accelerator.backward(loss)
            if accelerator.sync_gradients:
                accelerator.clip_grad_norm_(model.parameters(), 10.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
        if accelerator.sync_gradients:
            updates += 1
            accelerator.print(f"update {updates} loss {loss.item():.4f}")
            if updates >= total:
                break
    accelerator.print("peak GiB", torch.cuda.max_memory_allocated() / 2**30)


if __name__ == "__main__":
    main()
