# A model the estimator cannot read (a timm name it does not know): no figure, the reason instead.
import timm
import torch

MODEL = "my_private_net_v7"
model = timm.create_model(MODEL, num_classes=10).cuda()
opt = torch.optim.AdamW(model.parameters())
for x, y in loader:
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda()).backward()
    opt.step()
