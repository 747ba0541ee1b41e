"""Masked autoencoder (MAE) pretraining, ViT-B/16 encoder + light decoder, weights kept in bfloat16.

The encoder only sees the visible 25% of patches; the decoder sees all of them.
"""
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


def get_args():
    parser = argparse.ArgumentParser("MAE pretraining", add_help=False)
    parser.add_argument("--batch_size", default=96, type=int, help="per-iteration batch size")
    parser.add_argument("--accum_iter", default=2, type=int)
    parser.add_argument("--input_size", default=224, type=int)
    parser.add_argument("--patch_size", default=16, type=int)
    parser.add_argument("--mask_ratio", default=0.75, type=float)
    parser.add_argument("--embed_dim", default=768, type=int)
    parser.add_argument("--depth", default=12, type=int)
    parser.add_argument("--num_heads", default=12, type=int)
    parser.add_argument("--decoder_embed_dim", default=512, type=int)
    parser.add_argument("--decoder_depth", default=8, type=int)
    parser.add_argument("--decoder_num_heads", default=16, type=int)
    parser.add_argument("--mlp_ratio", default=4.0, type=float)
    parser.add_argument("--blr", default=1.5e-4, type=float)
    parser.add_argument("--iters", default=8, type=int)
    args, _unknown = parser.parse_known_args()   # tolerate launcher flags
    return args


class Block(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        hidden = int(dim * mlp_ratio)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)
        self.num_heads = num_heads

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(self.norm1(x)).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])
        x = x + self.proj(a.transpose(1, 2).reshape(B, N, C))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class MaskedAutoencoderViT(nn.Module):
    def __init__(self, img_size, patch_size, embed_dim, depth, num_heads, decoder_embed_dim, decoder_depth,
                 decoder_num_heads, mlp_ratio):
        super().__init__()
        self.patch_size = patch_size
        self.num_patches = (img_size // patch_size) ** 2
        self.patch_embed = nn.Conv2d(3, embed_dim, patch_size, patch_size)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.pos_embed = nn.Parameter(torch.randn(1, self.num_patches + 1, embed_dim) * 0.02)
        self.blocks = nn.ModuleList([Block(embed_dim, num_heads, mlp_ratio) for _ in range(depth)])
        self.norm = nn.LayerNorm(embed_dim)

        self.decoder_embed = nn.Linear(embed_dim, decoder_embed_dim)
        self.mask_token = nn.Parameter(torch.zeros(1, 1, decoder_embed_dim))
        self.decoder_pos_embed = nn.Parameter(torch.randn(1, self.num_patches + 1, decoder_embed_dim) * 0.02)
        self.decoder_blocks = nn.ModuleList(
            [Block(decoder_embed_dim, decoder_num_heads, mlp_ratio) for _ in range(decoder_depth)])
        self.decoder_norm = nn.LayerNorm(decoder_embed_dim)
        self.decoder_pred = nn.Linear(decoder_embed_dim, patch_size ** 2 * 3)

    def patchify(self, imgs):
        p = self.patch_size
        h = w = imgs.shape[2] // p
        x = imgs.reshape(imgs.shape[0], 3, h, p, w, p)
        x = torch.einsum("nchpwq->nhwpqc", x)
        return x.reshape(imgs.shape[0], h * w, p * p * 3)

    def random_masking(self, x, mask_ratio):
        N, L, D = x.shape
        len_keep = int(L * (1 - mask_ratio))
        noise = torch.rand(N, L, device=x.device)
        ids_shuffle = torch.argsort(noise, dim=1)
        ids_restore = torch.argsort(ids_shuffle, dim=1)
        ids_keep = ids_shuffle[:, :len_keep]
        x_masked = torch.gather(x, 1, ids_keep.unsqueeze(-1).repeat(1, 1, D))
        mask = torch.ones(N, L, device=x.device, dtype=x.dtype)
        mask[:, :len_keep] = 0
        mask = torch.gather(mask, 1, ids_restore)
        return x_masked, mask, ids_restore

    def forward(self, imgs, mask_ratio):
        x = self.patch_embed(imgs).flatten(2).transpose(1, 2) + self.pos_embed[:, 1:]
        x, mask, ids_restore = self.random_masking(x, mask_ratio)
        cls = (self.cls_token + self.pos_embed[:, :1]).expand(x.shape[0], -1, -1)
        x = torch.cat([cls, x], dim=1)
        for blk in self.blocks:
            x = blk(x)
        x = self.decoder_embed(self.norm(x))
        n_mask = ids_restore.shape[1] + 1 - x.shape[1]
        x_ = torch.cat([x[:, 1:], self.mask_token.repeat(x.shape[0], n_mask, 1)], dim=1)
        x_ = torch.gather(x_, 1, ids_restore.unsqueeze(-1).repeat(1, 1, x.shape[2]))
        x = torch.cat([x[:, :1], x_], dim=1) + self.decoder_pos_embed
        for blk in self.decoder_blocks:
            x = blk(x)
        pred = self.decoder_pred(self.decoder_norm(x))[:, 1:]
        target = self.patchify(imgs)
        mean, var = target.mean(-1, keepdim=True), target.var(-1, keepdim=True)
        target = (target - mean) / (var + 1e-6) ** 0.5
        loss = ((pred.float() - target.float()) ** 2).mean(-1)
        return (loss * mask).sum() / mask.sum()


class UnlabeledImages(Dataset):
    def __init__(self, n, size):
        self.n, self.size = n, size

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.size, self.size)


def main():
    args = get_args()
    device = torch.device("cuda")
    eff_batch = args.batch_size * args.accum_iter
    lr = args.blr * eff_batch / 256

    model = MaskedAutoencoderViT(args.input_size, args.patch_size, args.embed_dim, args.depth, args.num_heads,
                                 args.decoder_embed_dim, args.decoder_depth, args.decoder_num_heads, args.mlp_ratio)
    model = model.to(device=device, dtype=torch.bfloat16)   # pure bf16: no autocast, no fp32 master copy
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.05)

    loader = DataLoader(UnlabeledImages(args.batch_size * args.accum_iter * args.iters, args.input_size),
                        batch_size=args.batch_size, shuffle=True, num_workers=4, drop_last=True)
    model.train()
    optimizer.zero_grad()
    for data_iter_step, samples in enumerate(loader):
        samples = samples.to(device, non_blocking=True, dtype=torch.bfloat16)
        loss = model(samples, args.mask_ratio)
        (loss / args.accum_iter).backward()
        if (data_iter_step + 1) % args.accum_iter == 0:
            for g in optimizer.param_groups:
                g["lr"] = lr * 0.5 * (1 + math.cos(math.pi * data_iter_step / len(loader)))
            optimizer.step()
            optimizer.zero_grad()
            print(f"it {data_iter_step + 1}: loss {loss.item():.4f}")
    print("max mem: %.2f GiB" % (torch.cuda.max_memory_allocated() / 2 ** 30))


if __name__ == "__main__":
    main()
