"""Transfer learning: EfficientNet-B3 backbone frozen, only a new 37-class head is trained (pets-style data)."""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torchvision import models


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--img-size", type=int, default=300)
    p.add_argument("--num-classes", type=int, default=37)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--epochs", type=int, default=2)
    return p.parse_args()


def build_model(num_classes):
    model = models.efficientnet_b3(weights=None)   # would be EfficientNet_B3_Weights.IMAGENET1K_V1 online
    for param in model.features.parameters():
        param.requires_grad = False
    in_features = model.classifier[1].in_features
    model.classifier = nn.Sequential(
        nn.Dropout(p=0.3, inplace=True),
        nn.Linear(in_features, 512),
        nn.ReLU(inplace=True),
        nn.Linear(512, num_classes),
    )
    return model


def main():
    args = parse_args()
    device = torch.device("cuda")
    model = build_model(args.num_classes).to(device)
    n = args.batch_size * 4
    data = TensorDataset(torch.randn(n, 3, args.img_size, args.img_size), torch.randint(0, args.num_classes, (n,)))
    loader = DataLoader(data, batch_size=args.batch_size, shuffle=True)

    trainable = [p for p in model.parameters() if p.requires_grad]
    print("trainable params:", sum(p.numel() for p in trainable))
    optimizer = torch.optim.AdamW(trainable, lr=args.lr, weight_decay=0.01)
    criterion = nn.CrossEntropyLoss()

    for epoch in range(args.epochs):
        model.train()
        running = 0.0
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            optimizer.zero_grad()
            outputs = model(images)
            loss = criterion(outputs, labels)
            loss.backward()
            optimizer.step()
            running += loss.item() * images.size(0)
        print(f"epoch {epoch}: train loss {running / n:.4f}")

        model.eval()
        correct = 0
        with torch.no_grad():
            for images, labels in loader:
                preds = model(images.to(device)).argmax(dim=1)
                correct += (preds.cpu() == labels).sum().item()
        print(f"epoch {epoch}: acc {correct / n:.3f}")


if __name__ == "__main__":
    main()
