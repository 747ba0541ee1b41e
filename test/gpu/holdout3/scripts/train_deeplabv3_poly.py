"""DeepLabV3-ResNet50 (output stride 8, aux head) on Cityscapes-style crops; poly LR, SGD."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from torchvision.models.segmentation import deeplabv3_resnet50


class Opts:
    num_classes = 19
    crop_size = 512
    batch_size = 8
    lr = 0.01
    momentum = 0.9
    weight_decay = 1e-4
    total_itrs = 6
    aux_weight = 0.5
    ignore_index = 255


class FakeCityscapes(Dataset):
    def __init__(self, n, crop, num_classes):
        self.n, self.crop, self.num_classes = n, crop, num_classes

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        image = torch.randn(3, self.crop, self.crop)
        target = torch.randint(0, self.num_classes, (self.crop, self.crop))
        target[torch.rand(self.crop, self.crop) < 0.1] = 255   # void
        return image, target


def main(opts=Opts):
    device = torch.device("cuda")
    model = deeplabv3_resnet50(weights=None, weights_backbone=None, num_classes=opts.num_classes, aux_loss=True)
    model.to(device)

    optimizer = torch.optim.SGD(params=[
        {"params": model.backbone.parameters(), "lr": 0.1 * opts.lr},
        {"params": model.classifier.parameters(), "lr": opts.lr},
        {"params": model.aux_classifier.parameters(), "lr": opts.lr},
    ], lr=opts.lr, momentum=opts.momentum, weight_decay=opts.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda it: (1 - it / opts.total_itrs) ** 0.9)
    criterion = nn.CrossEntropyLoss(ignore_index=opts.ignore_index, reduction="mean")

    loader = DataLoader(FakeCityscapes(opts.batch_size * opts.total_itrs, opts.crop_size, opts.num_classes),
                        batch_size=opts.batch_size, shuffle=True, num_workers=2, drop_last=True)
    cur_itrs = 0
    model.train()
    while True:
        for images, labels in loader:
            cur_itrs += 1
            images = images.to(device, dtype=torch.float32)
            labels = labels.to(device, dtype=torch.long)
            optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                outputs = model(images)
                loss = criterion(outputs["out"], labels) + opts.aux_weight * criterion(outputs["aux"], labels)
            loss.backward()
            optimizer.step()
            scheduler.step()
            print("Itrs %d/%d, Loss=%f" % (cur_itrs, opts.total_itrs, loss.item()))
            if cur_itrs >= opts.total_itrs:
                print("peak %.2f GiB" % (torch.cuda.max_memory_allocated() / 2 ** 30))
                return


if __name__ == "__main__":
    main()
