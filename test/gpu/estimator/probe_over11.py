"""What sparse embedding tables and SparseAdam hold, phase by phase (helper over11).

Tables are nn.EmbeddingBag / nn.Embedding with sparse=True, looked up by (B, bag) ids, their outputs summed into a
small dense head. SparseAdam keeps exp_avg and exp_avg_sq dense (zeros_like) from its first step; each step
coalesces the sparse gradient and makes row-sized values. Rows (step 3, states already made), all MiB over the
persistent state (weights + states, `base`):
  kept      allocated after forward
  fwd_peak  peak during forward
  grads     allocated after backward (the sparse gradients: looked-up rows and their int64 indices)
  bwd_peak  peak during backward
  step_peak peak during opt.step() (gradients still bound)
  rows_mib  one fp32 looked-up row block: tables * B * bag * dim * 4 (the unit to compare with)
Also "dense_adagrad": the same with a second optimizer (Adagrad, foreach) over a dense MLP on the pooled vectors,
stepped after SparseAdam, to see whether the two steps' transients add.

Second part, "lm_*": where a language-model step peaks when zero_grad() (set_to_none) runs between forward and
backward (the previous step's gradients alive through forward, gone before backward). A small LM (embedding, 4 MLP
blocks of width 1024, a 32000-token head, AdamW) over 8 x 512 tokens, its loss over the logits either kept by a name
through backward (`logits = model(x)`) or dropped (`loss_of(model(x), y)`). Step 3, MiB over the weights + AdamW
states: fwd_peak, bwd_peak, grads_at_fwd (gradients alive while forward ran), and unit_mib (fp32 logits).
python probe_over11.py [OUT.json]   (prints one JSON line per row; well under 60 s on an H200.)
"""
import json, sys, time
import torch
import torch.nn as nn

MIB = 2 ** 20
dev = "cuda"
res = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": []}


class Tables(nn.Module):
    def __init__(self, tables, vocab, dim, kind, mode, dense_hidden):
        super().__init__()
        make = (lambda: nn.EmbeddingBag(vocab, dim, mode=mode, sparse=True)) if kind == "bag" else \
            (lambda: nn.Embedding(vocab, dim, sparse=True))
        self.kind = kind
        self.tables = nn.ModuleList([make() for _ in range(tables)])
        self.head = nn.Sequential(nn.Linear(tables * dim, dense_hidden), nn.ReLU(), nn.Linear(dense_hidden, 1)) \
            if dense_hidden else None

    def forward(self, ids):
        outs = []
        for i, t in enumerate(self.tables):
            o = t(ids[:, i])
            outs.append(o if self.kind == "bag" else o.sum(1))
        v = torch.stack(outs, 1)                      # (B, T, dim)
        if self.head is None:
            return v.pow(2).sum((1, 2))
        return self.head(v.flatten(1)).squeeze(1)


def run(name, tables=8, vocab=1_000_000, dim=32, batch=16384, bag=3, kind="bag", mode="mean", dense_hidden=0):
    rec = {"name": name, "tables": tables, "vocab": vocab, "dim": dim, "batch": batch, "bag": bag, "kind": kind,
           "mode": mode, "dense_hidden": dense_hidden}
    t0 = time.time()
    try:
        torch.cuda.empty_cache()
        model = Tables(tables, vocab, dim, kind, mode, dense_hidden).to(dev)
        sparse = [p for n, p in model.named_parameters() if n.startswith("tables")]
        dense = [p for n, p in model.named_parameters() if not n.startswith("tables")]
        opts = [torch.optim.SparseAdam(sparse, lr=1e-3)]
        if dense:
            opts.append(torch.optim.Adagrad(dense, lr=1e-2))
        for step in range(3):
            ids = torch.randint(0, vocab, (batch, tables, bag), device=dev)
            for o in opts:
                o.zero_grad()
            torch.cuda.synchronize()
            base = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            loss = model(ids).mean()
            kept = torch.cuda.memory_allocated() - base
            fwd_peak = torch.cuda.max_memory_allocated() - base
            torch.cuda.reset_peak_memory_stats()
            loss.backward()
            torch.cuda.synchronize()
            grads = torch.cuda.memory_allocated() - base
            bwd_peak = torch.cuda.max_memory_allocated() - base
            del loss
            after = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            for o in opts:
                o.step()
            torch.cuda.synchronize()
            step_peak = torch.cuda.max_memory_allocated() - after
            step_kept = torch.cuda.memory_allocated() - after
        rec.update(base_mib=round(base / MIB, 1), weights_mib=round(sum(p.numel() for p in model.parameters()) * 4 / MIB, 1),
                   kept=round(kept / MIB, 1), fwd_peak=round(fwd_peak / MIB, 1), grads=round(grads / MIB, 1),
                   bwd_peak=round(bwd_peak / MIB, 1), step_peak=round(step_peak / MIB, 1), step_kept=round(step_kept / MIB, 1),
                   rows_mib=round(tables * batch * bag * dim * 4 / MIB, 2))
        del model, opts, sparse, dense
    except Exception as e:
        rec["error"] = repr(e)[:300]
    rec["s"] = round(time.time() - t0, 1)
    res["rows"].append(rec)
    print(json.dumps(rec), flush=True)
    torch.cuda.empty_cache()


