"""Batch inference of torchvision's MViTv2-S video classifier over 16-frame clips, bf16 autocast,
torch.inference_mode. Keeps top-5 predictions (on the CPU) for every clip."""
import torch
from torch.utils.data import DataLoader, Dataset
from torchvision.models.video import mvit_v2_s

NUM_FRAMES = 16          # MViT-v2-S is built for 16 x 224 x 224
CROP = 224
BATCH_SIZE = 24
NUM_CLIPS = BATCH_SIZE * 5


class ClipFolder(Dataset):
    def __len__(self):
        return NUM_CLIPS

    def __getitem__(self, i):
        # (C, T, H, W), already normalized
        return torch.randn(3, NUM_FRAMES, CROP, CROP), i


@torch.inference_mode()
def predict(model, loader, device):
    results = {}
    for clips, idx in loader:
        clips = clips.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(clips)
        top5 = logits.float().softmax(-1).topk(5, dim=-1)
        for j, p, c in zip(idx.tolist(), top5.values.cpu(), top5.indices.cpu()):
            results[j] = (c.tolist(), p.tolist())
    return results


def main():
    device = torch.device("cuda")
    model = mvit_v2_s(weights=None).to(device).eval()
    loader = DataLoader(ClipFolder(), batch_size=BATCH_SIZE, num_workers=4, pin_memory=True)
    preds = predict(model, loader, device)
    print(f"{len(preds)} clips; first: {preds[0]}")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
