"""Train ConvNeXt-Tiny for a few steps, then run a retrieval evaluation.

LEAK (on purpose, as found in the wild): evaluate() runs the model WITHOUT torch.no_grad() and appends every
batch's pooled embeddings (still attached to the autograd graph) to a list on the GPU, so each of the 6 eval
batches of 32 images keeps its whole forward graph alive until the similarity matrix is computed.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from torchvision.models import convnext_tiny

TRAIN_BS = 64
EVAL_BS = 32
EVAL_BATCHES = 6
NUM_CLASSES = 500
STEPS = 3


def make_loader(n, bs, shuffle):
    ds = TensorDataset(torch.randn(n, 3, 224, 224), torch.randint(0, NUM_CLASSES, (n,)))
    return DataLoader(ds, batch_size=bs, shuffle=shuffle)


def train(model, opt, loader):
    model.train()
    for i, (x, y) in enumerate(loader):
        x, y = x.cuda(), y.cuda()
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("train", i, round(loss.item(), 4))


def embed(model, x):
    feats = model.features(x)
    return model.classifier[:2](model.avgpool(feats))   # LayerNorm2d + Flatten -> (B, 768)


def evaluate(model, loader):
    model.eval()
    all_emb, all_lab = [], []
    for x, y in loader:
        e = embed(model, x.cuda())
        all_emb.append(F.normalize(e, dim=-1))   # graph kept: no no_grad, no detach
        all_lab.append(y.cuda())
        print("eval batch, allocated GiB:", round(torch.cuda.memory_allocated() / 2**30, 2))
    emb = torch.cat(all_emb)
    lab = torch.cat(all_lab)
    sim = emb @ emb.t()
    sim.fill_diagonal_(-1)
    top1 = lab[sim.argmax(1)]
    return (top1 == lab).float().mean().item()


model = convnext_tiny(weights=None, num_classes=NUM_CLASSES).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=4e-3, weight_decay=0.05)
train(model, opt, make_loader(TRAIN_BS * STEPS, TRAIN_BS, True))
acc = evaluate(model, make_loader(EVAL_BS * EVAL_BATCHES, EVAL_BS, False))
print("recall@1", acc)
