"""What a torch.compile'd (inductor) tabular MLP keeps for backward, against eager, in fp32: Linear -> [BatchNorm1d]
-> ReLU(inplace) -> [Dropout] blocks of widths 2048, 2048, 1024, 512 on 256 input features, batch 65536, SGD with
momentum. Variants drop the BatchNorm and/or the Dropout to see which part compile saves on.
Then a torch.func ensemble (stack_module_state + vmap(functional_call), randomness="different") of N MLPs
784-2048x3-10 with LayerNorm/GELU/[Dropout], per-member batch 4096, against one plain member over N x 4096 rows:
what vmap keeps per row beside what an eager forward keeps.

Each row: memory allocated after forward over before (what forward keeps), the forward's and backward's peak over
the allocation before forward, and the whole step's peak from before the model was made.
python probe_custom9.py [OUT.json]   (prints one JSON line per row; well under 200 s on an H200.)
"""
import json, sys, time
import torch
import torch.nn as nn

MIB = 2 ** 20
dev = "cuda"
B, IN, WIDTHS = 65536, 256, (2048, 2048, 1024, 512)
res = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "B": B, "rows": []}


def make(bn, drop):
    layers, d = [], IN
    for h in WIDTHS:
        layers.append(nn.Linear(d, h))
        if bn:
            layers.append(nn.BatchNorm1d(h))
        layers.append(nn.ReLU(inplace=True))
        if drop:
            layers.append(nn.Dropout(0.1))
        d = h
    layers.append(nn.Linear(d, 1))
    return nn.Sequential(*layers)


def row(bn, drop, compiled):
    rec = {"bn": bn, "dropout": drop, "compiled": compiled}
    t0 = time.time()
    try:
        torch.cuda.empty_cache(); torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        start = torch.cuda.memory_allocated()
        model = make(bn, drop).to(dev)
        rec["params"] = sum(p.numel() for p in model.parameters())
        run = torch.compile(model) if compiled else model
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, nesterov=True)
        loss_fn = nn.BCEWithLogitsLoss()
        x = torch.randn(B, IN, device=dev)
        y = (torch.rand(B, device=dev) > 0.5).float()
        for step in range(3):
            opt.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            before = torch.cuda.memory_allocated()
            if step == 2:
                torch.cuda.reset_peak_memory_stats()
            loss = loss_fn(run(x).squeeze(1), y)
            torch.cuda.synchronize()
            if step == 2:
                rec["kept_mib"] = round((torch.cuda.memory_allocated() - before) / MIB, 1)
                rec["fwd_peak_over_mib"] = round((torch.cuda.max_memory_allocated() - before) / MIB, 1)
                torch.cuda.reset_peak_memory_stats()
            loss.backward()
            torch.cuda.synchronize()
            if step == 2:
                rec["bwd_peak_over_mib"] = round((torch.cuda.max_memory_allocated() - before) / MIB, 1)
            opt.step()
        rec["state_mib"] = round((torch.cuda.memory_allocated() - start) / MIB, 1)
        del model, run, opt, x, y, loss
    except Exception as e:
        rec["error"] = repr(e)[:300]
    rec["s"] = round(time.time() - t0, 1)
    res["rows"].append(rec)
    print(json.dumps(rec), flush=True)


for bn, drop in ((True, True), (True, False), (False, True), (False, False)):
    for compiled in (False, True):
        row(bn, drop, compiled)

def mlp(drop):
    layers, d = [], 784
    for _ in range(3):
        layers += [nn.Linear(d, 2048), nn.LayerNorm(2048), nn.GELU()] + ([nn.Dropout(0.1)] if drop else [])
        d = 2048
    return nn.Sequential(*layers, nn.Linear(d, 10))


def ensemble_row(n, drop, vmapped, per_member=4096):
    from torch.func import functional_call, stack_module_state, vmap
    rec = {"ensemble": n, "dropout": drop, "vmap": vmapped, "rows": n * per_member}
    t0 = time.time()
    try:
        torch.cuda.empty_cache(); torch.cuda.synchronize()
        if vmapped:
            models = [mlp(drop).to(dev) for _ in range(n)]
            params, buffers = stack_module_state(models)
            del models
            base = mlp(drop).to("meta")
            fwd = vmap(lambda p, b, x: functional_call(base, (p, b), (x,)), randomness="different")
            opt = torch.optim.Adam(params.values(), lr=1e-3)
            x = torch.randn(n, per_member, 784, device=dev)
            y = torch.randint(0, 10, (n * per_member,), device=dev)
            run = lambda: fwd(params, buffers, x).reshape(-1, 10)
        else:
            model = mlp(drop).to(dev)
            opt = torch.optim.Adam(model.parameters(), lr=1e-3)
            x = torch.randn(n * per_member, 784, device=dev)
            y = torch.randint(0, 10, (n * per_member,), device=dev)
            run = lambda: model(x)
        for step in range(3):
            opt.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            before = torch.cuda.memory_allocated()
            if step == 2:
                torch.cuda.reset_peak_memory_stats()
            loss = nn.functional.cross_entropy(run(), y)
            torch.cuda.synchronize()
            if step == 2:
                rec["kept_mib"] = round((torch.cuda.memory_allocated() - before) / MIB, 1)
                rec["fwd_peak_over_mib"] = round((torch.cuda.max_memory_allocated() - before) / MIB, 1)
                torch.cuda.reset_peak_memory_stats()
            loss.backward()
            torch.cuda.synchronize()
            if step == 2:
                rec["bwd_peak_over_mib"] = round((torch.cuda.max_memory_allocated() - before) / MIB, 1)
            opt.step()
        del opt, x, y, run, loss
        if vmapped:
            del params, buffers, fwd, base
        else:
            del model
    except Exception as e:
        rec["error"] = repr(e)[:300]
    rec["s"] = round(time.time() - t0, 1)
    res["rows"].append(rec)
    print(json.dumps(rec), flush=True)


for drop in (True, False):
    for vmapped in (True, False):
        ensemble_row(4, drop, vmapped)
if len(sys.argv) > 1:
    json.dump(res, open(sys.argv[1], "w"), indent=1)
