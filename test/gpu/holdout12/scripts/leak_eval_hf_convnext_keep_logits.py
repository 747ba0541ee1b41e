"""Train a transformers ConvNeXt (ConvNextConfig, convnext-tiny sizes) for a few steps, then evaluate.

DELIBERATE LEAK: evaluate() runs without torch.no_grad() and keeps every batch's `outputs.logits` on the GPU
in a list (to compute metrics at the end). Each kept logits tensor holds its whole forward graph (all the saved
activations of that batch), so memory grows with the number of evaluation batches.
"""
import argparse

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from transformers import ConvNextConfig, ConvNextForImageClassification

parser = argparse.ArgumentParser()
parser.add_argument("--image-size", type=int, default=224, dest="image_size")
parser.add_argument("--train-bs", type=int, default=64, dest="train_bs")
parser.add_argument("--eval-bs", type=int, default=32, dest="eval_bs")
parser.add_argument("--train-steps", type=int, default=4, dest="train_steps")
parser.add_argument("--eval-batches", type=int, default=4, dest="eval_batches")
parser.add_argument("--num-labels", type=int, default=257, dest="num_labels")
parser.add_argument("--lr", type=float, default=5e-4)
args = parser.parse_args()


class Caltech(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, args.image_size, args.image_size), i % args.num_labels


config = ConvNextConfig(num_channels=3, patch_size=4, hidden_sizes=[96, 192, 384, 768], depths=[3, 3, 9, 3],
                        drop_path_rate=0.1, image_size=args.image_size, num_labels=args.num_labels)
model = ConvNextForImageClassification(config).to("cuda")
optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)


def train():
    model.train()
    loader = DataLoader(Caltech(args.train_bs * args.train_steps), batch_size=args.train_bs, shuffle=True)
    for step, (x, y) in enumerate(loader):
        out = model(pixel_values=x.cuda(), labels=y.cuda())
        optimizer.zero_grad()
        out.loss.backward()
        optimizer.step()
        print(f"train step {step}: loss {out.loss.item():.4f}")


def evaluate():
    model.eval()
    all_logits, all_labels = [], []
    loader = DataLoader(Caltech(args.eval_bs * args.eval_batches), batch_size=args.eval_bs)
    for i, (x, y) in enumerate(loader):
        outputs = model(pixel_values=x.cuda())
        all_logits.append(outputs.logits)          # keeps the graph alive
        all_labels.append(y.cuda())
        print(f"eval batch {i}: allocated {torch.cuda.memory_allocated() / 2**30:.2f} GiB")
    logits = torch.cat(all_logits)
    labels = torch.cat(all_labels)
    acc = (logits.argmax(-1) == labels).float().mean().item()
    loss = F.cross_entropy(logits, labels).item()
    return acc, loss


train()
acc, loss = evaluate()
print(f"val acc {acc:.4f} loss {loss:.4f}")
print("peak GiB", torch.cuda.max_memory_allocated() / 2 ** 30)
