# ResNet-9 (DAWNBench style) on 128px Imagenette crops, Accelerate + fp16.
import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate import Accelerator
from torch.utils.data import DataLoader, Dataset


def conv_bn(c_in, c_out, pool=False):
    layers = [nn.Conv2d(c_in, c_out, kernel_size=3, padding=1, bias=False),
              nn.BatchNorm2d(c_out),
              nn.ReLU(inplace=True)]
    if pool:
        layers.append(nn.MaxPool2d(2))
    return nn.Sequential(*layers)


class Residual(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.res1 = conv_bn(channels, channels)
        self.res2 = conv_bn(channels, channels)

    def forward(self, x):
        return x + self.res2(self.res1(x))


class ResNet9(nn.Module):
    def __init__(self, in_channels, num_classes):
        super().__init__()
        self.prep = conv_bn(in_channels, 64)
        self.layer1 = nn.Sequential(conv_bn(64, 128, pool=True), Residual(128))
        self.layer2 = conv_bn(128, 256, pool=True)
        self.layer3 = nn.Sequential(conv_bn(256, 512, pool=True), Residual(512))
        self.classifier = nn.Sequential(nn.AdaptiveMaxPool2d(1), nn.Flatten(), nn.Dropout(0.2),
                                        nn.Linear(512, num_classes))

    def forward(self, x):
        x = self.prep(x)
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.layer3(x)
        return self.classifier(x)


class Imagenette(Dataset):
    def __init__(self, n, size=128):
        self.n, self.size = n, size

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.size, self.size), i % 10


def main(batch_size=192, epochs=1, lr=1e-3, image_size=128):
    accelerator = Accelerator(mixed_precision="fp16")
    model = ResNet9(3, 10)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=1e-4)
    train_dl = DataLoader(Imagenette(batch_size * 5, image_size), batch_size=batch_size, shuffle=True)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=lr * 10, epochs=epochs,
                                                    steps_per_epoch=len(train_dl))
    model, optimizer, train_dl, scheduler = accelerator.prepare(model, optimizer, train_dl, scheduler)

    for epoch in range(epochs):
        model.train()
        for i, (images, labels) in enumerate(train_dl):
            out = model(images)
            loss = F.cross_entropy(out, labels)
            accelerator.backward(loss)
            accelerator.clip_grad_norm_(model.parameters(), 0.1)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            accelerator.print(f"epoch {epoch} batch {i} loss {loss.item():.3f}")


if __name__ == "__main__":
    main()
