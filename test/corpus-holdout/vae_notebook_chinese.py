#!/usr/bin/env python
# coding: utf-8

# # 变分自编码器 (VAE) —— MNIST 实验笔记
# 从 `vae_mnist.ipynb` 导出, 按顺序运行即可.

# In[1]:


import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms
from torchvision.utils import make_grid, save_image

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
batch_size, latent_dim, epochs, lr = 128, 20, 20, 1e-3


# In[2]:


# 数据
train_loader = DataLoader(datasets.MNIST("data", train=True, download=True, transform=transforms.ToTensor()),
                          batch_size=batch_size, shuffle=True)
test_loader = DataLoader(datasets.MNIST("data", train=False, transform=transforms.ToTensor()),
                         batch_size=batch_size)


# In[3]:


class VAE(nn.Module):
    def __init__(self, z=latent_dim):
        super().__init__()
        self.fc1 = nn.Linear(784, 400)
        self.fc_mu = nn.Linear(400, z)
        self.fc_logvar = nn.Linear(400, z)
        self.fc3 = nn.Linear(z, 400)
        self.fc4 = nn.Linear(400, 784)

    def encode(self, x):
        h = F.relu(self.fc1(x))
        return self.fc_mu(h), self.fc_logvar(h)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        return mu + torch.randn_like(std) * std  # 重参数化技巧

    def decode(self, z):
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        return self.decode(self.reparameterize(mu, logvar)), mu, logvar


def vae_loss(recon, x, mu, logvar):
    bce = F.binary_cross_entropy(recon, x.view(-1, 784), reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())  # KL 散度
    return bce + kld


model = VAE().to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=lr)


# In[4]:


# 训练 + 每个 epoch 在测试集上算一次损失
for epoch in range(1, epochs + 1):
    model.train()
    train_loss = 0
    for x, _ in train_loader:
        x = x.to(device)
        optimizer.zero_grad()
        recon, mu, logvar = model(x)
        loss = vae_loss(recon, x, mu, logvar)
        loss.backward()
        train_loss += loss  # expect: OOM102
        optimizer.step()
    model.eval()
    test_loss = 0.0
    with torch.no_grad():
        for x, _ in test_loader:
            x = x.to(device)
            recon, mu, logvar = model(x)
            test_loss += vae_loss(recon, x, mu, logvar).item()
    print(f"epoch {epoch}: train {train_loss.item() / len(train_loader.dataset):.4f} "
          f"test {test_loss / len(test_loader.dataset):.4f}")


# In[5]:


# 从先验采样, 看看生成效果
with torch.no_grad():
    z = torch.randn(64, latent_dim, device=device)
    samples = model.decode(z).cpu()
save_image(samples.view(64, 1, 28, 28), "samples.png")


# In[6]:


# 看看重建效果: 把测试集前几个 batch 的重建图拼起来
model.eval()
recons, originals = [], []
for i, (x, _) in enumerate(test_loader):
    if i == 4:
        break
    x = x.to(device)
    recon, mu, logvar = model(x)  # expect: OOM104
    recons.append(recon.view(-1, 1, 28, 28))  # expect: OOM101
    originals.append(x)

grid = make_grid(torch.cat([torch.cat(originals)[:32], torch.cat(recons)[:32].detach()]), nrow=8)
save_image(grid, "recon.png")
