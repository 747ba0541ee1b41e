import torch
import torch.nn as nn

VOCAB, D, HEADS, FF, LAYERS, SEQ, BATCH = 32000, 512, 8, 2048, 6, 256, 256


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        layer = nn.TransformerEncoderLayer(D, HEADS, FF, batch_first=True, norm_first=True)
        self.enc = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)

    def forward(self, ids):
        return self.enc(self.emb(ids))


model = Encoder().cuda().eval()
with torch.no_grad():
    for _ in range(3):
        ids = torch.randint(0, VOCAB, (BATCH, SEQ), device="cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model(ids)
        pooled = out.mean(1)
