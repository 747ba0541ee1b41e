"""Batch inference for the defect classifier (EfficientNet-B3) on a folder of images.

Three entry points grew over time:
  * run_batch_job   - nightly job, grad globally disabled
  * predict         - used by the labeling tool to get per-image probabilities
  * infer_tta       - test-time augmentation, inference_mode
"""
import argparse
import csv
import glob
import os

import torch
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import models, transforms

TF = transforms.Compose([
    transforms.Resize(320),
    transforms.CenterCrop(300),
    transforms.ToTensor(),
    transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
])


class FolderDataset(Dataset):
    def __init__(self, root):
        self.paths = sorted(glob.glob(os.path.join(root, "*.png")) + glob.glob(os.path.join(root, "*.jpg")))

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return TF(Image.open(self.paths[i]).convert("RGB")), self.paths[i]


def load_model(ckpt, num_classes, device):
    model = models.efficientnet_b3(weights=None, num_classes=num_classes)
    state = torch.load(ckpt, map_location="cpu")
    model.load_state_dict(state["model"])
    return model.to(device).eval()


def predict(model, loader, device):
    """Returns a list of per-batch probability tensors (kept on CPU)."""
    outputs = []
    names = []
    for images, paths in loader:
        images = images.to(device, non_blocking=True)
        logits = model(images)  # expect: OOM104
        probs = F.softmax(logits, dim=1)
        outputs.append(probs.cpu())  # expect: OOM101
        names.extend(paths)
    return outputs, names


@torch.inference_mode()
def infer_tta(model, loader, device):
    all_probs = []
    for images, _ in loader:
        images = images.to(device)
        p = F.softmax(model(images), dim=1) + F.softmax(model(torch.flip(images, dims=[3])), dim=1)
        all_probs.append(p / 2)
    return torch.cat(all_probs)


def run_batch_job(model, loader, device, out_csv, class_names):
    torch.set_grad_enabled(False)
    rows = []
    top_logits = []
    for images, paths in loader:
        logits = model(images.to(device))
        top_logits.append(logits.max(dim=1).values.cpu())
        pred = logits.argmax(dim=1).tolist()
        rows.extend([(p, class_names[c]) for p, c in zip(paths, pred)])
    torch.set_grad_enabled(True)
    with open(out_csv, "w", newline="") as f:
        csv.writer(f).writerows(rows)
    return torch.cat(top_logits)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--ckpt", default="defect_b3.pt")
    ap.add_argument("--out", default="predictions.csv")
    ap.add_argument("--mode", choices=["job", "tool", "tta"], default="job")
    args = ap.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    class_names = ["ok", "scratch", "dent", "stain"]
    model = load_model(args.ckpt, len(class_names), device)
    loader = DataLoader(FolderDataset(args.folder), batch_size=64, num_workers=4, pin_memory=True)

    if args.mode == "job":
        run_batch_job(model, loader, device, args.out, class_names)
    elif args.mode == "tool":
        probs, names = predict(model, loader, device)
        torch.save({"probs": torch.cat(probs), "names": names}, args.out + ".pt")
    else:
        probs = infer_tta(model, loader, device)
        print(probs.argmax(dim=1).bincount())


if __name__ == "__main__":
    main()
