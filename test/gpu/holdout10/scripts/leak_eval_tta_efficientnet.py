"""Dog-breed classifier (torchvision EfficientNet-B2) with test-time augmentation.

DELIBERATE LEAK (kept on purpose for the memory tests): `evaluate_tta` runs WITHOUT torch.no_grad() and
appends each batch's averaged probabilities (which still carry the autograd graphs of both the plain and the
flipped forward pass) to a list on the GPU. Every evaluation batch therefore keeps two full graphs alive until
the end of the evaluation, and memory grows per batch.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torchvision.models import efficientnet_b2

NUM_CLASSES = 120
IMG_SIZE = 224
TRAIN_BS = 64
EVAL_BS = 24
TRAIN_STEPS = 6
EVAL_BATCHES = 4


class Dogs(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, IMG_SIZE, IMG_SIZE), torch.randint(NUM_CLASSES, ()).item()


def train(model, loader, opt, device):
    model.train()
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"train step {step} loss {loss.item():.3f}")


def evaluate_tta(model, loader, device):
    model.eval()
    all_probs, all_labels = [], []
    for i, (x, y) in enumerate(loader):
        x = x.to(device)
        p = F.softmax(model(x), dim=1)
        p_flip = F.softmax(model(torch.flip(x, dims=[3])), dim=1)
        all_probs.append((p + p_flip) / 2)       # <- graph of both passes kept alive
        all_labels.append(y.to(device))
        print(f"eval batch {i}: allocated {torch.cuda.memory_allocated() / 2**30:.2f} GiB")
    probs = torch.cat(all_probs)
    labels = torch.cat(all_labels)
    return (probs.argmax(1) == labels).float().mean().item()


def main():
    device = torch.device("cuda")
    model = efficientnet_b2(weights=None)
    model.classifier[1] = nn.Linear(model.classifier[1].in_features, NUM_CLASSES)
    model.to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    train(model, DataLoader(Dogs(TRAIN_BS * TRAIN_STEPS), batch_size=TRAIN_BS, shuffle=True, num_workers=2),
          opt, device)
    acc = evaluate_tta(model, DataLoader(Dogs(EVAL_BS * EVAL_BATCHES), batch_size=EVAL_BS, num_workers=2), device)
    print(f"TTA accuracy {acc:.3f}; peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
