"""Fine-tune only the last ResNet stage and the classifier (discriminative learning rates)."""
import yaml

import torch
import torch.nn as nn
import torchvision
from torchvision import transforms
from torch.utils.data import DataLoader

cfg = {"batch_size": 32, "lr": 1e-2, "epochs": 12, "num_classes": 196, "data": "data/stanford_cars"}
try:
    cfg.update(yaml.safe_load(open("config.yaml")))
except FileNotFoundError:
    pass

tf_train = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor()])
tf_val = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor()])
train_ds = torchvision.datasets.ImageFolder(cfg["data"] + "/train", tf_train)
val_ds = torchvision.datasets.ImageFolder(cfg["data"] + "/test", tf_val)
train_loader = DataLoader(train_ds, batch_size=cfg["batch_size"], shuffle=True, num_workers=6)
val_loader = DataLoader(val_ds, batch_size=cfg["batch_size"] * 4, num_workers=6)

device = "cuda"
model = torchvision.models.resnet50(weights=torchvision.models.ResNet50_Weights.IMAGENET1K_V2)
model.fc = nn.Linear(model.fc.in_features, cfg["num_classes"])
model = model.to(device)

optimizer = torch.optim.SGD(  # expect: OOM114
    [
        {"params": model.layer4.parameters(), "lr": cfg["lr"] * 0.1},
        {"params": model.fc.parameters()},
    ],
    lr=cfg["lr"],
    momentum=0.9,
    weight_decay=1e-4,
)
scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[6, 10], gamma=0.1)
criterion = nn.CrossEntropyLoss()

for epoch in range(cfg["epochs"]):
    model.train()
    running_loss = torch.zeros((), device=device)
    for images, labels in train_loader:
        images, labels = images.to(device), labels.to(device)
        logits = model(images)
        loss = criterion(logits, labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        running_loss += loss.detach()
    scheduler.step()

    model.eval()
    correct = 0
    with torch.no_grad():
        for images, labels in val_loader:
            preds = model(images.to(device)).argmax(dim=1)
            correct += (preds.cpu() == labels).sum().item()
    print(f"epoch {epoch}: train loss {(running_loss / len(train_loader)).item():.4f} "
          f"val acc {correct / len(val_ds):.4f}")
