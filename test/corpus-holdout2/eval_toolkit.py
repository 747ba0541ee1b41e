"""Evaluation helpers shared by our image-classification experiments.

Every helper here runs without autograd except the saliency one, which needs input gradients.
"""
import argparse

import numpy as np
import torch
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader
from torchvision import transforms

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    correct = total = 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        correct += (model(x).argmax(1) == y).sum().item()
        total += y.numel()
    return correct / total


@torch.inference_mode()
def predict(model, loader):
    model.eval()
    out = []
    for x, _ in loader:
        out.append(model(x.to(device)).softmax(-1))
    return torch.cat(out).cpu()


def test(model, loader):
    torch.set_grad_enabled(False)
    model.eval()
    losses = []
    for x, y in loader:
        logits = model(x.to(device))
        losses.append(F.cross_entropy(logits, y.to(device), reduction="none"))
    torch.set_grad_enabled(True)
    return torch.cat(losses).mean().item()


def validate(model, loader):
    model.eval()
    top5 = 0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            with torch.autocast(device_type="cuda", dtype=torch.float16):
                logits = model(x)
            top5 += (logits.topk(5, dim=1).indices == y[:, None]).any(1).sum().item()
    return top5 / len(loader.dataset)


@torch.no_grad()
def infer_batch(model, x):
    return model(x).softmax(-1)


def run_inference(model, loader):
    model.eval()
    probs_all = []
    for x, _ in loader:
        probs = infer_batch(model, x.to(device))
        probs_all.append(probs.cpu())
    return torch.cat(probs_all)


def evaluate_saliency(model, loader, max_batches=4):
    """Vanilla gradient saliency maps (Simonyan et al.). Needs autograd w.r.t. the input only."""
    model.eval()
    maps = []
    for i, (x, y) in enumerate(loader):
        if i == max_batches:
            break
        x = x.to(device).requires_grad_(True)
        score = model(x).gather(1, y.to(device).view(-1, 1)).sum()
        score.backward()
        maps.append(x.grad.abs().amax(dim=1).cpu().numpy())
    return np.concatenate(maps)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default="resnet18_cifar10.pt")
    args = ap.parse_args()

    model = torchvision.models.resnet18(num_classes=10)
    model.load_state_dict(torch.load(args.ckpt, map_location="cpu"))
    model.to(device)
    # only input gradients are needed for the saliency maps
    model.requires_grad_(False)

    ds = torchvision.datasets.CIFAR10("data", train=False, download=True, transform=transforms.ToTensor())
    loader = DataLoader(ds, batch_size=256, num_workers=4)
    print("acc", evaluate(model, loader))
    print("top5", validate(model, loader))
    print("nll", test(model, loader))
    print("probs", predict(model, loader).shape, run_inference(model, loader).shape)
    np.save("saliency.npy", evaluate_saliency(model, loader))
