"""DINO self-distillation with multi-crop: 2 global views (224 px) + 6 local views (96 px) per image.

Student and teacher are timm ViT-S/16 backbones (dynamic_img_size so the 96 px crops work) with a DINO head
(3-layer MLP -> 256-d bottleneck -> weight-normed 65536-way prototype layer). The teacher is an EMA copy that
only sees the global views, with centering and sharpening. bf16 autocast, AdamW, clipping.
"""
import timm
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 128
GLOBAL_SIZE, LOCAL_SIZE = 224, 96
N_LOCAL = 6
OUT_DIM = 65536
STUDENT_TEMP, TEACHER_TEMP = 0.1, 0.04
CENTER_MOMENTUM = 0.9
EMA = 0.996
STEPS = 4


class DINOHead(nn.Module):
    def __init__(self, in_dim, out_dim, hidden=2048, bottleneck=256):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(in_dim, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU(),
                                 nn.Linear(hidden, bottleneck))
        self.last_layer = nn.utils.parametrizations.weight_norm(nn.Linear(bottleneck, out_dim, bias=False))

    def forward(self, x):
        x = F.normalize(self.mlp(x), dim=-1)
        return self.last_layer(x)


class MultiCropWrapper(nn.Module):
    def __init__(self, backbone, head):
        super().__init__()
        self.backbone, self.head = backbone, head

    def forward(self, crops):
        # run same-resolution crops together
        outs = []
        for size in sorted({c.shape[-1] for c in crops}, reverse=True):
            group = torch.cat([c for c in crops if c.shape[-1] == size])
            outs.append(self.backbone(group))
        return self.head(torch.cat(outs))


def dino_loss(student_out, teacher_out, center, n_crops):
    s = (student_out / STUDENT_TEMP).chunk(n_crops)
    t = F.softmax((teacher_out - center) / TEACHER_TEMP, dim=-1).detach().chunk(2)
    total, n = 0.0, 0
    for iq, q in enumerate(t):
        for v in range(n_crops):
            if v == iq:
                continue
            total = total + torch.sum(-q * F.log_softmax(s[v], dim=-1), dim=-1).mean()
            n += 1
    return total / n


def make_views(batch):
    g = [torch.randn(batch, 3, GLOBAL_SIZE, GLOBAL_SIZE, device="cuda") for _ in range(2)]
    l = [torch.randn(batch, 3, LOCAL_SIZE, LOCAL_SIZE, device="cuda") for _ in range(N_LOCAL)]
    return g + l


def build(drop_path):
    vit = timm.create_model("vit_small_patch16_224", pretrained=False, num_classes=0, dynamic_img_size=True,
                            drop_path_rate=drop_path)
    return MultiCropWrapper(vit, DINOHead(vit.num_features, OUT_DIM))


student = build(0.1).cuda()
teacher = build(0.0).cuda()
teacher.load_state_dict(student.state_dict())   # teacher starts as a copy of the student
for p in teacher.parameters():
    p.requires_grad = False
center = torch.zeros(1, OUT_DIM, device="cuda")

params_reg = [p for n, p in student.named_parameters() if p.ndim > 1]
params_noreg = [p for n, p in student.named_parameters() if p.ndim <= 1]
opt = torch.optim.AdamW([{"params": params_reg, "weight_decay": 0.04}, {"params": params_noreg, "weight_decay": 0.0}],
                        lr=5e-4 * BATCH / 256)

for it in range(STEPS):
    views = make_views(BATCH)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        with torch.no_grad():
            t_out = teacher(views[:2])
        s_out = student(views)
        loss = dino_loss(s_out.float(), t_out.float(), center, 2 + N_LOCAL)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(student.parameters(), 3.0)
    opt.step()
    with torch.no_grad():
        for ps, pt in zip(student.parameters(), teacher.parameters()):
            pt.mul_(EMA).add_(ps.detach(), alpha=1 - EMA)
        center.mul_(CENTER_MOMENTUM).add_(t_out.float().mean(0, keepdim=True), alpha=1 - CENTER_MOMENTUM)
    print(f"it {it} loss {loss.item():.4f}")
