"""LLaVA-style stage-1 alignment: a frozen timm ViT encodes the image, a small MLP projector maps its patch
tokens into the embedding space of a frozen Qwen2.5-0.5B, and only the projector is trained on captioning
(image tokens are prefixed to the caption through `inputs_embeds`; their labels are -100).
"""
import time
from dataclasses import dataclass

import timm
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForCausalLM


@dataclass
class TrainArgs:
    vision_tower: str = "vit_base_patch16_224"
    llm_name: str = "Qwen/Qwen2.5-0.5B"
    image_size: int = 224
    caption_len: int = 128
    batch_size: int = 16
    lr: float = 1e-3
    max_steps: int = 8
    projector_depth: int = 2


class CaptionPairs(Dataset):
    def __init__(self, n, image_size, caption_len, vocab):
        self.n, self.image_size, self.caption_len, self.vocab = n, image_size, caption_len, vocab

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.image_size, self.image_size), torch.randint(0, self.vocab, (self.caption_len,))


def build_projector(in_dim, out_dim, depth):
    layers = [nn.Linear(in_dim, out_dim)]
    for _ in range(1, depth):
        layers += [nn.GELU(), nn.Linear(out_dim, out_dim)]
    return nn.Sequential(*layers)


def main(args: TrainArgs = TrainArgs()):
    device = "cuda"
    vision = timm.create_model(args.vision_tower, pretrained=False, num_classes=0, img_size=args.image_size)
    vision.to(device).eval().requires_grad_(False)

    llm = AutoModelForCausalLM.from_pretrained(args.llm_name, dtype=torch.bfloat16)
    llm.to(device).requires_grad_(False)
    llm.config.use_cache = False

    projector = build_projector(vision.num_features, llm.config.hidden_size, args.projector_depth).to(device)
    optimizer = torch.optim.AdamW(projector.parameters(), lr=args.lr, weight_decay=0.0)
    print(f"trainable {sum(p.numel() for p in projector.parameters()) / 1e6:.2f}M")

    loader = DataLoader(CaptionPairs(args.batch_size * args.max_steps, args.image_size, args.caption_len,
                                     llm.config.vocab_size),
                        batch_size=args.batch_size, shuffle=True, num_workers=4)
    embed = llm.get_input_embeddings()
    t0 = time.time()
    for step, (images, captions) in enumerate(loader):
        images, captions = images.to(device), captions.to(device)
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            patch_tokens = vision.forward_features(images)[:, vision.num_prefix_tokens:]   # (B, 196, 768)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            img_embeds = projector(patch_tokens.float()).to(torch.bfloat16)
            txt_embeds = embed(captions)
            inputs_embeds = torch.cat([img_embeds, txt_embeds], dim=1)
            labels = torch.cat([torch.full(img_embeds.shape[:2], -100, device=device, dtype=torch.long), captions], 1)
            attn = torch.ones(labels.shape, device=device, dtype=torch.long)
            loss = llm(inputs_embeds=inputs_embeds, attention_mask=attn, labels=labels).loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(projector.parameters(), 1.0)
        optimizer.step()
        print(f"step {step} loss {loss.item():.3f} seq {inputs_embeds.shape[1]} ({time.time() - t0:.1f}s)")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