run("bag_mean_8x1M_d32")
run("bag_mean_8x1M_d32_b4x", batch=65536)
run("bag_sum_8x1M_d1", dim=1, mode="sum")
run("bag_mean_26x100k_d32", tables=26, vocab=100_000)
run("bag_mean_8x1M_d32_bag1", bag=1)
run("bag_mean_8x1M_d32_bag8", bag=8)
run("embedding_8x1M_d32", kind="emb")
run("bag_mean_8x1M_d32_dense_adagrad", dense_hidden=400)
run("bag_mean_26x1M_d32_dense_adagrad", tables=26, dense_hidden=400)



class LM(nn.Module):
    def __init__(self, vocab=32000, width=1024, blocks=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.blocks = nn.ModuleList([nn.Sequential(nn.LayerNorm(width), nn.Linear(width, 4 * width), nn.GELU(),
                                                   nn.Linear(4 * width, width)) for _ in range(blocks)])
        self.head = nn.Linear(width, vocab, bias=False)

    def forward(self, x):
        h = self.embed(x)
        for blk in self.blocks:
            h = h + blk(h)
        return self.head(h)


def loss_of(logits, y):
    return nn.functional.cross_entropy(logits.float().view(-1, logits.size(-1)), y.view(-1))


def lm(name, kept, amp, zero_late=True, batch=8, seq=512, vocab=32000):
    rec = {"name": name, "kept": kept, "amp": amp, "zero_late": zero_late, "batch": batch, "seq": seq, "vocab": vocab}
    t0 = time.time()
    try:
        torch.cuda.empty_cache()
        model = LM(vocab).to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        for step in range(3):
            x = torch.randint(0, vocab, (batch, seq), device=dev)
            y = torch.randint(0, vocab, (batch, seq), device=dev)
            if not zero_late:
                opt.zero_grad()
            torch.cuda.synchronize()
            start = torch.cuda.memory_allocated()
            grads = sum(p.grad.numel() * 4 for p in model.parameters() if p.grad is not None)
            torch.cuda.reset_peak_memory_stats()
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
                if kept:
                    logits = model(x)
                    loss = loss_of(logits, y)
                else:
                    loss = loss_of(model(x), y)
            fwd_peak = torch.cuda.max_memory_allocated()
            after_fwd = torch.cuda.memory_allocated()
            if zero_late:
                opt.zero_grad()
            torch.cuda.reset_peak_memory_stats()
            loss.backward()
            bwd_peak = torch.cuda.max_memory_allocated()
            if kept:
                del logits
            del loss
            opt.step()
        rec.update(params=sum(p.numel() for p in model.parameters()), grads_at_fwd=round(grads / MIB, 1),
                   start_mib=round(start / MIB, 1), fwd_peak=round((fwd_peak - start + grads) / MIB, 1),
                   kept_after_fwd=round((after_fwd - start) / MIB, 1), bwd_peak=round((bwd_peak - start + grads) / MIB, 1),
                   grads_mib=round(sum(p.numel() for p in model.parameters()) * 4 / MIB, 1),
                   unit_mib=round(batch * seq * vocab * 4 / MIB, 1))
        del model, opt
    except Exception as e:
        rec["error"] = repr(e)[:300]
    rec["s"] = round(time.time() - t0, 1)
    res["rows"].append(rec)
    print(json.dumps(rec), flush=True)
    torch.cuda.empty_cache()


lm("lm_fp32_kept", kept=True, amp=False)
lm("lm_fp32_dropped", kept=False, amp=False)
lm("lm_bf16amp_kept", kept=True, amp=True)
lm("lm_bf16amp_dropped", kept=False, amp=True)
lm("lm_fp32_kept_zero_early", kept=True, amp=False, zero_late=False)

if len(sys.argv) > 1:
    json.dump(res, open(sys.argv[1], "w"), indent=1)
