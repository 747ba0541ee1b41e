"""Fine-grained classification (e.g. 200 bird species) -- pick a backbone from the zoo below."""
from functools import partial
import time

import timm
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

NUM_CLASSES = 200

MODEL_ZOO = {
    "r26d": lambda nc: timm.create_model("resnet26d", num_classes=nc),
    "seresnext50": partial(timm.create_model, "seresnext50_32x4d", drop_path_rate=0.1),
    "effb3": lambda nc: timm.create_model("efficientnet_b3", num_classes=nc, drop_rate=0.3),
}
ARCH = "seresnext50"

TRAIN = dict(img_size=256, batch_size=64, epochs=1, iters_per_epoch=6, lr=0.1, momentum=0.9, wd=5e-5, warmup=3)


class Birds(Dataset):
    def __init__(self, n, img_size):
        self.n, self.img_size = n, img_size

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.img_size, self.img_size), i % NUM_CLASSES


def build(arch):
    factory = MODEL_ZOO[arch]
    if isinstance(factory, partial):
        return factory(num_classes=NUM_CLASSES)
    return factory(NUM_CLASSES)


def main():
    model = build(ARCH).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=TRAIN["lr"], momentum=TRAIN["momentum"],
                          weight_decay=TRAIN["wd"], nesterov=True)
    total = TRAIN["epochs"] * TRAIN["iters_per_epoch"]
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=TRAIN["lr"], total_steps=total,
                                                pct_start=TRAIN["warmup"] / total)
    dl = DataLoader(Birds(TRAIN["batch_size"] * TRAIN["iters_per_epoch"], TRAIN["img_size"]),
                    batch_size=TRAIN["batch_size"], shuffle=True, num_workers=4, pin_memory=True, drop_last=True)
    crit = nn.CrossEntropyLoss(label_smoothing=0.1)
    for epoch in range(TRAIN["epochs"]):
        model.train()
        tic = time.time()
        for i, (x, y) in enumerate(dl):
            x = x.cuda(non_blocking=True).to(memory_format=torch.channels_last)
            y = y.cuda(non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = crit(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            print(f"ep{epoch} it{i} loss {loss.item():.3f} {time.time() - tic:.1f}s")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
