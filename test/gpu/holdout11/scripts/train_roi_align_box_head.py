"""Second-stage box head trained on fixed proposals (Fast R-CNN style), RoIAlign written in the model.

Backbone: torchvision resnet34 cut at layer3 (stride 16). Proposals come with the dataset (as if from a
precomputed RPN), 512 per image; the box head is the usual TwoMLPHead + class / box predictors.
"""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torchvision.models import resnet34
from torchvision.ops import roi_align


@dataclass
class Config:
    images_per_batch: int = 8
    image_hw: tuple = (800, 1024)
    rois_per_image: int = 512
    num_classes: int = 81  # incl. background
    pool_size: int = 7
    reduced_channels: int = 256
    representation_size: int = 1024
    lr: float = 0.02
    steps: int = 5

    @property
    def feat_stride(self) -> int:
        return 16

    @property
    def head_in_features(self) -> int:
        return self.reduced_channels * self.pool_size * self.pool_size

    @property
    def rois_per_batch(self) -> int:
        return self.images_per_batch * self.rois_per_image


class ProposalDataset(Dataset):
    def __init__(self, cfg: Config, n: int):
        self.cfg, self.n = cfg, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        h, w = self.cfg.image_hw
        img = torch.randn(3, h, w)
        r = self.cfg.rois_per_image
        xy = torch.rand(r, 2) * torch.tensor([w - 64.0, h - 64.0])
        wh = torch.rand(r, 2) * 256 + 16
        boxes = torch.cat([xy, torch.minimum(xy + wh, torch.tensor([w - 1.0, h - 1.0]))], dim=1)
        labels = torch.randint(0, self.cfg.num_classes, (r,))
        deltas = torch.randn(r, 4) * 0.1
        return img, boxes, labels, deltas


class FastRCNN(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.cfg = cfg
        net = resnet34(weights=None)
        self.stem = nn.Sequential(net.conv1, net.bn1, net.relu, net.maxpool)
        self.layer1, self.layer2, self.layer3 = net.layer1, net.layer2, net.layer3
        self.reduce = nn.Conv2d(256, cfg.reduced_channels, 1)
        self.fc6 = nn.Linear(cfg.head_in_features, cfg.representation_size)
        self.fc7 = nn.Linear(cfg.representation_size, cfg.representation_size)
        self.cls_score = nn.Linear(cfg.representation_size, cfg.num_classes)
        self.bbox_pred = nn.Linear(cfg.representation_size, cfg.num_classes * 4)

    def forward(self, images, rois):
        x = self.stem(images)
        x = self.layer3(self.layer2(self.layer1(x)))
        feats = self.reduce(x)
        pooled = roi_align(feats, rois, output_size=(self.cfg.pool_size, self.cfg.pool_size),
                           spatial_scale=1.0 / self.cfg.feat_stride, sampling_ratio=2, aligned=True)
        h = pooled.flatten(1)
        h = F.relu(self.fc6(h))
        h = F.relu(self.fc7(h))
        return self.cls_score(h), self.bbox_pred(h)


def collate(batch):
    imgs = torch.stack([b[0] for b in batch])
    # rois in (batch_index, x1, y1, x2, y2) format for roi_align
    rois = torch.cat([torch.cat([torch.full((b[1].shape[0], 1), float(i)), b[1]], dim=1) for i, b in enumerate(batch)])
    labels = torch.cat([b[2] for b in batch])
    deltas = torch.cat([b[3] for b in batch])
    return imgs, rois, labels, deltas


def main():
    cfg = Config()
    device = torch.device("cuda")
    model = FastRCNN(cfg).to(device)

    loader = DataLoader(ProposalDataset(cfg, cfg.images_per_batch * cfg.steps), batch_size=cfg.images_per_batch,
                        collate_fn=collate, num_workers=4, shuffle=True)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=cfg.lr, momentum=0.9, weight_decay=1e-4, foreach=False)
    scaler = torch.amp.GradScaler()

    model.train()
    for it, (imgs, rois, labels, deltas) in enumerate(loader):
        imgs, rois = imgs.to(device), rois.to(device)
        labels, deltas = labels.to(device), deltas.to(device)
        with torch.autocast("cuda", dtype=torch.float16):
            class_logits, box_regression = model(imgs, rois)
            loss_cls = F.cross_entropy(class_logits, labels)
            pos = torch.where(labels > 0)[0]
            box_regression = box_regression.reshape(cfg.rois_per_batch, cfg.num_classes, 4)
            loss_box = F.smooth_l1_loss(box_regression[pos, labels[pos]], deltas[pos], beta=1 / 9,
                                        reduction="sum") / labels.numel()
            loss = loss_cls + loss_box
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        print(f"it {it}: loss_cls {loss_cls.item():.4f} loss_box {loss_box.item():.4f}")


if __name__ == "__main__":
    main()
