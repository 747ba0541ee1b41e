"""Image-text contrastive training with the SigLIP (pairwise sigmoid) loss, towers taken from libraries:

* image tower: timm vit_small_patch16_224 with its classifier removed (num_classes=0 -> pooled 384-d features)
* text tower: bert-base-uncased from the hub (AutoModel), CLS token
* linear projections to a shared 512-d space, learnable temperature and bias

bf16 autocast, AdamW with a lower LR for the BERT tower.
"""
import math
import time

import timm
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModel

HP = {
    "image_model": "vit_small_patch16_224",
    "text_model": "bert-base-uncased",
    "embed_dim": 512,
    "batch_size": 128,
    "context_length": 64,
    "image_size": 224,
    "lr": 5e-4,
    "text_lr": 5e-5,
    "weight_decay": 0.05,
    "steps": 6,
}


class CaptionPairs(Dataset):
    def __init__(self, n, image_size, context_length, vocab=30522):
        self.n, self.image_size, self.context_length, self.vocab = n, image_size, context_length, vocab

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        L = int(torch.randint(8, self.context_length + 1, ()))
        ids = torch.zeros(self.context_length, dtype=torch.long)
        ids[0], ids[L - 1] = 101, 102
        ids[1:L - 1] = torch.randint(1000, self.vocab, (L - 2,))
        mask = (torch.arange(self.context_length) < L).long()
        return torch.randn(3, self.image_size, self.image_size), ids, mask


class SigLIP(nn.Module):
    def __init__(self, hp):
        super().__init__()
        self.visual = timm.create_model(hp["image_model"], pretrained=False, num_classes=0)
        self.text = AutoModel.from_pretrained(hp["text_model"])
        self.image_proj = nn.Linear(self.visual.num_features, hp["embed_dim"], bias=False)
        self.text_proj = nn.Linear(self.text.config.hidden_size, hp["embed_dim"], bias=False)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(10.0)))
        self.logit_bias = nn.Parameter(torch.tensor(-10.0))

    def forward(self, images, input_ids, attention_mask):
        img = F.normalize(self.image_proj(self.visual(images)), dim=-1)
        txt_hidden = self.text(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        txt = F.normalize(self.text_proj(txt_hidden[:, 0]), dim=-1)
        return img, txt


def siglip_loss(img, txt, logit_scale, logit_bias):
    logits = img @ txt.t() * logit_scale.exp() + logit_bias
    n = logits.size(0)
    labels = 2 * torch.eye(n, device=logits.device, dtype=logits.dtype) - 1    # +1 on the diagonal, -1 elsewhere
    return -F.logsigmoid(labels * logits).sum() / n


def main(hp=HP):
    device = torch.device("cuda")
    model = SigLIP(hp).to(device)
    model.train()                      # from_pretrained hands back the BERT tower in eval mode

    text_params = list(model.text.parameters())
    text_ids = {id(p) for p in text_params}
    other = [p for p in model.parameters() if id(p) not in text_ids]
    optimizer = torch.optim.AdamW([{"params": other, "lr": hp["lr"]},
                                   {"params": text_params, "lr": hp["text_lr"]}],
                                  weight_decay=hp["weight_decay"])

    loader = DataLoader(CaptionPairs(hp["batch_size"] * hp["steps"], hp["image_size"], hp["context_length"]),
                        batch_size=hp["batch_size"], shuffle=True, num_workers=4, drop_last=True)
    t0 = time.time()
    for step, (images, ids, mask) in enumerate(loader):
        images, ids, mask = images.to(device), ids.to(device), mask.to(device)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            img, txt = model(images, ids, mask)
            loss = siglip_loss(img.float(), txt.float(), model.logit_scale, model.logit_bias)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.4f} t={model.logit_scale.exp().item():.2f} "
              f"({time.time() - t0:.1f}s)")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
