"""Fine-tune a ViT-Base/16 classifier at 320 px (HF ViTConfig built in code), fp16 AMP with GradScaler and
gradient checkpointing through the HF API."""
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from transformers import ViTConfig, ViTForImageClassification

IMAGE_SIZE = 320
PATCH = 16
NUM_PATCHES = (IMAGE_SIZE // PATCH) ** 2   # 400 tokens + [CLS]
WIDTH = 768
DEPTH = 12
HEADS = WIDTH // 64
MLP_DIM = 4 * WIDTH
NUM_CLASSES = 102
BATCH_SIZE = 128
STEPS = 4
LR = 5e-5

cfg = ViTConfig(
    image_size=IMAGE_SIZE,
    patch_size=PATCH,
    hidden_size=WIDTH,
    num_hidden_layers=DEPTH,
    num_attention_heads=HEADS,
    intermediate_size=MLP_DIM,
    num_labels=NUM_CLASSES,
    hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0,
)
model = ViTForImageClassification(cfg)
model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
model = model.to("cuda")
model.train()

images = torch.randn(BATCH_SIZE * STEPS, 3, IMAGE_SIZE, IMAGE_SIZE)
targets = torch.randint(0, NUM_CLASSES, (BATCH_SIZE * STEPS,))
loader = DataLoader(TensorDataset(images, targets), batch_size=BATCH_SIZE, shuffle=True, pin_memory=True)

optimizer = torch.optim.Adam(model.parameters(), lr=LR)
scaler = torch.amp.GradScaler("cuda")

for epoch in range(1):
    for i, (x, y) in enumerate(loader):
        x = x.to("cuda", non_blocking=True)
        y = y.to("cuda", non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            logits = model(pixel_values=x).logits
            loss = F.cross_entropy(logits, y, label_smoothing=0.1)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        print(f"epoch {epoch} it {i} loss {loss.item():.4f} scale {scaler.get_scale():.0f}")

print(f"peak alloc {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")
