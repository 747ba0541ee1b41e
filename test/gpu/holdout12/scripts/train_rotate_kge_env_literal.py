"""RotatE knowledge-graph embeddings with self-adversarial negative sampling.

Hyper-parameters come from one environment variable holding a Python dict literal, e.g.
    KGE_HPARAMS="{'num_entities': 500000, 'dim': 500}" python train_rotate_kge_env_literal.py
"""
import ast
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

DEFAULTS = {
    "num_entities": 1_000_000,
    "num_relations": 1_000,
    "dim": 256,            # complex dim: entity vectors hold 2 * dim reals
    "gamma": 12.0,
    "batch_size": 1024,
    "neg_size": 256,
    "adv_temperature": 1.0,
    "lr": 1e-4,
    "steps": 6,
}
HP = {**DEFAULTS, **ast.literal_eval(os.environ.get("KGE_HPARAMS", "{}"))}


class RotatE(nn.Module):
    def __init__(self, num_entities, num_relations, dim, gamma):
        super().__init__()
        self.dim = dim
        self.gamma = gamma
        self.epsilon = 2.0
        self.embedding_range = (gamma + self.epsilon) / dim
        self.entity = nn.Parameter(torch.empty(num_entities, dim * 2).uniform_(-self.embedding_range,
                                                                                self.embedding_range))
        self.relation = nn.Parameter(torch.empty(num_relations, dim).uniform_(-self.embedding_range,
                                                                              self.embedding_range))

    def score(self, head, rel, tail):
        # head: (B, 1 or N, 2d), rel: (B, 1, d), tail: (B, N or 1, 2d)
        re_h, im_h = head.chunk(2, dim=-1)
        re_t, im_t = tail.chunk(2, dim=-1)
        phase = rel / (self.embedding_range / math.pi)
        re_r, im_r = torch.cos(phase), torch.sin(phase)
        re_s = re_h * re_r - im_h * im_r - re_t
        im_s = re_h * im_r + im_h * re_r - im_t
        dist = torch.stack([re_s, im_s], dim=0).norm(dim=0).sum(dim=-1)
        return self.gamma - dist

    def forward(self, triples, negatives):
        h = self.entity[triples[:, 0]].unsqueeze(1)
        r = self.relation[triples[:, 1]].unsqueeze(1)
        t = self.entity[triples[:, 2]].unsqueeze(1)
        neg_t = self.entity[negatives]                     # (B, N, 2d)
        pos_score = self.score(h, r, t)                    # (B, 1)
        neg_score = self.score(h, r, neg_t)                # (B, N)
        return pos_score, neg_score


def main():
    dev = torch.device("cuda")
    model = RotatE(HP["num_entities"], HP["num_relations"], HP["dim"], HP["gamma"]).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=HP["lr"])
    print({k: v for k, v in HP.items()})
    for step in range(HP["steps"]):
        triples = torch.stack([
            torch.randint(0, HP["num_entities"], (HP["batch_size"],)),
            torch.randint(0, HP["num_relations"], (HP["batch_size"],)),
            torch.randint(0, HP["num_entities"], (HP["batch_size"],)),
        ], dim=1).to(dev)
        negatives = torch.randint(0, HP["num_entities"], (HP["batch_size"], HP["neg_size"]), device=dev)
        pos, neg = model(triples, negatives)
        weights = F.softmax(neg * HP["adv_temperature"], dim=1).detach()
        neg_loss = -(weights * F.logsigmoid(-neg)).sum(dim=1).mean()
        pos_loss = -F.logsigmoid(pos).mean()
        loss = (pos_loss + neg_loss) / 2
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step}: loss {loss.item():.4f}")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
