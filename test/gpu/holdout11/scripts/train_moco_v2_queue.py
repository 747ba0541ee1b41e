"""MoCo v2 pre-training (single GPU): ResNet-50 query encoder, momentum key encoder, 65536-key queue."""
import argparse
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.models as models
from torch.utils.data import DataLoader, Dataset

parser = argparse.ArgumentParser(description="MoCo v2")
parser.add_argument("-a", "--arch", default="resnet50", choices=["resnet18", "resnet50", "resnet101"])
parser.add_argument("-b", "--batch-size", default=128, type=int, dest="batch_size")
parser.add_argument("--lr", default=0.03, type=float)
parser.add_argument("--moco-dim", default=128, type=int)
parser.add_argument("--moco-k", default=65536, type=int, help="queue size")
parser.add_argument("--moco-m", default=0.999, type=float)
parser.add_argument("--moco-t", default=0.2, type=float)
parser.add_argument("--crop", default=224, type=int)
parser.add_argument("--iters", default=5, type=int)
parser.add_argument("-j", "--workers", default=6, type=int)


class MoCo(nn.Module):
    def __init__(self, base_encoder, dim=128, K=65536, m=0.999, T=0.2):
        super().__init__()
        self.K, self.m, self.T = K, m, T
        self.encoder_q = base_encoder(num_classes=dim)
        dim_mlp = self.encoder_q.fc.weight.shape[1]
        self.encoder_q.fc = nn.Sequential(nn.Linear(dim_mlp, dim_mlp), nn.ReLU(), self.encoder_q.fc)
        self.encoder_k = copy.deepcopy(self.encoder_q)
        for p in self.encoder_k.parameters():
            p.requires_grad = False
        self.register_buffer("queue", F.normalize(torch.randn(dim, K), dim=0))
        self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

    @torch.no_grad()
    def _momentum_update_key_encoder(self):
        for pq, pk in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            pk.data = pk.data * self.m + pq.data * (1.0 - self.m)

    @torch.no_grad()
    def _dequeue_and_enqueue(self, keys):
        bs = keys.shape[0]
        ptr = int(self.queue_ptr)
        assert self.K % bs == 0
        self.queue[:, ptr:ptr + bs] = keys.T
        self.queue_ptr[0] = (ptr + bs) % self.K

    def forward(self, im_q, im_k):
        q = F.normalize(self.encoder_q(im_q), dim=1)
        with torch.no_grad():
            self._momentum_update_key_encoder()
            k = F.normalize(self.encoder_k(im_k), dim=1)
        l_pos = torch.einsum("nc,nc->n", q, k).unsqueeze(-1)
        l_neg = torch.einsum("nc,ck->nk", q, self.queue.clone().detach())
        logits = torch.cat([l_pos, l_neg], dim=1) / self.T
        labels = torch.zeros(logits.shape[0], dtype=torch.long, device=logits.device)
        self._dequeue_and_enqueue(k.float())
        return logits, labels


class TwoCropsDataset(Dataset):
    def __init__(self, n, crop):
        self.n, self.crop = n, crop

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img = torch.rand(3, self.crop + 32, self.crop + 32)
        y0, x0, y1, x1 = torch.randint(0, 32, (4,)).tolist()
        q = img[:, y0:y0 + self.crop, x0:x0 + self.crop]
        k = img[:, y1:y1 + self.crop, x1:x1 + self.crop].flip(-1)
        return q, k


def main():
    args = parser.parse_args()
    model = MoCo(models.__dict__[args.arch], args.moco_dim, args.moco_k, args.moco_m, args.moco_t).cuda()
    criterion = nn.CrossEntropyLoss().cuda()
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=0.9, weight_decay=1e-4)
    scaler = torch.amp.GradScaler("cuda")

    loader = DataLoader(TwoCropsDataset(args.batch_size * args.iters, args.crop), batch_size=args.batch_size,
                        shuffle=True, num_workers=args.workers, pin_memory=True, drop_last=True)
    model.train()
    for i, (im_q, im_k) in enumerate(loader):
        im_q, im_k = im_q.cuda(non_blocking=True), im_k.cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            output, target = model(im_q, im_k)
            loss = criterion(output, target)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        acc1 = (output.argmax(1) == target).float().mean().item() * 100
        print(f"[{i}/{args.iters}] loss {loss.item():.4f} acc@1 {acc1:.1f}")


if __name__ == "__main__":
    main()
