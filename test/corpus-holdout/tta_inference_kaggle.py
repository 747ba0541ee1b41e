"""Kaggle submission: 5-fold EfficientNet ensemble with 8x dihedral TTA.

Inference only. Kernels have a single P100, so no nn.DataParallel( here -- it would only add a gather.
"""
import gc
import glob
import os

CFG = {
    "gpus": "0",
    "img_size": 512,
    "bs": 32,
    "model_dir": "/kaggle/input/effnet-b4-folds",
    "test_dir": "/kaggle/input/leaf-disease/test_images",
    "n_classes": 5,
}
os.environ["CUDA_VISIBLE_DEVICES"] = CFG["gpus"]
os.environ["CUDA_LAUNCH_BLOCKING"] = "1"  # keep error traces readable on Kaggle

import numpy as np
import pandas as pd
import timm
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms


class TestSet(Dataset):
    def __init__(self, paths, tf):
        self.paths, self.tf = paths, tf

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return self.tf(Image.open(self.paths[i]).convert("RGB")), os.path.basename(self.paths[i])


def dihedral(x, k):
    """k in 0..7: rotation by 90*(k%4), flipped when k >= 4."""
    x = torch.rot90(x, k % 4, dims=(2, 3))
    return torch.flip(x, dims=(3,)) if k >= 4 else x


@torch.no_grad()
def predict_tta(model, x, n_aug=8):
    probs = []
    for k in range(n_aug):
        probs.append(model(dihedral(x, k)).softmax(1))
    return torch.stack(probs).mean(0)


def predict_fold(model, loader, device):
    model.eval()
    fold_probs, names = [], []
    with torch.inference_mode():
        for x, fn in loader:
            fold_probs.append(predict_tta(model, x.to(device)).float().cpu())
            names.extend(fn)
    return torch.cat(fold_probs).numpy(), names


def make_submission():
    device = torch.device("cuda")
    tf = transforms.Compose([transforms.Resize((CFG["img_size"], CFG["img_size"])), transforms.ToTensor(),
                             transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    paths = sorted(glob.glob(os.path.join(CFG["test_dir"], "*.jpg")))
    loader = DataLoader(TestSet(paths, tf), batch_size=CFG["bs"], num_workers=2, pin_memory=True)

    ensemble, names = None, None
    ckpts = sorted(glob.glob(os.path.join(CFG["model_dir"], "fold*.pth")))
    for ckpt in ckpts:
        model = timm.create_model("tf_efficientnet_b4_ns", pretrained=False, num_classes=CFG["n_classes"])
        model.load_state_dict(torch.load(ckpt, map_location="cpu"))
        model.to(device)
        probs, names = predict_fold(model, loader, device)
        ensemble = probs if ensemble is None else ensemble + probs
        print(f"{os.path.basename(ckpt)}: mean max-prob {probs.max(1).mean():.3f}")
        # free the fold's weights before loading the next one (once per fold, not per batch)
        del model
        gc.collect()
        torch.cuda.empty_cache()
    ensemble /= len(ckpts)
    return pd.DataFrame({"image_id": names, "label": np.argmax(ensemble, 1)})


if __name__ == "__main__":
    sub = make_submission()
    sub.to_csv("submission.csv", index=False)
    print(sub.head())
