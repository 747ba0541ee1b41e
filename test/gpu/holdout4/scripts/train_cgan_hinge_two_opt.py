# 条件 GAN（投影判别器 + hinge 损失），64x64 图像，10 个类别。
# 两个模型、两个优化器，交替更新：每次生成器更新前判别器更新 N_DIS 次（TTUR 学习率）。
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import spectral_norm
from torch.utils.data import DataLoader, Dataset

# 超参数都放在这个字典里
hparams = {
    "z_dim": 128,
    "num_classes": 10,
    "img_size": 64,
    "g_ch": 64,          # 生成器基础通道数
    "d_ch": 64,          # 判别器基础通道数
    "batch_size": 256,
    "lr_g": 1e-4,
    "lr_d": 4e-4,
    "betas": (0.0, 0.9),
    "n_dis": 2,          # 每个生成器步对应的判别器步数
    "g_steps": 3,
}


class FakeLabeledImages(Dataset):
    """随机数据，代替真实数据集（形状与 CIFAR 放大到 64 像素一致）"""

    def __init__(self, n, size, num_classes):
        self.x = torch.rand(n, 3, size, size) * 2 - 1
        self.y = torch.randint(0, num_classes, (n,))

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def up_block(c_in, c_out):
    # 最近邻上采样 + 3x3 卷积
    return nn.Sequential(
        nn.Upsample(scale_factor=2, mode="nearest"),
        nn.Conv2d(c_in, c_out, 3, padding=1, bias=False),
        nn.BatchNorm2d(c_out),
        nn.ReLU(inplace=True),
        nn.Conv2d(c_out, c_out, 3, padding=1, bias=False),
        nn.BatchNorm2d(c_out),
        nn.ReLU(inplace=True),
    )


class Generator(nn.Module):
    def __init__(self, z_dim, num_classes, ch):
        super().__init__()
        self.ch = ch
        self.embed = nn.Embedding(num_classes, z_dim)
        self.fc = nn.Linear(2 * z_dim, 4 * 4 * ch * 16)
        mults = [16, 8, 4, 2, 1]               # 4 -> 8 -> 16 -> 32 -> 64
        self.blocks = nn.Sequential(*[up_block(ch * a, ch * b) for a, b in zip(mults[:-1], mults[1:])])
        self.to_rgb = nn.Sequential(nn.Conv2d(ch, 3, 3, padding=1), nn.Tanh())

    def forward(self, z, y):
        h = self.fc(torch.cat([z, self.embed(y)], dim=1)).view(z.size(0), self.ch * 16, 4, 4)
        return self.to_rgb(self.blocks(h))


class Discriminator(nn.Module):
    def __init__(self, num_classes, ch):
        super().__init__()
        chans = [3, ch, ch * 2, ch * 4, ch * 8, ch * 16]   # 64 -> 32 -> 16 -> 8 -> 4 -> 2
        layers = []
        for c_in, c_out in zip(chans[:-1], chans[1:]):
            layers += [spectral_norm(nn.Conv2d(c_in, c_out, 3, padding=1)), nn.LeakyReLU(0.1),
                       spectral_norm(nn.Conv2d(c_out, c_out, 4, stride=2, padding=1)), nn.LeakyReLU(0.1)]
        self.features = nn.Sequential(*layers)
        self.linear = spectral_norm(nn.Linear(chans[-1], 1))
        self.proj = spectral_norm(nn.Embedding(num_classes, chans[-1]))  # 投影判别器

    def forward(self, x, y):
        h = self.features(x).sum(dim=(2, 3))
        return self.linear(h).squeeze(1) + (self.proj(y) * h).sum(dim=1)


device = "cuda"
G = Generator(hparams["z_dim"], hparams["num_classes"], hparams["g_ch"]).to(device)
D = Discriminator(hparams["num_classes"], hparams["d_ch"]).to(device)
opt_g = torch.optim.Adam(G.parameters(), lr=hparams["lr_g"], betas=hparams["betas"])
opt_d = torch.optim.Adam(D.parameters(), lr=hparams["lr_d"], betas=hparams["betas"])

loader = DataLoader(FakeLabeledImages(hparams["batch_size"] * 8, hparams["img_size"], hparams["num_classes"]),
                    batch_size=hparams["batch_size"], shuffle=True, drop_last=True)
data_iter = iter(loader)

for g_step in range(hparams["g_steps"]):
    # ---- 判别器 ----
    for _ in range(hparams["n_dis"]):
        real, y = next(data_iter)
        real, y = real.to(device), y.to(device)
        z = torch.randn(real.size(0), hparams["z_dim"], device=device)
        with torch.no_grad():
            fake = G(z, y)
        d_loss = F.relu(1.0 - D(real, y)).mean() + F.relu(1.0 + D(fake, y)).mean()
        opt_d.zero_grad(set_to_none=True)
        d_loss.backward()
        opt_d.step()
    # ---- 生成器 ----
    z = torch.randn(hparams["batch_size"], hparams["z_dim"], device=device)
    y_fake = torch.randint(0, hparams["num_classes"], (hparams["batch_size"],), device=device)
    g_loss = -D(G(z, y_fake), y_fake).mean()
    opt_g.zero_grad(set_to_none=True)
    g_loss.backward()
    opt_g.step()
    print(f"[{g_step}] d_loss={d_loss.item():.3f} g_loss={g_loss.item():.3f}")

print("显存峰值 %.2f GiB" % (torch.cuda.max_memory_allocated() / 2**30))
