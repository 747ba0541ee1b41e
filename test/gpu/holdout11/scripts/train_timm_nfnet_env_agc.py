"""Fine-tune a timm NFNet with adaptive gradient clipping (AGC); everything from environment variables.

    TIMM_MODEL=eca_nfnet_l0 IMG=256 BS=64 python train_timm_nfnet_env_agc.py
"""
import os

import timm
import torch
from timm.loss import LabelSmoothingCrossEntropy
from timm.utils import adaptive_clip_grad
from torch.utils.data import DataLoader, TensorDataset

MODEL_NAME = os.environ.get("TIMM_MODEL", "eca_nfnet_l0")
IMG = int(os.getenv("IMG", "256"))
BS = int(os.getenv("BS", "64"))
NUM_CLASSES = int(os.getenv("NUM_CLASSES", "196"))
STEPS = int(os.getenv("STEPS", "5"))
LR = float(os.getenv("LR", "2e-4"))
AGC = float(os.getenv("AGC_CLIP", "0.01"))

device = "cuda"
model = timm.create_model(MODEL_NAME, pretrained=False, num_classes=NUM_CLASSES, drop_path_rate=0.1).to(device)
n_params = sum(p.numel() for p in model.parameters())
print(f"{MODEL_NAME}: {n_params / 1e6:.1f}M params, input {IMG}px, batch {BS}")

data = TensorDataset(torch.randn(BS * STEPS, 3, IMG, IMG), torch.randint(0, NUM_CLASSES, (BS * STEPS,)))
loader = DataLoader(data, batch_size=BS, shuffle=True, drop_last=True)

criterion = LabelSmoothingCrossEntropy(smoothing=0.1)
optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.05)

model.train()
for step, (x, y) in enumerate(loader):
    x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = criterion(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    # AGC, but not on the final classifier (as in the NFNet paper)
    adaptive_clip_grad([p for n, p in model.named_parameters() if not n.startswith("head.fc")], clip_factor=AGC)
    optimizer.step()
    print(f"step {step}: loss {loss.item():.4f}")
