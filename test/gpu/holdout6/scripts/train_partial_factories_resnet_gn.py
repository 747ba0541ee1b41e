"""ResNet-style network whose layers all come from functools.partial factories (GroupNorm, SiLU, 3x3 conv);
trained in fp32 with RAdam on 192 px crops."""
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

conv3x3 = partial(nn.Conv2d, kernel_size=3, padding=1, bias=False)
conv1x1 = partial(nn.Conv2d, kernel_size=1, bias=False)
Norm = partial(nn.GroupNorm, 32)
Act = partial(nn.SiLU, inplace=True)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin, width, stride=1, conv=conv3x3, norm=Norm, act=Act):
        super().__init__()
        cout = width * self.expansion
        self.body = nn.Sequential(
            conv1x1(cin, width), norm(width), act(),
            conv(width, width, stride=stride), norm(width), act(),
            conv1x1(width, cout), norm(cout),
        )
        self.short = (nn.Sequential(conv1x1(cin, cout, stride=stride), norm(cout))
                      if stride != 1 or cin != cout else nn.Identity())
        self.act = act()

    def forward(self, x):
        return self.act(self.body(x) + self.short(x))


def make_stage(block, cin, width, n, stride, **factories):
    layers = [block(cin, width, stride, **factories)]
    layers += [block(width * block.expansion, width, 1, **factories) for _ in range(n - 1)]
    return nn.Sequential(*layers)


class GNResNet(nn.Module):
    def __init__(self, layers=(3, 4, 6, 3), widths=(64, 128, 256, 512), num_classes=500,
                 block=Bottleneck, norm=Norm, act=Act):
        super().__init__()
        self.stem = nn.Sequential(
            conv3x3(3, 32, stride=2), norm(32), act(),
            conv3x3(32, 32), norm(32), act(),
            conv3x3(32, 64), norm(64), act(),
            nn.MaxPool2d(3, 2, 1),
        )
        stages, cin = [], 64
        for i, (n, w) in enumerate(zip(layers, widths)):
            stages.append(make_stage(block, cin, w, n, 1 if i == 0 else 2, norm=norm, act=act))
            cin = w * block.expansion
        self.stages = nn.Sequential(*stages)
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x):
        x = self.stages(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class Crops(Dataset):
    def __len__(self):
        return 96 * 6

    def __getitem__(self, i):
        return torch.randn(3, 192, 192), i % 500


model = GNResNet(layers=(3, 4, 6, 3), norm=partial(nn.GroupNorm, 16, eps=1e-5)).cuda()
optimizer = torch.optim.RAdam(model.parameters(), lr=1e-3, weight_decay=1e-4, decoupled_weight_decay=True)
loader = DataLoader(Crops(), batch_size=96, shuffle=True, num_workers=2)
for epoch in range(1):
    for step, (x, y) in enumerate(loader):
        x, y = x.cuda(), y.cuda()
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_value_(model.parameters(), 1.0)
        optimizer.step()
        print(f"[{epoch}:{step}] {loss.item():.4f}")
