"""Two-tower retrieval model (user tower / item tower) trained with an in-batch sampled softmax.

Users are described by bags of past item ids and categorical features (nn.EmbeddingBag, mode="mean",
offsets-style input); items by id + bag of tag ids. Batch 8192 -> an 8192 x 8192 logit matrix per step.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

N_ITEMS = 2_000_000
N_TAGS = 50_000
N_USER_FEATS = 100_000
EMB = 128
TOWER = [1024, 512, 256]
BATCH = 8192
HIST_LEN = 50
TAGS_PER_ITEM = 8
TEMP = 0.05
STEPS = 5


def mlp(d_in, sizes):
    layers = []
    for d in sizes[:-1]:
        layers += [nn.Linear(d_in, d), nn.LayerNorm(d), nn.ReLU()]
        d_in = d
    layers.append(nn.Linear(d_in, sizes[-1]))
    return nn.Sequential(*layers)


class UserTower(nn.Module):
    def __init__(self, item_bag):
        super().__init__()
        self.history = item_bag                                          # shared with the item tower
        self.feats = nn.EmbeddingBag(N_USER_FEATS, EMB, mode="sum")
        self.net = mlp(2 * EMB, TOWER)

    def forward(self, hist, feat_ids, feat_offsets):
        h = self.history(hist)                                           # 2D input: one bag per row
        f = self.feats(feat_ids, feat_offsets)
        return F.normalize(self.net(torch.cat([h, f], dim=1)), dim=-1)


class ItemTower(nn.Module):
    def __init__(self, item_bag):
        super().__init__()
        self.item_bag = item_bag
        self.tags = nn.EmbeddingBag(N_TAGS, EMB, mode="mean")
        self.net = mlp(2 * EMB, TOWER)

    def forward(self, item_ids, tag_ids):
        i = self.item_bag(item_ids.unsqueeze(1))
        t = self.tags(tag_ids)
        return F.normalize(self.net(torch.cat([i, t], dim=1)), dim=-1)


class TwoTower(nn.Module):
    def __init__(self):
        super().__init__()
        item_bag = nn.EmbeddingBag(N_ITEMS, EMB, mode="mean")
        self.user = UserTower(item_bag)
        self.item = ItemTower(item_bag)

    def forward(self, batch):
        u = self.user(batch["hist"], batch["feat_ids"], batch["feat_offsets"])
        v = self.item(batch["item"], batch["tags"])
        return u @ v.t() / TEMP


def fake_batch(device):
    n_feats = torch.randint(1, 20, (BATCH,))
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), n_feats.cumsum(0)[:-1]])
    return {
        "hist": torch.randint(0, N_ITEMS, (BATCH, HIST_LEN), device=device),
        "feat_ids": torch.randint(0, N_USER_FEATS, (int(n_feats.sum()),), device=device),
        "feat_offsets": offsets.to(device),
        "item": torch.randint(0, N_ITEMS, (BATCH,), device=device),
        "tags": torch.randint(0, N_TAGS, (BATCH, TAGS_PER_ITEM), device=device),
    }


model = TwoTower().cuda()
print("params:", sum(p.numel() for p in model.parameters()))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
labels = torch.arange(BATCH, device="cuda")
for step in range(STEPS):
    batch = fake_batch("cuda")
    logits = model(batch)
    loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step}: loss {loss.item():.4f}")
