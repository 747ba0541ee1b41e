"""Vanilla-gradient and SmoothGrad saliency maps for an ImageNet classifier.

infer_saliency() needs input gradients, so it backpropagates on purpose.
"""
import argparse
import os

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import torch
import torchvision
from PIL import Image
from torchvision import transforms

PREP = transforms.Compose([
    transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(),
    transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
])


def infer_saliency(model, images, n_samples=25, sigma=0.15):
    """SmoothGrad: average |d score / d input| over noisy copies of each image."""
    model.eval()
    maps = []
    for img in images:
        img = img.unsqueeze(0)
        acc = torch.zeros_like(img)
        for _ in range(n_samples):
            noisy = (img + sigma * torch.randn_like(img)).requires_grad_(True)
            scores = model(noisy)
            top = scores.argmax(dim=1).item()
            model.zero_grad()
            scores[0, top].backward()
            acc += noisy.grad.detach().abs()
        maps.append((acc / n_samples).amax(dim=1).squeeze(0).cpu())
    return maps


@torch.no_grad()
def predict_labels(model, images, categories):
    model.eval()
    probs = model(images).softmax(dim=1)
    top = probs.argmax(dim=1)
    return [(categories[i], probs[k, i].item()) for k, i in enumerate(top.tolist())]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("images", nargs="+")
    ap.add_argument("--out", default="saliency")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    weights = torchvision.models.ResNet50_Weights.IMAGENET1K_V2
    model = torchvision.models.resnet50(weights=weights).to(device)
    categories = weights.meta["categories"]

    batch = torch.stack([PREP(Image.open(p).convert("RGB")) for p in args.images]).to(device)
    labels = predict_labels(model, batch, categories)
    maps = infer_saliency(model, batch)

    for path, (name, p), m in zip(args.images, labels, maps):
        fig, axes = plt.subplots(1, 2, figsize=(8, 4))
        axes[0].imshow(Image.open(path).convert("RGB").resize((224, 224)))
        axes[0].set_title(f"{name} ({p:.2f})")
        axes[1].imshow(m.numpy(), cmap="hot")
        axes[1].set_title("SmoothGrad")
        for ax in axes:
            ax.axis("off")
        fig.savefig(os.path.join(args.out, os.path.basename(path) + ".png"), bbox_inches="tight")
        plt.close(fig)


if __name__ == "__main__":
    main()
