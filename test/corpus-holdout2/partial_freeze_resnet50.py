"""Fine-tune layer4 + fc of an ImageNet ResNet-50 on iNaturalist mini; earlier stages are frozen.

python partial_freeze_resnet50.py --gpu 2
"""
import argparse
import os

parser = argparse.ArgumentParser()
parser.add_argument("--gpu", default="0", help="which GPU(s) to expose")
parser.add_argument("--data", default="data/inat_mini")
parser.add_argument("--epochs", type=int, default=20)
parser.add_argument("--batch_size", type=int, default=96)
parser.add_argument("--num_classes", type=int, default=1010)
args = parser.parse_args()
os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu

import torch
import torch.nn as nn
import torchvision
from torchvision import transforms
from torch.utils.data import DataLoader

device = torch.device("cuda")
tf_train = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor()])
tf_val = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor()])
train_loader = DataLoader(torchvision.datasets.ImageFolder(os.path.join(args.data, "train"), tf_train),
                          batch_size=args.batch_size, shuffle=True, num_workers=8, pin_memory=True)
val_loader = DataLoader(torchvision.datasets.ImageFolder(os.path.join(args.data, "val"), tf_val),
                        batch_size=256, num_workers=8, pin_memory=True)

model = torchvision.models.resnet50(weights="IMAGENET1K_V2")
for name, param in model.named_parameters():
    if not name.startswith(("layer4", "fc")):
        param.requires_grad = False
model.fc = nn.Linear(model.fc.in_features, args.num_classes)
model = model.to(device)

# Adam only keeps state for parameters that receive gradients, so passing all of them is fine
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.05)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
criterion = nn.CrossEntropyLoss(label_smoothing=0.1)

for epoch in range(args.epochs):
    model.train()
    for images, labels in train_loader:
        images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = criterion(model(images), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    scheduler.step()

    model.eval()
    correct = 0
    with torch.inference_mode():
        for images, labels in val_loader:
            correct += (model(images.to(device)).argmax(1).cpu() == labels).sum().item()
    print(f"epoch {epoch}: val acc {correct / len(val_loader.dataset):.4f}")
