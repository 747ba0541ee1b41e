"""Linear classification on frozen MoCo v2 features (after facebookresearch/moco main_lincls.py)."""
import argparse
import os
import time

import torch
import torch.nn as nn
import torchvision.datasets as datasets
import torchvision.models as models
import torchvision.transforms as transforms

parser = argparse.ArgumentParser(description="MoCo linear classification")
parser.add_argument("data", metavar="DIR")
parser.add_argument("--pretrained", default="moco_v2_800ep_pretrain.pth.tar", type=str)
parser.add_argument("--epochs", default=100, type=int)
parser.add_argument("-b", "--batch-size", default=256, type=int, dest="batch_size")
parser.add_argument("--lr", default=30.0, type=float)
parser.add_argument("-j", "--workers", default=32, type=int)


def train(train_loader, model, criterion, optimizer, epoch):
    """
    Switch to eval mode:
    Under the protocol of linear classification on frozen features/models,
    it is not legitimate to change any part of the pre-trained model.
    BatchNorm in train mode may revise running mean/std (even if it receives
    no gradient), which are part of the model parameters too.
    """
    model.eval()
    end = time.time()
    for i, (images, target) in enumerate(train_loader):
        images = images.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        output = model(images)
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i % 100 == 0:
            print(f"Epoch [{epoch}][{i}/{len(train_loader)}] loss {loss.item():.4f} ({time.time() - end:.1f}s)")
            end = time.time()


def validate(val_loader, model, criterion):
    model.eval()
    correct = 0
    with torch.no_grad():
        for images, target in val_loader:
            images = images.cuda(non_blocking=True)
            target = target.cuda(non_blocking=True)
            output = model(images)
            correct += (output.argmax(1) == target).sum().item()
    return 100.0 * correct / len(val_loader.dataset)


def main():
    args = parser.parse_args()
    model = models.resnet50()

    # freeze all layers but the last fc
    for name, param in model.named_parameters():
        if name not in ["fc.weight", "fc.bias"]:
            param.requires_grad = False
    model.fc.weight.data.normal_(mean=0.0, std=0.01)
    model.fc.bias.data.zero_()

    if os.path.isfile(args.pretrained):
        checkpoint = torch.load(args.pretrained, map_location="cpu")
        state_dict = checkpoint["state_dict"]
        for k in list(state_dict.keys()):
            if k.startswith("module.encoder_q") and not k.startswith("module.encoder_q.fc"):
                state_dict[k[len("module.encoder_q."):]] = state_dict[k]
            del state_dict[k]
        msg = model.load_state_dict(state_dict, strict=False)
        assert set(msg.missing_keys) == {"fc.weight", "fc.bias"}

    model = model.cuda()
    criterion = nn.CrossEntropyLoss().cuda()
    optimizer = torch.optim.SGD(model.fc.parameters(), args.lr, momentum=0.9, weight_decay=0.0)

    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train_dataset = datasets.ImageFolder(os.path.join(args.data, "train"), transforms.Compose([
        transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor(), normalize]))
    val_dataset = datasets.ImageFolder(os.path.join(args.data, "val"), transforms.Compose([
        transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(), normalize]))
    train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=args.batch_size, shuffle=True,
                                               num_workers=args.workers, pin_memory=True)
    val_loader = torch.utils.data.DataLoader(val_dataset, batch_size=256, num_workers=args.workers, pin_memory=True)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[60, 80], gamma=0.1)

    best_acc1 = 0.0
    for epoch in range(args.epochs):
        train(train_loader, model, criterion, optimizer, epoch)
        acc1 = validate(val_loader, model, criterion)
        scheduler.step()
        best_acc1 = max(acc1, best_acc1)
        print(f"epoch {epoch}: acc@1 {acc1:.2f} (best {best_acc1:.2f})")


if __name__ == "__main__":
    main()
