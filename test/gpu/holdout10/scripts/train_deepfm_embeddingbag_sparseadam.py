"""DeepFM CTR model over 26 multi-hot categorical fields (Criteo-like, hashed ids).

Embeddings are nn.EmbeddingBag(sparse=True) trained with SparseAdam; the dense part (DNN + numeric
projection) with Adagrad. Override any default from the command line:  python train_deepfm_... batch_size=8192
"""
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

DEFAULTS = {
    "batch_size": 16384,
    "bag_size": 3,          # ids per field per example (multi-hot)
    "embed_dim": 32,
    "num_dense": 13,
    "dnn": "400,400,400",
    "steps": 8,
    "lr_sparse": 1e-3,
    "lr_dense": 1e-2,
}
# hashed vocabulary size of each of the 26 fields
FIELD_SIZES = [1_000_000] * 8 + [500_000] * 8 + [100_000] * 6 + [10_000] * 4


def parse_overrides(argv):
    cfg = dict(DEFAULTS)
    for arg in argv:
        key, value = arg.split("=", 1)
        cfg[key] = type(DEFAULTS[key])(value)
    return cfg


class DeepFM(nn.Module):
    def __init__(self, field_sizes, embed_dim, num_dense, hidden):
        super().__init__()
        self.first_order = nn.ModuleList([nn.EmbeddingBag(n, 1, mode="sum", sparse=True) for n in field_sizes])
        self.second_order = nn.ModuleList([nn.EmbeddingBag(n, embed_dim, mode="mean", sparse=True)
                                           for n in field_sizes])
        self.dense_proj = nn.Linear(num_dense, embed_dim)
        layers, d = [], (len(field_sizes) + 1) * embed_dim
        for h in hidden:
            layers += [nn.Linear(d, h), nn.BatchNorm1d(h), nn.ReLU(), nn.Dropout(0.2)]
            d = h
        layers.append(nn.Linear(d, 1))
        self.dnn = nn.Sequential(*layers)
        self.bias = nn.Parameter(torch.zeros(1))
        for emb in list(self.first_order) + list(self.second_order):
            nn.init.normal_(emb.weight, std=0.01)

    def forward(self, sparse_ids, dense):
        # sparse_ids: (B, F, bag) ; dense: (B, num_dense)
        fo = torch.cat([emb(sparse_ids[:, i]) for i, emb in enumerate(self.first_order)], dim=1).sum(1)
        v = torch.stack([emb(sparse_ids[:, i]) for i, emb in enumerate(self.second_order)]
                        + [self.dense_proj(dense)], dim=1)             # (B, F+1, k)
        fm = 0.5 * (v.sum(1).pow(2) - v.pow(2).sum(1)).sum(1)
        deep = self.dnn(v.flatten(1)).squeeze(1)
        return self.bias + fo + fm + deep


def random_batch(cfg, device):
    B = cfg["batch_size"]
    ids = torch.stack([torch.randint(0, n, (B, cfg["bag_size"]), device=device) for n in FIELD_SIZES], dim=1)
    dense = torch.randn(B, cfg["num_dense"], device=device).abs().log1p()
    y = (torch.rand(B, device=device) < 0.25).float()
    return ids, dense, y


def main():
    cfg = parse_overrides(sys.argv[1:])
    device = torch.device("cuda")
    model = DeepFM(FIELD_SIZES, cfg["embed_dim"], cfg["num_dense"],
                   [int(h) for h in cfg["dnn"].split(",")]).to(device)
    sparse_params = [p for n, p in model.named_parameters() if n.startswith(("first_order", "second_order"))]
    dense_params = [p for n, p in model.named_parameters() if not n.startswith(("first_order", "second_order"))]
    print(f"sparse params {sum(p.numel() for p in sparse_params):,}  dense {sum(p.numel() for p in dense_params):,}")
    opt_sparse = torch.optim.SparseAdam(sparse_params, lr=cfg["lr_sparse"])
    opt_dense = torch.optim.Adagrad(dense_params, lr=cfg["lr_dense"], initial_accumulator_value=1e-8)

    t0 = time.time()
    for step in range(cfg["steps"]):
        ids, dense, y = random_batch(cfg, device)
        logits = model(ids, dense)
        loss = F.binary_cross_entropy_with_logits(logits, y)
        opt_sparse.zero_grad()
        opt_dense.zero_grad()
        loss.backward()
        opt_sparse.step()
        opt_dense.step()
        print(f"step {step} logloss {loss.item():.4f}")
    print(f"{time.time() - t0:.1f}s  peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
