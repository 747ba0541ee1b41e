"""Image-retrieval index: embed a gallery with a timm ViT-L/16 (classifier removed) under bf16 autocast,
keep the normalised embeddings on the GPU, then run exhaustive cosine top-k search for a set of queries.

Gradients are switched off globally with torch.set_grad_enabled(False) at the top of the script; the helper
is additionally decorated with @torch.no_grad() (belt and braces, as in our codebase)."""
import time

import timm
import torch
import torch.nn.functional as F

torch.set_grad_enabled(False)

MODEL = "vit_large_patch16_224"
BATCH = 512
GALLERY_BATCHES = 12
N_QUERIES = 2048
TOPK = 10


@torch.no_grad()
def embed(model, images):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        feats = model(images)
    return F.normalize(feats.float(), dim=-1)


def fake_batch(n, device):
    return torch.randn(n, 3, 224, 224, device=device)


def main():
    device = torch.device("cuda")
    model = timm.create_model(MODEL, pretrained=False, num_classes=0).to(device).eval()
    print(f"{MODEL}: {sum(p.numel() for p in model.parameters()) / 1e6:.0f}M params, embed dim {model.num_features}")

    t0 = time.time()
    gallery = []
    for _ in range(GALLERY_BATCHES):
        gallery.append(embed(model, fake_batch(BATCH, device)))
    gallery = torch.cat(gallery)                       # (6144, 1024) fp32 on the GPU
    queries = torch.cat([embed(model, fake_batch(BATCH, device)) for _ in range(N_QUERIES // BATCH)])
    sims = queries @ gallery.T                          # (2048, 6144)
    scores, idx = sims.topk(TOPK, dim=1)
    print(f"gallery {tuple(gallery.shape)}, queries {tuple(queries.shape)}, top-1 mean sim {scores[:, 0].mean():.3f}")
    print(f"{time.time() - t0:.1f}s, peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
