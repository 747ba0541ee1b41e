"""Speech emotion recognition with a HuBERT-base encoder built from HubertConfig (no checkpoint download).

Raw 16 kHz waveforms, 6-second clips, frozen conv feature encoder, fp16 autocast + GradScaler.
"""
import time
from dataclasses import dataclass

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import HubertConfig, HubertForSequenceClassification


@dataclass
class Args:
    sample_rate: int = 16000
    clip_seconds: int = 6
    batch_size: int = 32
    num_labels: int = 8
    lr: float = 5e-5
    warmup_steps: int = 2
    max_steps: int = 10
    grad_clip: float = 1.0
    init_scale: float = 2.0 ** 12

    @property
    def num_samples(self) -> int:
        return self.sample_rate * self.clip_seconds


class Clips(Dataset):
    def __init__(self, n, num_samples, num_labels):
        self.n, self.num_samples, self.num_labels = n, num_samples, num_labels

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        wav = 0.1 * torch.randn(self.num_samples)
        wav = (wav - wav.mean()) / (wav.std() + 1e-7)   # feature-extractor style normalisation
        return wav, i % self.num_labels


def main(args: Args = Args()):
    device = "cuda"
    config = HubertConfig(num_labels=args.num_labels, classifier_proj_size=256, mask_time_prob=0.05,
                          layerdrop=0.0, final_dropout=0.1)
    model = HubertForSequenceClassification(config)
    model.freeze_feature_encoder()
    model.to(device).train()

    trainable = [p for p in model.parameters() if p.requires_grad]
    print(f"trainable {sum(p.numel() for p in trainable) / 1e6:.1f}M / "
          f"{sum(p.numel() for p in model.parameters()) / 1e6:.1f}M")
    optimizer = torch.optim.AdamW(trainable, lr=args.lr, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / args.warmup_steps))
    scaler = torch.amp.GradScaler("cuda", init_scale=args.init_scale)

    loader = DataLoader(Clips(args.batch_size * args.max_steps, args.num_samples, args.num_labels),
                        batch_size=args.batch_size, shuffle=True, num_workers=4, drop_last=True)

    t0 = time.time()
    for step, (wav, label) in enumerate(loader):
        wav, label = wav.to(device), label.to(device)
        with torch.autocast("cuda", dtype=torch.float16):
            out = model(input_values=wav, labels=label)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(out.loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(trainable, args.grad_clip)
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        print(f"step {step} loss {out.loss.item():.4f} scale {scaler.get_scale():.0f}")
    print(f"{time.time() - t0:.1f}s, peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
