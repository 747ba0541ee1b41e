"""R3D-18 style action recognition on (synthetic) Kinetics clips.

A backbone class builds the stem and the four stages; the classifier subclasses it and adds the head.
"""
import random
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

NUM_CLASSES = 400
CLIP_LEN = 16          # frames per clip
CROP = 112
BATCH_SIZE = 32
MAX_STEPS = 6
BASE_LR = 0.01
LR = BASE_LR * BATCH_SIZE / 8
WIDTHS = (64, 128, 256, 512)
DEPTHS = (2, 2, 2, 2)


class RandomClips(Dataset):
    def __init__(self, n, clip_len, crop, num_classes):
        self.n = n
        self.clip_len = clip_len
        self.crop = crop
        self.num_classes = num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        # C x T x H x W, like torchvision's video models expect
        clip = torch.randn(3, self.clip_len, self.crop, self.crop)
        return clip, random.randrange(self.num_classes)


def conv3x3x3(cin, cout, stride=1):
    return nn.Conv3d(cin, cout, kernel_size=3, stride=stride, padding=1, bias=False)


class BasicBlock3d(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = conv3x3x3(cin, cout, stride)
        self.bn1 = nn.BatchNorm3d(cout)
        self.conv2 = conv3x3x3(cout, cout)
        self.bn2 = nn.BatchNorm3d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(
                nn.Conv3d(cin, cout, kernel_size=1, stride=stride, bias=False),
                nn.BatchNorm3d(cout),
            )

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = F.relu(self.bn1(self.conv1(x)), inplace=True)
        out = self.bn2(self.conv2(out))
        return F.relu(out + identity, inplace=True)


class VideoBackbone(nn.Module):
    """Stem + stages; subclasses decide what goes on top."""

    def __init__(self, in_channels, widths=(64, 128, 256, 512), depths=(2, 2, 2, 2)):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv3d(in_channels, widths[0], kernel_size=(3, 7, 7), stride=(1, 2, 2),
                      padding=(1, 3, 3), bias=False),
            nn.BatchNorm3d(widths[0]),
            nn.ReLU(inplace=True),
        )
        stages = []
        cin = widths[0]
        for i, (w, d) in enumerate(zip(widths, depths)):
            blocks = []
            for j in range(d):
                stride = 2 if (i > 0 and j == 0) else 1
                blocks.append(BasicBlock3d(cin, w, stride))
                cin = w
            stages.append(nn.Sequential(*blocks))
        self.stages = nn.Sequential(*stages)
        self.num_features = cin

    def forward_features(self, x):
        return self.stages(self.stem(x))


class VideoClassifier(VideoBackbone):
    def __init__(self, num_classes, dropout=0.5, **kwargs):
        super().__init__(3, **kwargs)
        self.pool = nn.AdaptiveAvgPool3d(1)
        self.dropout = nn.Dropout(dropout)
        self.fc = nn.Linear(self.num_features, num_classes)

    def forward(self, x):
        x = self.forward_features(x)
        x = self.pool(x).flatten(1)
        return self.fc(self.dropout(x))


def main():
    device = torch.device("cuda")
    model = VideoClassifier(NUM_CLASSES, widths=WIDTHS, depths=DEPTHS).to(device)
    print("params: %.1fM" % (sum(p.numel() for p in model.parameters()) / 1e6))

    loader = DataLoader(RandomClips(BATCH_SIZE * MAX_STEPS, CLIP_LEN, CROP, NUM_CLASSES),
                        batch_size=BATCH_SIZE, shuffle=True, num_workers=2, drop_last=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9, nesterov=True, weight_decay=1e-4)
    scaler = torch.amp.GradScaler("cuda", init_scale=2.0 ** 10)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)

    model.train()
    step = 0
    t0 = time.time()
    while step < MAX_STEPS:
        for clips, labels in loader:
            clips = clips.to(device, non_blocking=True)
            labels = labels.to(device, non_blocking=True)
            with torch.autocast(device_type="cuda", dtype=torch.float16):
                logits = model(clips)
                loss = criterion(logits, labels)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            step += 1
            print(f"step {step} loss {loss.item():.4f} scale {scaler.get_scale():.0f} ({time.time() - t0:.1f}s)")
            if step >= MAX_STEPS:
                break
    print("max allocated %.2f GiB" % (torch.cuda.max_memory_allocated() / 2 ** 30))


if __name__ == "__main__":
    main()
