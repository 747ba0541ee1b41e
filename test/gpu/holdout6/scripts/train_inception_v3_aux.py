"""Inception v3 from scratch, 299 px, with the auxiliary classifier's loss at weight 0.4."""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from torchvision.models import inception_v3


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--num-classes", type=int, default=200)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--img-size", type=int, default=299)
    p.add_argument("--aux-weight", type=float, default=0.4)
    p.add_argument("--max-steps", type=int, default=6)
    return p.parse_args()


class FakeFolder(Dataset):
    def __init__(self, n, size, classes):
        self.n, self.size, self.classes = n, size, classes

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        return torch.randn(3, self.size, self.size), idx % self.classes


def main():
    args = parse_args()
    device = "cuda"
    model = inception_v3(weights=None, aux_logits=True, init_weights=True, num_classes=args.num_classes)
    model = model.to(device)
    loader = DataLoader(FakeFolder(2048, args.img_size, args.num_classes), batch_size=args.batch_size,
                        shuffle=True, num_workers=2, drop_last=True)
    # the paper's RMSprop settings
    optimizer = torch.optim.RMSprop(model.parameters(), lr=0.045, alpha=0.9, eps=1.0, momentum=0.9, weight_decay=4e-5)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)

    model.train()
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(x)  # InceptionOutputs(logits, aux_logits) in train mode
            loss = criterion(out.logits, y) + args.aux_weight * criterion(out.aux_logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.3f}")
        if step + 1 == args.max_steps:
            break

    model.eval()
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        x, _ = next(iter(loader))
        pred = model(x.to(device)).argmax(1)
    print("eval ok", pred.shape)


if __name__ == "__main__":
    main()
