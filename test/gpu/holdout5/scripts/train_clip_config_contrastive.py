"""Contrastive image-text pre-training with transformers' CLIPModel (ViT-B/32 image tower, 12-layer text tower)."""
from types import SimpleNamespace

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import CLIPConfig, CLIPModel

args = SimpleNamespace(
    batch_size=256,
    image_size=224,
    context_length=77,
    vocab_size=49408,
    lr=5e-4,
    wd=0.2,
    steps=5,
    workers=4,
)


class PairsDataset(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img = torch.randn(3, args.image_size, args.image_size)
        tok = torch.randint(1, args.vocab_size - 2, (args.context_length,))
        tok[0] = args.vocab_size - 2  # <start_of_text>
        eot = int(torch.randint(8, args.context_length, (1,)))
        tok[eot] = args.vocab_size - 1  # <end_of_text>
        tok[eot + 1:] = 0
        mask = (torch.arange(args.context_length) <= eot).long()
        return img, tok, mask


text_config = dict(vocab_size=args.vocab_size, hidden_size=512, intermediate_size=2048, num_hidden_layers=12,
                   num_attention_heads=8, max_position_embeddings=args.context_length,
                   eos_token_id=args.vocab_size - 1)
vision_config = dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_attention_heads=12,
                     image_size=args.image_size, patch_size=32)
config = CLIPConfig(text_config=text_config, vision_config=vision_config, projection_dim=512)
model = CLIPModel(config).to("cuda")

decay = [p for n, p in model.named_parameters() if p.ndim >= 2]
no_decay = [p for n, p in model.named_parameters() if p.ndim < 2]
optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": args.wd},
                               {"params": no_decay, "weight_decay": 0.0}], lr=args.lr, betas=(0.9, 0.98), eps=1e-6)

loader = DataLoader(PairsDataset(args.batch_size * args.steps), batch_size=args.batch_size,
                    num_workers=args.workers, shuffle=True, drop_last=True)

model.train()
for i, (images, texts, masks) in enumerate(loader):
    images = images.to("cuda", non_blocking=True)
    texts = texts.to("cuda", non_blocking=True)
    masks = masks.to("cuda", non_blocking=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        out = model(input_ids=texts, attention_mask=masks, pixel_values=images, return_loss=True)
    loss = out.loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        model.logit_scale.clamp_(0, 4.6052)
    print(f"iter {i}: loss {loss.item():.4f}, logit scale {model.logit_scale.exp().item():.2f}")
