import os
import time

import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader, Dataset

# knobs come from the job scheduler's environment
BS = int(os.environ.get("BS", "24"))
IMG_SIZE = int(os.getenv("IMG_SIZE", "300"))
EPOCHS = int(os.environ.get("EPOCHS", "1"))
LR = float(os.environ.get("LR", "1e-3"))
NUM_CLASSES = 196  # Stanford Cars
STEPS_PER_EPOCH = int(os.environ.get("STEPS", "5"))


class CarsDataset(Dataset):
    def __init__(self, n, size):
        self.n = n
        self.size = size

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = torch.rand(3, self.size, self.size)
        x = (x - 0.5) / 0.25  # "normalize"
        return x, i % NUM_CLASSES


def run():
    dev = torch.device("cuda:0")
    net = torchvision.models.efficientnet_b3(weights=None, num_classes=NUM_CLASSES)
    net = net.cuda()
    opt = torch.optim.Adam(net.parameters(), lr=LR, weight_decay=1e-5)
    crit = nn.CrossEntropyLoss(label_smoothing=0.1)
    dl = DataLoader(CarsDataset(BS * STEPS_PER_EPOCH, IMG_SIZE), batch_size=BS, shuffle=True, drop_last=True)

    for ep in range(EPOCHS):
        net.train()
        t = time.time()
        for step, (x, y) in enumerate(dl):
            x, y = x.to(dev), y.to(dev)
            out = net(x)
            loss = crit(out, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % 2 == 0:
                print(f"ep{ep} step{step} loss={loss.item():.3f}")
        print(f"epoch {ep} took {time.time() - t:.1f}s, max mem {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    run()
