"""胶囊网络（CapsNet, Sabour et al. 2017）在 CIFAR-10 尺寸图像上的复现：
PrimaryCaps -> DigitCaps，动态路由迭代 ROUTING_ITERS 次，外加重构解码器。数据是随机生成的。
"""
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# ===== 超参数（尺寸由辅助函数推出来） =====
IMG_SIZE = 32
IN_CHANNELS = 3
NUM_CLASSES = 10
CONV1_CHANNELS = 256
CONV1_KERNEL = 9
PRIMARY_KERNEL = 9
PRIMARY_STRIDE = 2
PRIMARY_CAPS = 32      # 每个位置 32 个胶囊
PRIMARY_DIM = 8
DIGIT_DIM = 16
ROUTING_ITERS = 3
BATCH_SIZE = 128
LR = 1e-3
EPOCHS = 2
STEPS_PER_EPOCH = 6


def primary_grid(img_size=IMG_SIZE, k1=CONV1_KERNEL, k2=PRIMARY_KERNEL, s2=PRIMARY_STRIDE):
    """conv1（无 padding）之后再做一次 stride=2 的卷积，得到 PrimaryCaps 的空间尺寸"""
    after_conv1 = img_size - k1 + 1
    return (after_conv1 - k2) // s2 + 1


GRID = primary_grid()                              # 32 -> 24 -> 8
NUM_PRIMARY = PRIMARY_CAPS * GRID * GRID           # 2048 个初级胶囊


def squash(s, dim=-1, eps=1e-8):
    # 压缩函数：保持方向，把长度压到 (0, 1)
    n2 = (s ** 2).sum(dim=dim, keepdim=True)
    return n2 / (1 + n2) * s / torch.sqrt(n2 + eps)


class PrimaryCaps(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(CONV1_CHANNELS, PRIMARY_CAPS * PRIMARY_DIM, PRIMARY_KERNEL, PRIMARY_STRIDE)

    def forward(self, x):
        u = self.conv(x)                                           # (B, 32*8, 8, 8)
        B = u.size(0)
        u = u.view(B, PRIMARY_CAPS, PRIMARY_DIM, GRID, GRID).permute(0, 1, 3, 4, 2)
        return squash(u.reshape(B, NUM_PRIMARY, PRIMARY_DIM))


class DigitCaps(nn.Module):
    def __init__(self):
        super().__init__()
        # 每对 (初级胶囊 i, 类别胶囊 j) 一个 16x8 变换矩阵
        self.W = nn.Parameter(0.01 * torch.randn(1, NUM_PRIMARY, NUM_CLASSES, DIGIT_DIM, PRIMARY_DIM))

    def forward(self, u):
        B = u.size(0)
        u = u[:, :, None, :, None]                                 # (B, 2048, 1, 8, 1)
        u_hat = torch.matmul(self.W, u).squeeze(-1)                # (B, 2048, 10, 16)，广播会展开 W
        b = torch.zeros(B, NUM_PRIMARY, NUM_CLASSES, device=u.device)
        for r in range(ROUTING_ITERS):
            c = F.softmax(b, dim=2)                                # 耦合系数
            if r < ROUTING_ITERS - 1:
                # 中间迭代不回传梯度（常见做法）
                s = (c.unsqueeze(-1) * u_hat.detach()).sum(dim=1)
                v = squash(s)
                b = b + (u_hat.detach() * v.unsqueeze(1)).sum(-1)  # 一致性更新
            else:
                s = (c.unsqueeze(-1) * u_hat).sum(dim=1)
                v = squash(s)
        return v                                                   # (B, 10, 16)


class CapsNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(IN_CHANNELS, CONV1_CHANNELS, CONV1_KERNEL)
        self.primary = PrimaryCaps()
        self.digits = DigitCaps()
        self.decoder = nn.Sequential(
            nn.Linear(NUM_CLASSES * DIGIT_DIM, 512), nn.ReLU(inplace=True),
            nn.Linear(512, 1024), nn.ReLU(inplace=True),
            nn.Linear(1024, IN_CHANNELS * IMG_SIZE * IMG_SIZE), nn.Sigmoid(),
        )

    def forward(self, x, y=None):
        v = self.digits(self.primary(F.relu(self.conv1(x))))
        lengths = v.norm(dim=-1)                                   # 类别概率 = 胶囊长度
        if y is None:
            y = lengths.argmax(-1)
        mask = F.one_hot(y, NUM_CLASSES).unsqueeze(-1).to(v.dtype)
        recon = self.decoder((v * mask).flatten(1))
        return lengths, recon


def margin_loss(lengths, y, m_pos=0.9, m_neg=0.1, lam=0.5):
    t = F.one_hot(y, NUM_CLASSES).float()
    loss = t * F.relu(m_pos - lengths) ** 2 + lam * (1 - t) * F.relu(lengths - m_neg) ** 2
    return loss.sum(-1).mean()


def main():
    device = "cuda"
    model = CapsNet().to(device)
    print(f"初级胶囊 {NUM_PRIMARY} 个, 参数 {sum(p.numel() for p in model.parameters()) / 1e6:.2f}M")
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.96)
    t0 = time.time()
    for epoch in range(EPOCHS):
        model.train()
        for step in range(STEPS_PER_EPOCH):
            x = torch.rand(BATCH_SIZE, IN_CHANNELS, IMG_SIZE, IMG_SIZE, device=device)
            y = torch.randint(0, NUM_CLASSES, (BATCH_SIZE,), device=device)
            lengths, recon = model(x, y)
            loss = margin_loss(lengths, y) + 0.0005 * F.mse_loss(recon, x.flatten(1), reduction="sum") / BATCH_SIZE
            opt.zero_grad()
            loss.backward()
            opt.step()
            print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        sched.step()
        # 验证：不算梯度
        model.eval()
        with torch.no_grad():
            lengths, _ = model(x)
            acc = (lengths.argmax(-1) == y).float().mean().item()
        print(f"epoch {epoch} acc {acc:.3f}")
    print(f"用时 {time.time() - t0:.1f}s, 显存峰值 {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
