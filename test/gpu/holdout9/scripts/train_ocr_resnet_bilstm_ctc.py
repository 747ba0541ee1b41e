"""Text-line recognition (CRNN): the first stages of a torchvision ResNet as the visual backbone
(`nn.Sequential(*list(resnet.children())[:-3])`), height pooled away, a 2-layer BiLSTM over the width, and CTC.
Backbones come from a small registry; fp16 autocast + GradScaler (CTC itself runs in fp32).

    python train_ocr_resnet_bilstm_ctc.py --backbone resnet34 --batch-size 192
"""
import argparse
import string
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader, Dataset

CHARSET = string.digits + string.ascii_letters + string.punctuation + " "
BLANK = 0
BACKBONES = {}


def register_backbone(name):
    def deco(fn):
        BACKBONES[name] = fn
        return fn
    return deco


@register_backbone("resnet18")
def resnet18_trunk():
    m = torchvision.models.resnet18(weights=None)
    return nn.Sequential(*list(m.children())[:-3]), 256          # conv1 .. layer3, stride 16


@register_backbone("resnet34")
def resnet34_trunk():
    m = torchvision.models.resnet34(weights=None)
    return nn.Sequential(*list(m.children())[:-3]), 256


@register_backbone("resnet50")
def resnet50_trunk():
    m = torchvision.models.resnet50(weights=None)
    return nn.Sequential(*list(m.children())[:-3]), 1024


def get_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backbone", choices=sorted(BACKBONES), default="resnet34")
    ap.add_argument("--batch-size", type=int, default=192)
    ap.add_argument("--height", type=int, default=64)
    ap.add_argument("--width", type=int, default=800)
    ap.add_argument("--max-label-len", type=int, default=32)
    ap.add_argument("--rnn-hidden", type=int, default=256)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--steps", type=int, default=12)
    return ap.parse_args()


class CRNN(nn.Module):
    def __init__(self, backbone, rnn_hidden, num_classes):
        super().__init__()
        self.cnn, c = BACKBONES[backbone]()
        self.rnn = nn.LSTM(c, rnn_hidden, num_layers=2, bidirectional=True, batch_first=True, dropout=0.1)
        self.fc = nn.Linear(2 * rnn_hidden, num_classes)

    def forward(self, x):
        f = self.cnn(x)                      # (B, C, H/16, W/16)
        f = f.mean(dim=2).transpose(1, 2)    # (B, T, C)
        h, _ = self.rnn(f)
        return self.fc(h)                    # (B, T, classes)


class TextLines(Dataset):
    def __init__(self, n, h, w, max_len):
        self.n, self.h, self.w, self.max_len = n, h, w, max_len

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img = torch.rand(3, self.h, self.w)
        L = int(torch.randint(4, self.max_len + 1, ()))
        label = torch.randint(1, len(CHARSET) + 1, (L,))
        return img, label


def collate(batch):
    imgs, labels = zip(*batch)
    lengths = torch.tensor([len(l) for l in labels])
    return torch.stack(imgs), torch.cat(labels), lengths


def main():
    args = get_args()
    device = "cuda"
    model = CRNN(args.backbone, args.rnn_hidden, len(CHARSET) + 1).to(device)
    print(f"{args.backbone}: {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M params")
    ctc = nn.CTCLoss(blank=BLANK, zero_infinity=True)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    scaler = torch.amp.GradScaler("cuda")
    loader = DataLoader(TextLines(args.batch_size * args.steps, args.height, args.width, args.max_label_len),
                        batch_size=args.batch_size, shuffle=True, num_workers=6, collate_fn=collate)
    t0 = time.time()
    model.train()
    for step, (imgs, targets, target_lengths) in enumerate(loader):
        imgs = imgs.to(device, non_blocking=True)
        targets = targets.to(device)
        with torch.autocast("cuda", dtype=torch.float16):
            logits = model(imgs)
            log_probs = F.log_softmax(logits, dim=-1).transpose(0, 1)       # (T, B, C)
            input_lengths = torch.full((imgs.size(0),), log_probs.size(0), dtype=torch.long)
            loss = ctc(log_probs, targets, input_lengths, target_lengths)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        scaler.step(opt)
        scaler.update()
        print(f"step {step} T={log_probs.size(0)} ctc {loss.item():.3f} scale {scaler.get_scale():.0f}")

    model.eval()
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
        best = model(imgs).argmax(-1)[0].tolist()
    decoded = [CHARSET[c - 1] for i, c in enumerate(best) if c != BLANK and (i == 0 or c != best[i - 1])]
    print("greedy:", "".join(decoded)[:40])
    print(f"{time.time() - t0:.1f}s, peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
