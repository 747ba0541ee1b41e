"""UNETR：ViT 编码器 + 3D 卷积解码器，做 CT 多器官分割（数据为随机体素）。

配置读自 configs/unetr_btcv.yaml（和脚本放在一起）。ViT 每个 block 用 torch.utils.checkpoint 省显存，
前向在 bf16 autocast 下运行。
"""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml
from torch.utils.checkpoint import checkpoint

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "configs", "unetr_btcv.yaml")) as f:
    cfg = yaml.safe_load(f)


def conv_block(cin, cout):
    # 两层 3x3x3 卷积 + InstanceNorm + LeakyReLU，带残差
    return nn.Sequential(
        nn.Conv3d(cin, cout, 3, padding=1, bias=False), nn.InstanceNorm3d(cout, affine=True), nn.LeakyReLU(0.01),
        nn.Conv3d(cout, cout, 3, padding=1, bias=False), nn.InstanceNorm3d(cout, affine=True), nn.LeakyReLU(0.01),
    )


class UpBlock(nn.Module):
    """反卷积上采样，和跳连特征拼接后再卷积"""

    def __init__(self, cin, cout):
        super().__init__()
        self.up = nn.ConvTranspose3d(cin, cout, 2, stride=2)
        self.conv = conv_block(cout * 2, cout)

    def forward(self, x, skip):
        return self.conv(torch.cat([self.up(x), skip], dim=1))


class ProjUp(nn.Module):
    """把 ViT 中间层 token 还原成 3D 特征图，再上采样 n 次"""

    def __init__(self, cin, cout, n_up):
        super().__init__()
        layers = [nn.ConvTranspose3d(cin, cout, 2, stride=2)]
        for _ in range(n_up - 1):
            layers += [nn.ConvTranspose3d(cout, cout, 2, stride=2), nn.InstanceNorm3d(cout, affine=True),
                       nn.LeakyReLU(0.01)]
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


class ViTBlock(nn.Module):
    def __init__(self, dim, heads, mlp_dim):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, mlp_dim), nn.GELU(), nn.Linear(mlp_dim, dim))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class UNETR(nn.Module):
    def __init__(self, in_ch, n_cls, roi, patch, hidden, mlp_dim, layers, heads, fs, use_ckpt):
        super().__init__()
        self.grid = [r // patch for r in roi]
        self.use_ckpt = use_ckpt
        self.patch_embed = nn.Conv3d(in_ch, hidden, patch, stride=patch)
        n_tokens = self.grid[0] * self.grid[1] * self.grid[2]
        self.pos = nn.Parameter(torch.zeros(1, n_tokens, hidden))
        self.blocks = nn.ModuleList([ViTBlock(hidden, heads, mlp_dim) for _ in range(layers)])
        self.norm = nn.LayerNorm(hidden)
        # 解码器（和 MONAI 的结构一致）
        self.enc1 = conv_block(in_ch, fs)
        self.enc2 = ProjUp(hidden, fs * 2, 3)
        self.enc3 = ProjUp(hidden, fs * 4, 2)
        self.enc4 = ProjUp(hidden, fs * 8, 1)
        self.dec5 = UpBlock(hidden, fs * 8)
        self.dec4 = UpBlock(fs * 8, fs * 4)
        self.dec3 = UpBlock(fs * 4, fs * 2)
        self.dec2 = UpBlock(fs * 2, fs)
        self.out = nn.Conv3d(fs, n_cls, 1)

    def to_volume(self, t):
        B, N, C = t.shape
        return t.transpose(1, 2).reshape(B, C, *self.grid)

    def forward(self, x):
        tokens = self.patch_embed(x).flatten(2).transpose(1, 2) + self.pos
        hidden = []
        for blk in self.blocks:
            if self.use_ckpt and self.training:
                tokens = checkpoint(blk, tokens, use_reentrant=False)
            else:
                tokens = blk(tokens)
            hidden.append(tokens)
        z3, z6, z9 = hidden[2], hidden[5], hidden[8]
        z12 = self.norm(tokens)
        e1 = self.enc1(x)
        e2 = self.enc2(self.to_volume(z3))
        e3 = self.enc3(self.to_volume(z6))
        e4 = self.enc4(self.to_volume(z9))
        d = self.dec5(self.to_volume(z12), e4)
        d = self.dec4(d, e3)
        d = self.dec3(d, e2)
        d = self.dec2(d, e1)
        return self.out(d)


def dice_ce_loss(logits, target, n_cls):
    ce = F.cross_entropy(logits, target)
    probs = logits.float().softmax(1)
    onehot = F.one_hot(target, n_cls).permute(0, 4, 1, 2, 3).float()
    inter = (probs * onehot).sum((2, 3, 4))
    denom = probs.sum((2, 3, 4)) + onehot.sum((2, 3, 4))
    dice = 1 - (2 * inter + 1e-5) / (denom + 1e-5)
    return ce + dice.mean()


def main():
    d, m, t = cfg["data"], cfg["model"], cfg["train"]
    device = torch.device("cuda")
    model = UNETR(d["in_channels"], d["num_classes"], d["roi"], m["patch_size"], m["hidden_size"], m["mlp_dim"],
                  m["num_layers"], m["num_heads"], m["feature_size"], m["grad_checkpoint"]).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=float(t["lr"]), weight_decay=float(t["weight_decay"]))
    print("参数量 %.1fM" % (sum(p.numel() for p in model.parameters()) / 1e6))

    for step in range(t["max_steps"]):
        # 随机 CT 块和标签
        vol = torch.randn(d["batch_size"], d["in_channels"], *d["roi"], device=device)
        seg = torch.randint(0, d["num_classes"], (d["batch_size"], *d["roi"]), device=device)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(vol)
            loss = dice_ce_loss(logits, seg, d["num_classes"])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        print(f"step {step}  loss={loss.item():.4f}")
    print("显存峰值: %.2f GiB" % (torch.cuda.max_memory_allocated() / 2 ** 30))


if __name__ == "__main__":
    main()
