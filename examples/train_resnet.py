"""Train a ResNet-50 classifier on an ImageFolder dataset with SGD and momentum.

    python examples/train_resnet.py /path/to/imagenet-style/folder
"""
import sys

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms

root = sys.argv[1] if len(sys.argv) > 1 else "data"
device = "cuda"

train_tf = transforms.Compose([
    transforms.RandomResizedCrop(224),
    transforms.RandomHorizontalFlip(),
    transforms.ToTensor(),
    transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
])
eval_tf = transforms.Compose([
    transforms.Resize(256),
    transforms.CenterCrop(224),
    transforms.ToTensor(),
    transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
])
train_set = datasets.ImageFolder(f"{root}/train", train_tf)
val_set = datasets.ImageFolder(f"{root}/val", eval_tf)
train_loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=8, pin_memory=True, drop_last=True)
val_loader = DataLoader(val_set, batch_size=64, num_workers=8, pin_memory=True)

model = models.resnet50(num_classes=len(train_set.classes)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=90)

for epoch in range(90):
    model.train()
    for step, (images, labels) in enumerate(train_loader):
        images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
    scheduler.step()

    model.eval()
    correct = 0
    with torch.no_grad():
        for images, labels in val_loader:
            logits = model(images.to(device, non_blocking=True))
            correct += (logits.argmax(1).cpu() == labels).sum().item()
    print(f"epoch {epoch} top-1 {correct / len(val_set):.3f}")

torch.save(model.state_dict(), "resnet50.pt")
