"""Image captioning: timm EfficientNet-B3 feature map (320 px input) as memory for a 6-layer
nn.TransformerDecoder; the output projection is tied to the token embedding."""
import math

import timm
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

DEFAULTS = dict(
    backbone="efficientnet_b3",
    image_size=320,
    vocab_size=12000,
    max_caption_len=48,
    d_model=512,
    n_heads=8,
    n_layers=6,
    ffn_dim=2048,
    dropout=0.1,
    batch_size=64,
    lr=3e-4,
    steps=4,
)
config = {**DEFAULTS, "batch_size": 80}   # what we actually ran with on the 80 GB cards
PAD_ID, BOS_ID = 0, 1


class CaptionDataset(Dataset):
    def __init__(self, n, cfg):
        self.n, self.cfg = n, cfg

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        c = self.cfg
        img = torch.randn(3, c["image_size"], c["image_size"])
        L = torch.randint(8, c["max_caption_len"] + 1, ()).item()
        cap = torch.full((c["max_caption_len"] + 1,), PAD_ID, dtype=torch.long)
        cap[0] = BOS_ID
        cap[1:L + 1] = torch.randint(2, c["vocab_size"], (L,))
        return img, cap


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=512):
        super().__init__()
        pe = torch.zeros(max_len, d_model)
        pos = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe.unsqueeze(0), persistent=False)

    def forward(self, x):
        return x + self.pe[:, : x.size(1)]


class Captioner(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.encoder = timm.create_model(cfg["backbone"], pretrained=False, num_classes=0, global_pool="")
        self.enc_proj = nn.Linear(self.encoder.num_features, cfg["d_model"])
        self.embed = nn.Embedding(cfg["vocab_size"], cfg["d_model"], padding_idx=PAD_ID)
        self.pos = PositionalEncoding(cfg["d_model"])
        layer = nn.TransformerDecoderLayer(cfg["d_model"], cfg["n_heads"], cfg["ffn_dim"], cfg["dropout"],
                                           activation="gelu", batch_first=True, norm_first=True)
        self.decoder = nn.TransformerDecoder(layer, num_layers=cfg["n_layers"], norm=nn.LayerNorm(cfg["d_model"]))
        self.lm_head = nn.Linear(cfg["d_model"], cfg["vocab_size"], bias=False)
        self.lm_head.weight = self.embed.weight          # weight tying
        self.scale = math.sqrt(cfg["d_model"])

    def forward(self, images, tokens):
        feats = self.encoder.forward_features(images)          # B x C x H/32 x W/32
        memory = self.enc_proj(feats.flatten(2).transpose(1, 2))
        tgt = self.pos(self.embed(tokens) * self.scale)
        causal = nn.Transformer.generate_square_subsequent_mask(tokens.size(1), device=tokens.device)
        h = self.decoder(tgt, memory, tgt_mask=causal, tgt_is_causal=True,
                         tgt_key_padding_mask=tokens.eq(PAD_ID))
        return self.lm_head(h)


def main(cfg):
    device = torch.device("cuda")
    model = Captioner(cfg).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=0.01)
    loader = DataLoader(CaptionDataset(cfg["batch_size"] * cfg["steps"], cfg), batch_size=cfg["batch_size"],
                        shuffle=True, num_workers=4, drop_last=True)
    model.train()
    for step, (images, caps) in enumerate(loader):
        images, caps = images.to(device), caps.to(device)
        inp, target = caps[:, :-1], caps[:, 1:]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(images, inp)
        loss = F.cross_entropy(logits.float().reshape(-1, logits.size(-1)), target.reshape(-1), ignore_index=PAD_ID)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.3f}")
    print("peak alloc GiB:", round(torch.cuda.max_memory_allocated() / 2**30, 2))


if __name__ == "__main__":
    main(config)
