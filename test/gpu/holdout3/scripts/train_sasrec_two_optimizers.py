# -*- coding: utf-8 -*-
# 序列推荐 SASRec：物品 embedding 表很大（300 万物品），用 SGD 单独更新；Transformer 部分用 AdamW。
# 负样本：每个 batch 共享 1024 个随机负样本（sampled softmax）。
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

NUM_ITEMS = 3_000_000
EMB_DIM = 128
MAX_SEQ = 200
N_BLOCKS = 4
N_HEADS = 4
BATCH = 256
N_NEG = 1024
STEPS = 8


class UserHistories(Dataset):
    def __init__(self, n_users):
        self.n_users = n_users

    def __len__(self):
        return self.n_users

    def __getitem__(self, u):
        seq = torch.randint(1, NUM_ITEMS, (MAX_SEQ + 1,))
        n_pad = torch.randint(0, MAX_SEQ // 2, ()).item()
        if n_pad:
            seq[-n_pad:] = 0                              # 右侧 padding（短历史）
        return seq[:-1], seq[1:]


class SASRec(nn.Module):
    def __init__(self, num_items, dim, max_len, n_blocks, n_heads, dropout=0.2):
        super().__init__()
        self.item_emb = nn.Embedding(num_items, dim, padding_idx=0)
        self.pos_emb = nn.Embedding(max_len, dim)
        layer = nn.TransformerEncoderLayer(dim, n_heads, dim_feedforward=dim * 4, dropout=dropout,
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_blocks, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.register_buffer("causal", torch.triu(torch.ones(max_len, max_len, dtype=torch.bool), 1), persistent=False)

    def forward(self, seq):
        pos = torch.arange(seq.size(1), device=seq.device)
        h = self.item_emb(seq) * (self.item_emb.embedding_dim ** 0.5) + self.pos_emb(pos)
        h = self.encoder(h, mask=self.causal[: seq.size(1), : seq.size(1)], src_key_padding_mask=seq == 0)
        return self.norm(h)


def main():
    dev = torch.device("cuda")
    model = SASRec(NUM_ITEMS, EMB_DIM, MAX_SEQ, N_BLOCKS, N_HEADS).to(dev)

    # 两个优化器：embedding 表用 SGD（无状态，省显存），其余参数用 AdamW
    emb_params = [model.item_emb.weight]
    dense_params = [p for n, p in model.named_parameters() if n != "item_emb.weight"]
    opt_sparse = torch.optim.SGD(emb_params, lr=0.5)
    opt_dense = torch.optim.AdamW(dense_params, lr=1e-3, weight_decay=0.01)

    loader = DataLoader(UserHistories(BATCH * STEPS), batch_size=BATCH, shuffle=True, num_workers=2)
    model.train()
    for step, (seq, target) in enumerate(loader):
        seq, target = seq.to(dev), target.to(dev)
        h = model(seq)                                            # B x L x D
        pos_logit = (h * model.item_emb(target)).sum(-1, keepdim=True)
        neg_ids = torch.randint(1, NUM_ITEMS, (N_NEG,), device=dev)
        neg_logit = h @ model.item_emb(neg_ids).t()               # B x L x N_NEG
        logits = torch.cat([pos_logit, neg_logit], dim=-1)
        labels = torch.zeros(logits.shape[:2], dtype=torch.long, device=dev)
        labels[target == 0] = -100                                # padding 位置不算 loss
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100)

        opt_sparse.zero_grad()
        opt_dense.zero_grad()
        loss.backward()
        opt_sparse.step()
        opt_dense.step()
        print(f"step {step} loss {loss.item():.4f}")

    print("峰值显存 %.2f GiB" % (torch.cuda.max_memory_allocated() / 2**30))


if __name__ == "__main__":
    main()
