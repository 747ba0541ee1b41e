"""Landmark recognition (500 classes): torchvision ResNet-101 trunk + CLIP-style attention pooling head.

The trunk is the torchvision model with its avgpool and fc cut off
(nn.Sequential(*list(resnet.children())[:-2])); the head attends from the mean token over the 9x9 feature map
at 288 px. channels_last + bf16 autocast, SGD with nesterov momentum and label smoothing.
"""
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torchvision import models

cfg = dict(
    arch="resnet101",
    image_size=288,
    batch_size=64,
    num_classes=500,
    embed_dim=1024,
    heads=32,
    lr=0.1,
    momentum=0.9,
    weight_decay=1e-4,
    epochs=1,
    iters=6,
    label_smoothing=0.1,
)


class AttentionPool2d(nn.Module):
    def __init__(self, spacial_dim, embed_dim, num_heads, output_dim):
        super().__init__()
        self.positional_embedding = nn.Parameter(torch.randn(spacial_dim ** 2 + 1, embed_dim) / embed_dim ** 0.5)
        self.k_proj = nn.Linear(embed_dim, embed_dim)
        self.q_proj = nn.Linear(embed_dim, embed_dim)
        self.v_proj = nn.Linear(embed_dim, embed_dim)
        self.c_proj = nn.Linear(embed_dim, output_dim)
        self.num_heads = num_heads

    def forward(self, x):
        x = x.flatten(start_dim=2).permute(2, 0, 1)                 # NCHW -> (HW)NC
        x = torch.cat([x.mean(dim=0, keepdim=True), x], dim=0)      # (HW+1)NC
        x = x + self.positional_embedding[:, None, :].to(x.dtype)
        x, _ = F.multi_head_attention_forward(
            query=x[:1], key=x, value=x,
            embed_dim_to_check=x.shape[-1],
            num_heads=self.num_heads,
            q_proj_weight=self.q_proj.weight,
            k_proj_weight=self.k_proj.weight,
            v_proj_weight=self.v_proj.weight,
            in_proj_weight=None,
            in_proj_bias=torch.cat([self.q_proj.bias, self.k_proj.bias, self.v_proj.bias]),
            bias_k=None,
            bias_v=None,
            add_zero_attn=False,
            dropout_p=0.0,
            out_proj_weight=self.c_proj.weight,
            out_proj_bias=self.c_proj.bias,
            use_separate_proj_weight=True,
            training=self.training,
            need_weights=False,
        )
        return x.squeeze(0)


class LandmarkNet(nn.Module):
    def __init__(self, arch, image_size, num_classes, embed_dim, heads):
        super().__init__()
        trunk = getattr(models, arch)(weights=None)
        feat_dim = trunk.fc.in_features
        self.backbone = nn.Sequential(*list(trunk.children())[:-2])
        self.pool = AttentionPool2d(image_size // 32, feat_dim, heads, embed_dim)
        self.bn = nn.BatchNorm1d(embed_dim)
        self.classifier = nn.Linear(embed_dim, num_classes)

    def forward(self, x):
        feats = self.backbone(x)
        emb = self.bn(self.pool(feats))
        return self.classifier(emb)


class LandmarkStub(Dataset):
    def __init__(self, n, size, num_classes):
        self.n, self.size, self.num_classes = n, size, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.size, self.size), torch.randint(self.num_classes, ()).item()


def main():
    device = torch.device("cuda")
    model = LandmarkNet(cfg["arch"], cfg["image_size"], cfg["num_classes"], cfg["embed_dim"], cfg["heads"])
    model = model.to(device, memory_format=torch.channels_last)

    loader = DataLoader(LandmarkStub(cfg["batch_size"] * cfg["iters"], cfg["image_size"], cfg["num_classes"]),
                        batch_size=cfg["batch_size"], shuffle=True, num_workers=4, pin_memory=True,
                        drop_last=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=cfg["momentum"], nesterov=True,
                                weight_decay=cfg["weight_decay"])
    total = cfg["epochs"] * len(loader)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 0.5 * (1 + math.cos(math.pi * s / total)))
    criterion = nn.CrossEntropyLoss(label_smoothing=cfg["label_smoothing"])

    for epoch in range(cfg["epochs"]):
        model.train()
        t0 = time.time()
        for it, (images, labels) in enumerate(loader):
            images = images.to(device, non_blocking=True).to(memory_format=torch.channels_last)
            labels = labels.to(device, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(images)
                loss = criterion(logits, labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
            print(f"[{epoch}:{it}] loss {loss.item():.3f} ({time.time() - t0:.1f}s)")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
