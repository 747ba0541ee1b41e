"""MoCo v2 pre-training (momentum key encoder + negative queue), launched with torchrun.

    torchrun --nproc_per_node=4 moco_queue_pretrain.py --data /datasets/imagenet100
"""
import argparse
import copy
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets, models, transforms

# SLURM gives us a GPU list; forward it rather than hard-coding one
if "SLURM_STEP_GPUS" in os.environ:
    os.environ["CUDA_VISIBLE_DEVICES"] = os.environ["SLURM_STEP_GPUS"]


class TwoCrops:
    def __init__(self, t):
        self.t = t

    def __call__(self, x):
        return self.t(x), self.t(x)


class MoCo(nn.Module):
    def __init__(self, dim=128, K=65536, m=0.999, T=0.2):
        super().__init__()
        self.K, self.m, self.T = K, m, T
        self.encoder_q = models.resnet50(num_classes=dim)
        in_f = self.encoder_q.fc.weight.shape[1]
        self.encoder_q.fc = nn.Sequential(nn.Linear(in_f, in_f), nn.ReLU(), nn.Linear(in_f, dim))
        self.encoder_k = copy.deepcopy(self.encoder_q)
        for p in self.encoder_k.parameters():
            p.requires_grad = False
        self.register_buffer("queue", F.normalize(torch.randn(dim, K), dim=0))
        self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

    @torch.no_grad()
    def _momentum_update(self):
        for pq, pk in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
            pk.data.mul_(self.m).add_(pq.data, alpha=1.0 - self.m)

    @torch.no_grad()
    def _enqueue(self, keys):
        keys = concat_all_gather(keys)
        bs = keys.shape[0]
        ptr = int(self.queue_ptr)
        self.queue[:, ptr:ptr + bs] = keys.T
        self.queue_ptr[0] = (ptr + bs) % self.K

    def forward(self, im_q, im_k):
        q = F.normalize(self.encoder_q(im_q), dim=1)
        with torch.no_grad():
            self._momentum_update()
            k = F.normalize(self.encoder_k(im_k), dim=1)
        l_pos = torch.einsum("nc,nc->n", q, k).unsqueeze(-1)
        l_neg = torch.einsum("nc,ck->nk", q, self.queue.clone().detach())
        logits = torch.cat([l_pos, l_neg], dim=1) / self.T
        labels = torch.zeros(logits.shape[0], dtype=torch.long, device=logits.device)
        self._enqueue(k)
        return logits, labels


@torch.no_grad()
def concat_all_gather(t):
    out = [torch.ones_like(t) for _ in range(dist.get_world_size())]
    dist.all_gather(out, t, async_op=False)
    return torch.cat(out, dim=0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--bs", type=int, default=64, help="per GPU")
    ap.add_argument("--lr", type=float, default=0.03)
    args = ap.parse_args()

    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    aug = transforms.Compose([
        transforms.RandomResizedCrop(224, scale=(0.2, 1.0)),
        transforms.RandomApply([transforms.ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8),
        transforms.RandomGrayscale(p=0.2), transforms.RandomHorizontalFlip(), transforms.ToTensor(),
        transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    ds = datasets.ImageFolder(os.path.join(args.data, "train"), TwoCrops(aug))
    sampler = DistributedSampler(ds)
    loader = DataLoader(ds, batch_size=args.bs, sampler=sampler, num_workers=10, pin_memory=True, drop_last=True)

    model = DDP(MoCo().cuda(), device_ids=[local_rank])
    opt = torch.optim.SGD(model.parameters(), lr=args.lr * args.bs * dist.get_world_size() / 256,
                          momentum=0.9, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, args.epochs)
    scaler = torch.amp.GradScaler("cuda")
    crit = nn.CrossEntropyLoss()

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        loss_sum = torch.zeros((), device="cuda")
        top1_sum = torch.zeros((), device="cuda")
        for i, ((im_q, im_k), _) in enumerate(loader):
            im_q, im_k = im_q.cuda(non_blocking=True), im_k.cuda(non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16):
                logits, labels = model(im_q, im_k)
                loss = crit(logits, labels)
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            loss_sum += loss.detach()
            top1_sum += (logits.argmax(1) == labels).float().mean()
            if rank == 0 and i % 100 == 0:
                print(f"ep {epoch} it {i} loss {loss.item():.4f} lr {sched.get_last_lr()[0]:.4f}")
        sched.step()
        dist.all_reduce(loss_sum)
        if rank == 0:
            n = len(loader) * dist.get_world_size()
            print(f"epoch {epoch}: loss {loss_sum.item() / n:.4f} top1 {top1_sum.item() / len(loader):.3f}")
            torch.save(model.module.encoder_q.state_dict(), f"moco_r50_ep{epoch:03d}.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
