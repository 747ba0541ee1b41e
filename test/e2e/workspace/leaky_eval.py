# Keeps every batch's logits (with their graph) in a list: memory grows by one batch's logits per step.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 1000)).cuda()
train = DataLoader(TensorDataset(torch.randn(640, 1024), torch.randint(0, 1000, (640,))), batch_size=64)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
history = []
for x, y in train:
    opt.zero_grad()
    out = model(x.cuda())
    nn.functional.cross_entropy(out, y.cuda()).backward()
    opt.step()
    history.append(out)
