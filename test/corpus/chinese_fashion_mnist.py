# -*- coding: utf-8 -*-
"""
FashionMNIST 分类实验（深度学习课程 实验三）

作者：某同学
说明：
    1. 使用两层卷积 + 全连接的简单 CNN
    2. 每个 epoch 结束后在测试集上评估，并保存预测结果用于画混淆矩阵
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

# ---------------- 超参数 ----------------
BATCH_SIZE = 64
EPOCHS = 15
LR = 0.01
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class SimpleCNN(nn.Module):
    """两层卷积网络"""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.fc1 = nn.Linear(64 * 7 * 7, 256)
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)   # 28 -> 14
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)   # 14 -> 7
        x = x.flatten(1)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


# ---------------- 数据 ----------------
transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.2860,), (0.3530,))])
train_set = datasets.FashionMNIST("./data", train=True, download=True, transform=transform)
test_set = datasets.FashionMNIST("./data", train=False, download=True, transform=transform)
train_loader = DataLoader(train_set, batch_size=BATCH_SIZE, shuffle=True)
test_loader = DataLoader(test_set, batch_size=1000)

model = SimpleCNN().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)


def train(epoch):
    """训练一个 epoch"""
    model.train()
    # 梯度清零放在循环外面了（后面发现 loss 不下降……）
    optimizer.zero_grad()
    for i, (images, labels) in enumerate(train_loader):
        images, labels = images.to(device), labels.to(device)
        output = model(images)
        loss = F.cross_entropy(output, labels)
        loss.backward()
        optimizer.step()  # expect: OOM103
        if i % 100 == 0:
            print(f"第 {epoch} 轮 [{i * len(images)}/{len(train_loader.dataset)}]  损失: {loss.item():.4f}")


def test():
    """在测试集上评估，返回准确率和所有预测的 logits"""
    model.eval()
    correct = 0
    all_outputs = []
    for images, labels in test_loader:
        images, labels = images.to(device), labels.to(device)
        output = model(images)  # expect: OOM104
        all_outputs.append(output)  # expect: OOM101
        correct += (output.argmax(dim=1) == labels).sum().item()
    acc = correct / len(test_loader.dataset)
    print(f"测试集准确率: {acc:.4f}")
    return acc, all_outputs


if __name__ == "__main__":
    best_acc = 0.0
    for epoch in range(1, EPOCHS + 1):
        train(epoch)
        acc, outputs_list = test()
        scheduler.step()
        if acc > best_acc:
            best_acc = acc
            torch.save(model.state_dict(), "best_fashion_cnn.pt")
    print("训练结束 🎉 最好准确率:", best_acc)
