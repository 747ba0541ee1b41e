"""Two stages in one script.

Stage 1: self-supervised pretraining of a ResNet-style encoder as a denoising autoencoder on 128 px crops
         (batch 64, Adam, fp32).
Stage 2: the encoder gets a classification head and is fine-tuned on 224 px images at batch 128 with
         bf16 autocast and SGD; the stage-1 decoder and optimizer are deleted first.
The second stage is the larger one.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

STAGE1 = {"img": 128, "batch": 64, "steps": 4, "lr": 1e-3}
STAGE2 = {"img": 224, "batch": 128, "steps": 4, "lr": 0.05, "num_classes": 365}
WIDTHS = [64, 128, 256, 512]
DEPTHS = [2, 2, 3, 2]


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(cout)
        self.short = nn.Sequential()
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.b1(self.c1(x)))
        out = self.b2(self.c2(out))
        return F.relu(out + self.short(x))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, WIDTHS[0], 3, 1, 1, bias=False), nn.BatchNorm2d(WIDTHS[0]), nn.ReLU())
        stages, cin = [], WIDTHS[0]
        for i, (w, d) in enumerate(zip(WIDTHS, DEPTHS)):
            blocks = []
            for j in range(d):
                blocks.append(BasicBlock(cin, w, 2 if (j == 0 and i > 0) else 1))
                cin = w
            stages.append(nn.Sequential(*blocks))
        self.stages = nn.Sequential(*stages)
        self.out_channels = cin

    def forward(self, x):
        return self.stages(self.stem(x))


class Decoder(nn.Module):
    def __init__(self, cin):
        super().__init__()
        layers = []
        for w in reversed(WIDTHS[:-1]):
            layers += [nn.ConvTranspose2d(cin, w, 4, 2, 1), nn.BatchNorm2d(w), nn.ReLU()]
            cin = w
        layers.append(nn.Conv2d(cin, 3, 3, 1, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, z):
        return self.net(z)


class Images(Dataset):
    def __init__(self, n, size, num_classes=None):
        self.n, self.size, self.num_classes = n, size, num_classes
        self.pool = torch.randn(32, 3, size, size)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = self.pool[i % 32]
        if self.num_classes is None:
            return x
        return x, i % self.num_classes


def pretrain(encoder, device):
    decoder = Decoder(encoder.out_channels).to(device)
    params = list(encoder.parameters()) + list(decoder.parameters())
    opt = torch.optim.Adam(params, lr=STAGE1["lr"])
    loader = DataLoader(Images(STAGE1["batch"] * STAGE1["steps"], STAGE1["img"]), batch_size=STAGE1["batch"])
    encoder.train(); decoder.train()
    for step, x in enumerate(loader):
        x = x.to(device)
        noisy = x + 0.3 * torch.randn_like(x)
        recon = decoder(encoder(noisy))
        loss = F.mse_loss(recon, x)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"[pretrain] step {step} mse {loss.item():.4f}")
    del decoder, opt
    torch.cuda.empty_cache()


def finetune(encoder, device):
    model = nn.Sequential(encoder, nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(encoder.out_channels, STAGE2["num_classes"])).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=STAGE2["lr"], momentum=0.9, nesterov=True, weight_decay=5e-5)
    loader = DataLoader(Images(STAGE2["batch"] * STAGE2["steps"], STAGE2["img"], STAGE2["num_classes"]),
                        batch_size=STAGE2["batch"], shuffle=True, num_workers=2)
    model.train()
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"[finetune] step {step} ce {loss.item():.4f}")


if __name__ == "__main__":
    dev = torch.device("cuda")
    enc = Encoder().to(dev)
    pretrain(enc, dev)
    finetune(enc, dev)
