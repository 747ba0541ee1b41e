# ViT-B/16 fine-tuning with fp16 autocast + GradScaler and gradient accumulation.
# The effective batch is 32 x 4 = 128; "steps" below count optimizer updates, not micro-batches.
import argparse

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from torchvision.models import vit_b_16

parser = argparse.ArgumentParser()
parser.add_argument("--micro-batch", type=int, default=32)
parser.add_argument("--accum", type=int, default=4, help="micro-batches per optimizer step")
parser.add_argument("--max-updates", type=int, default=3)
parser.add_argument("--lr", type=float, default=3e-4)
parser.add_argument("--num-classes", type=int, default=397)
args = parser.parse_args()

torch.backends.cuda.matmul.allow_tf32 = True

model = vit_b_16(weights=None, num_classes=args.num_classes, dropout=0.1).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05, betas=(0.9, 0.999))
scaler = torch.amp.GradScaler("cuda")

n = args.micro_batch * args.accum * args.max_updates
images = torch.randn(n, 3, 224, 224)
targets = torch.randint(0, args.num_classes, (n,))
loader = DataLoader(TensorDataset(images, targets), batch_size=args.micro_batch, shuffle=True, pin_memory=True)

updates = 0
model.train()
opt.zero_grad(set_to_none=True)
for i, (x, y) in enumerate(loader):
    x = x.cuda(non_blocking=True)
    y = y.cuda(non_blocking=True)
    with torch.autocast("cuda", dtype=torch.float16):
        out = model(x)
        loss = F.cross_entropy(out, y) / args.accum
    scaler.scale(loss).backward()
    if (i + 1) % args.accum == 0:
        scaler.unscale_(opt)
        gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        updates += 1
        print(f"update {updates}: loss={loss.item() * args.accum:.3f} grad_norm={gn.item():.2f} scale={scaler.get_scale()}")
        if updates == args.max_updates:
            break
