#!/usr/bin/env python
# usage: python train_googlenet_aux_sysargv.py [arch] [batch] [num_classes]
# quick and dirty: positional args from sys.argv with defaults
import sys
import torch
import torch.nn as nn
import torchvision.models as models

arch = sys.argv[1] if len(sys.argv) > 1 else "googlenet"
bs = int(sys.argv[2]) if len(sys.argv) > 2 else 256
ncls = int(sys.argv[3]) if len(sys.argv) > 3 else 200
steps = 5

net = getattr(models, arch)(weights=None, aux_logits=True, num_classes=ncls, init_weights=True)
net.cuda()
crit = nn.CrossEntropyLoss()
opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9, weight_decay=2e-4)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=8, gamma=0.96)

X = torch.randn(bs * 2, 3, 224, 224)
Y = torch.randint(0, ncls, (bs * 2,))

net.train()
for it in range(steps):
    idx = torch.randint(0, X.shape[0], (bs,))
    x, y = X[idx].cuda(), Y[idx].cuda()
    out = net(x)
    # in train mode googlenet returns (logits, aux2, aux1)
    loss = crit(out.logits, y) + 0.3 * (crit(out.aux_logits1, y) + crit(out.aux_logits2, y))
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    print(it, loss.item())
