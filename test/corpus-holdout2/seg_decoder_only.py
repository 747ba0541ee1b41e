"""Semantic segmentation on Pascal VOC: pretrained ResNet-50 encoder, train only the decoder."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torchvision.datasets import VOCSegmentation
import torchvision.transforms.v2 as T
from torch.utils.data import DataLoader

NUM_CLASSES = 21
LR = 1e-3
EPOCHS = 40
BATCH_SIZE = 16


def conv_bn(c_in, c_out):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True))


class SegModel(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        backbone = torchvision.models.resnet50(weights="IMAGENET1K_V2")
        self.encoder = nn.Sequential(*list(backbone.children())[:-2])
        self.decoder = nn.Sequential(conv_bn(2048, 512), conv_bn(512, 256), nn.Conv2d(256, num_classes, 1))

    def forward(self, x):
        h, w = x.shape[-2:]
        # the encoder is pretrained; don't build its graph
        with torch.no_grad():
            feats = self.encoder(x)
        return F.interpolate(self.decoder(feats), size=(h, w), mode="bilinear", align_corners=False)


transform = T.Compose([
    T.RandomResizedCrop(384, scale=(0.5, 2.0), antialias=True),
    T.RandomHorizontalFlip(),
    T.ToImage(),
    T.ToDtype(torch.float32, scale=True),
    T.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
])
train_set = VOCSegmentation("data/voc", year="2012", image_set="train", download=False, transforms=transform)
train_loader = DataLoader(train_set, batch_size=BATCH_SIZE, shuffle=True, num_workers=8, drop_last=True)

model = SegModel(NUM_CLASSES).cuda()
optimizer = torch.optim.Adam(model.decoder.parameters(), lr=LR)  # expect: OOM114
scheduler = torch.optim.lr_scheduler.PolynomialLR(optimizer, total_iters=EPOCHS * len(train_loader), power=0.9)

for epoch in range(EPOCHS):
    model.train()
    running = 0.0
    for img, mask in train_loader:
        img = img.cuda(non_blocking=True)
        mask = mask.squeeze(1).long().cuda(non_blocking=True)
        out = model(img)
        loss = F.cross_entropy(out, mask, ignore_index=255)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        running += loss.item()
    print(f"epoch {epoch}: loss {running / len(train_loader):.4f}")

torch.save(model.state_dict(), "seg_decoder_only.pth")
