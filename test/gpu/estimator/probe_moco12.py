"""Momentum / EMA copies of a model (helper moco12, issue #13): where a MoCo-style step peaks.

Rows (each a fresh model; peaks in MiB over what was allocated before the model was built):
  moco_<arch>_<prec>_b<B>[_nokey]   torchvision <arch>(num_classes=128) with its fc swapped for an MLP head
        (Linear(d, d), ReLU, old fc), a key encoder = copy.deepcopy(query) with requires_grad False, a queue buffer
        F.normalize(torch.randn(128, 65536), dim=0); SGD momentum over model.parameters(); one warm-up step then a
        measured step. _nokey: the same step without the key encoder's forward (k = q.detach()).
        Columns: weights_mib (after .cuda()), after_q_fwd, after_k_fwd, k_fwd_peak, fwd_peak, bwd_peak, step_peak.
  ema_cnn_<prec>_b<B>  a small CNN trained with an EMA copy (deepcopy, requires_grad_(False)) updated after each step
        and run under no_grad on the batch as a teacher (MSE to its output).
  pair_custom_b64 / pair_tv_b64  the step of the estimator's fixtures (test/fixtures/estimator/model-copies/): a small
        CNN pair (96 px) and a torchvision resnet18 pair (224 px), fp32, SGD momentum, 3 steps; step_peak_mib is the
        whole run's peak over what was allocated before the model (what max_memory_allocated gives a fresh script).
python probe_moco12.py   (one JSON line per row; about 30 s on an H200.)
"""
import copy, gc, json
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

MIB = 2 ** 20
dev = "cuda"


def mib(n):
    return round(n / MIB, 1)


class MoCo(nn.Module):
    def __init__(self, arch, dim=128, K=65536):
        super().__init__()
        self.encoder_q = getattr(torchvision.models, arch)(num_classes=dim)
        d = self.encoder_q.fc.weight.shape[1]
        self.encoder_q.fc = nn.Sequential(nn.Linear(d, d), nn.ReLU(), self.encoder_q.fc)
        self.encoder_k = copy.deepcopy(self.encoder_q)
        for p in self.encoder_k.parameters():
            p.requires_grad = False
        self.register_buffer("queue", F.normalize(torch.randn(dim, K), dim=0))


