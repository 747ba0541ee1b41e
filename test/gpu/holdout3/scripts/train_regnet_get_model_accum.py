import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader, Dataset


def parse_config():
    return {
        "model": {"name": "regnet_y_3_2gf", "num_classes": 1000},
        "data": {"train_crop_size": 176, "val_resize": 232},   # torchvision's 'new recipe' low-res training
        "train": {"batch_size": 96, "accum_steps": 4, "lr": 2e-3, "max_updates": 3, "label_smoothing": 0.1},
    }


class ImageNetLike(Dataset):
    def __init__(self, length, crop, num_classes):
        self.length, self.crop, self.num_classes = length, crop, num_classes

    def __len__(self):
        return self.length

    def __getitem__(self, index):
        return torch.randn(3, self.crop, self.crop), torch.randint(self.num_classes, ()).item()


def main():
    cfg = parse_config()
    mcfg, dcfg, tcfg = cfg["model"], cfg["data"], cfg["train"]
    device = "cuda:0"
    model = torchvision.models.get_model(mcfg["name"], weights=None, num_classes=mcfg["num_classes"]).to(device)
    criterion = nn.CrossEntropyLoss(label_smoothing=tcfg["label_smoothing"])
    optimizer = torch.optim.Adam(model.parameters(), lr=tcfg["lr"])
    scaler = torch.amp.GradScaler(init_scale=1024.0)
    accum = tcfg["accum_steps"]

    ds = ImageNetLike(tcfg["batch_size"] * accum * tcfg["max_updates"], dcfg["train_crop_size"],
                      mcfg["num_classes"])
    loader = DataLoader(ds, batch_size=tcfg["batch_size"], shuffle=True, num_workers=4, drop_last=True)

    model.train()
    optimizer.zero_grad(set_to_none=False)
    updates = 0
    running = 0.0
    for i, (images, target) in enumerate(loader, start=1):
        images, target = images.to(device), target.to(device)
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            output = model(images)
            loss = criterion(output, target)
        scaler.scale(loss / accum).backward()
        running += loss.item()
        if i % accum != 0:
            continue
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=False)
        updates += 1
        print(f"update {updates}: loss {running / accum:.4f}, scale {scaler.get_scale()}")
        running = 0.0
        if updates == tcfg["max_updates"]:
            break

    print(f"max_memory_allocated {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
