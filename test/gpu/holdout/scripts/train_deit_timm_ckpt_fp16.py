# DeiT-B fine-tune with activation checkpointing + fp16 AMP (old V100 habit, kept)
import timm
import torch
import torch.nn.functional as F

MODEL_NAME = "deit_base_patch16_224"
NUM_CLASSES = 1000
BATCH = 256
RES = 224
LR = 5e-4 * BATCH / 512  # linear scaling rule
STEPS = 5

device = "cuda"
model = timm.create_model(MODEL_NAME, pretrained=False, num_classes=NUM_CLASSES)
model.set_grad_checkpointing(True)
model.to(device)

optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.05)
scaler = torch.amp.GradScaler("cuda")


def synthetic_batches(n):
    for _ in range(n):
        x = torch.randn(BATCH, 3, RES, RES, pin_memory=True)
        y = torch.randint(0, NUM_CLASSES, (BATCH,))
        yield x, y


def train():
    model.train()
    for step, (x, y) in enumerate(synthetic_batches(STEPS)):
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        with torch.amp.autocast("cuda", dtype=torch.float16):
            logits = model(x)
            loss = F.cross_entropy(logits, y)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        print(f"step {step}: loss={loss.item():.4f} scale={scaler.get_scale():.0f}")


train()