def moco_row(arch, amp, batch, key=True):
    gc.collect(); torch.cuda.empty_cache(); torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    m = MoCo(arch).cuda()
    weights = torch.cuda.memory_allocated() - base
    opt = torch.optim.SGD(m.parameters(), 0.03, momentum=0.9, weight_decay=1e-4)
    scaler = torch.amp.GradScaler("cuda", enabled=amp)
    row = {"row": f"moco_{arch}_{'amp' if amp else 'fp32'}_b{batch}{'' if key else '_nokey'}", "weights_mib": mib(weights),
           "params": sum(p.numel() for p in m.parameters()), "trainable": sum(p.numel() for p in m.parameters() if p.requires_grad)}
    for step in range(2):
        a = torch.rand(batch, 3, 224, 224, device=dev)
        b = torch.rand(batch, 3, 224, 224, device=dev)
        torch.cuda.synchronize()
        start = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        with torch.autocast("cuda", dtype=torch.float16, enabled=amp):
            q = F.normalize(m.encoder_q(a), dim=1)
            after_q = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            with torch.no_grad():
                k = F.normalize(m.encoder_k(b), dim=1) if key else q.detach()
            k_peak = torch.cuda.max_memory_allocated()
            after_k = torch.cuda.memory_allocated()
            l_pos = torch.einsum("nc,nc->n", q, k).unsqueeze(-1)
            l_neg = torch.einsum("nc,ck->nk", q, m.queue.clone().detach())
            logits = torch.cat([l_pos, l_neg], 1) / 0.2
            loss = F.cross_entropy(logits, torch.zeros(batch, dtype=torch.long, device=dev))
        fwd_peak = max(k_peak, torch.cuda.max_memory_allocated())
        torch.cuda.reset_peak_memory_stats()
        opt.zero_grad()
        scaler.scale(loss).backward()
        bwd_peak = torch.cuda.max_memory_allocated()
        scaler.step(opt); scaler.update()
        torch.cuda.synchronize()
        step_peak = torch.cuda.max_memory_allocated()
        del q, k, l_pos, l_neg, logits, loss
    row.update({"start_mib": mib(start - base), "after_q_fwd_mib": mib(after_q - base), "after_k_fwd_mib": mib(after_k - base),
                "k_fwd_peak_mib": mib(k_peak - base), "fwd_peak_mib": mib(fwd_peak - base), "bwd_peak_mib": mib(bwd_peak - base),
                "step_peak_mib": mib(max(step_peak, bwd_peak, fwd_peak) - base)})
    print(json.dumps(row), flush=True)
    del m, opt, a, b


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
                                  nn.Conv2d(64, 128, 3, stride=2, padding=1), nn.BatchNorm2d(128), nn.ReLU(),
                                  nn.Conv2d(128, 256, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Linear(256, 10)

    def forward(self, x):
        return self.head(self.body(x))


def ema_row(amp, batch):
    gc.collect(); torch.cuda.empty_cache(); torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    model = SmallCNN().cuda()
    ema = copy.deepcopy(model).requires_grad_(False)
    weights = torch.cuda.memory_allocated() - base
    opt = torch.optim.AdamW(model.parameters(), 1e-3)
    for step in range(2):
        x = torch.rand(batch, 3, 128, 128, device=dev)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            out = model(x)
            after_fwd = torch.cuda.memory_allocated()
            with torch.no_grad():
                target = ema(x)
            t_peak = torch.cuda.max_memory_allocated()
            loss = F.mse_loss(out.float(), target.float())
        opt.zero_grad(); loss.backward(); opt.step()
        with torch.no_grad():
            for pe, pm in zip(ema.parameters(), model.parameters()):
                pe.mul_(0.99).add_(pm, alpha=0.01)
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated()
        del out, target, loss
    print(json.dumps({"row": f"ema_cnn_{'bf16' if amp else 'fp32'}_b{batch}", "weights_mib": mib(weights),
                      "after_fwd_mib": mib(after_fwd - base), "teacher_fwd_peak_mib": mib(t_peak - base), "step_peak_mib": mib(peak - base)}), flush=True)
    del model, ema, opt, x


class Encoder(nn.Module):
    def __init__(self, dim=128):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
                                  nn.Conv2d(64, 256, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(256, dim)

    def forward(self, x):
        return self.fc(self.body(x))


class Pair(nn.Module):
    def __init__(self, tv, dim=128, K=65536):
        super().__init__()
        if tv:
            self.encoder_q = torchvision.models.resnet18(num_classes=dim)
            hidden = self.encoder_q.fc.weight.shape[1]
            self.encoder_q.fc = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), self.encoder_q.fc)
        else:
            self.encoder_q = Encoder(dim)
            self.encoder_q.fc = nn.Sequential(nn.Linear(256, 2048), nn.ReLU(), nn.Linear(2048, dim))
        self.encoder_k = copy.deepcopy(self.encoder_q)
        for p in self.encoder_k.parameters():
            p.requires_grad = False
        self.register_buffer("queue", F.normalize(torch.randn(dim, K), dim=0))

    def forward(self, a, b):
        q = F.normalize(self.encoder_q(a), dim=1)
        with torch.no_grad():
            k = F.normalize(self.encoder_k(b), dim=1)
        l_pos = (q * k).sum(1, keepdim=True)
        l_neg = q @ self.queue.clone().detach()
        return torch.cat([l_pos, l_neg], dim=1) / 0.2


def pair_row(tv, size):
    gc.collect(); torch.cuda.empty_cache(); torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    model = Pair(tv).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.03, momentum=0.9)
    for step in range(3):
        a = torch.randn(64, 3, size, size, device="cuda")
        b = torch.randn(64, 3, size, size, device="cuda")
        logits = model(a, b)
        loss = F.cross_entropy(logits, torch.zeros(64, dtype=torch.long, device="cuda"))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.cuda.synchronize()
    print(json.dumps({"row": f"pair_{'tv' if tv else 'custom'}_b64", "params": sum(p.numel() for p in model.parameters()),
                      "step_peak_mib": mib(torch.cuda.max_memory_allocated() - base)}), flush=True)
    del model, optimizer, a, b, logits, loss


torch.ones(1, device=dev)
torch.ones(8, 8, device=dev) @ torch.ones(8, 8, device=dev)
pair_row(False, 96)
pair_row(True, 224)
for arch, amp, batch, key in [("resnet50", True, 128, True), ("resnet50", True, 128, False), ("resnet50", False, 64, True),
                              ("resnet18", True, 128, True), ("resnet18", True, 128, False), ("resnet18", False, 128, True)]:
    moco_row(arch, amp, batch, key)
for amp, batch in [(True, 64), (False, 64)]:
    ema_row(amp, batch)
