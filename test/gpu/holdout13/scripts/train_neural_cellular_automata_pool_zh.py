# -*- coding: utf-8 -*-
"""Growing Neural Cellular Automata（可生长的神经元胞自动机），带样本池（sample pool）训练。

每个 batch 从 GPU 上的样本池里取出状态，随机展开 64~96 步 CA 更新（Python 循环，整个展开过程都保留计算图），
与目标 RGBA 图像做 MSE，再把结果写回样本池。
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

# ---- 超参数（模块常量）----
TARGET_SIZE = 64
PAD = 8
GRID = TARGET_SIZE + 2 * PAD          # 72x72 的细胞网格
CHANNELS = 16                         # RGBA + 12 个隐藏通道
HIDDEN = 128
POOL_SIZE = 1024
BATCH = 16
MIN_STEPS, MAX_STEPS = 64, 96
FIRE_RATE = 0.5
TRAIN_ITERS = 6
LR = 2e-3

device = "cuda"
torch.manual_seed(0)


class CA(nn.Module):
    def __init__(self, channels=CHANNELS, hidden=HIDDEN, fire_rate=FIRE_RATE):
        super().__init__()
        self.channels, self.fire_rate = channels, fire_rate
        ident = torch.tensor([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
        sobel_x = torch.tensor([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]]) / 8.0
        kernels = torch.stack([ident, sobel_x, sobel_x.T])                   # (3, 3, 3)
        # 固定的感知卷积核：每个通道做 identity / sobel_x / sobel_y，不参与训练
        self.register_buffer("perception_kernel", kernels.repeat(channels, 1, 1).unsqueeze(1))  # (3C, 1, 3, 3)
        self.update = nn.Sequential(nn.Conv2d(3 * channels, hidden, 1), nn.ReLU(), nn.Conv2d(hidden, channels, 1))
        nn.init.zeros_(self.update[-1].weight)
        nn.init.zeros_(self.update[-1].bias)

    def alive(self, x):
        return F.max_pool2d(x[:, 3:4], 3, stride=1, padding=1) > 0.1

    def step(self, x):
        pre = self.alive(x)
        y = F.conv2d(x, self.perception_kernel, padding=1, groups=self.channels)
        dx = self.update(y)
        mask = (torch.rand_like(x[:, :1]) <= self.fire_rate).float()   # 随机异步更新
        x = x + dx * mask
        post = self.alive(x)
        return x * (pre & post).float()

    def forward(self, x, steps):
        for _ in range(steps):
            x = self.step(x)
        return x


def make_seed(n):
    x = torch.zeros(n, CHANNELS, GRID, GRID, device=device)
    x[:, 3:, GRID // 2, GRID // 2] = 1.0
    return x


# 目标图像：随机的 RGBA“表情符号”（真实项目里是读 png）
target = torch.zeros(1, 4, GRID, GRID, device=device)
target[:, :, PAD:PAD + TARGET_SIZE, PAD:PAD + TARGET_SIZE] = torch.rand(1, 4, TARGET_SIZE, TARGET_SIZE, device=device)

model = CA().to(device)
opt = torch.optim.Adam(model.parameters(), lr=LR)
sched = torch.optim.lr_scheduler.MultiStepLR(opt, [2000], 0.1)
pool = make_seed(POOL_SIZE)

for it in range(TRAIN_ITERS):
    idx = torch.randint(0, POOL_SIZE, (BATCH,), device=device)
    x = pool[idx]
    # 损失最大的那个样本换成种子，防止遗忘
    with torch.no_grad():
        worst = ((x[:, :4] - target) ** 2).mean(dim=(1, 2, 3)).argmax()
        x[worst] = make_seed(1)[0]
    n_steps = int(torch.randint(MIN_STEPS, MAX_STEPS + 1, (1,)))
    out = model(x, n_steps)
    loss = F.mse_loss(out[:, :4], target.expand(BATCH, -1, -1, -1))
    opt.zero_grad()
    loss.backward()
    for p in model.parameters():                      # 逐参数梯度归一化
        if p.grad is not None:
            p.grad.div_(p.grad.norm() + 1e-8)
    opt.step()
    sched.step()
    pool[idx] = out.detach()
    print(f"iter {it} steps {n_steps} loss {loss.item():.5f}")

print(f"显存峰值 {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")
