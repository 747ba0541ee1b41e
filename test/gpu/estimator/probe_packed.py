"""packed probe (NVIDIA H200): (1) what a cuDNN LSTM/GRU keeps and takes in backward over a packed batch
(pack_padded_sequence) against the same batch padded, per real token; (2) what a sparse adjacency (COO, coalesced or
not, CSR) holds on the GPU and what torch.sparse.mm keeps and takes in forward and backward; (3) two whole training
steps of small models written for this probe (a packed BiGRU classifier, a GraphSAGE over a COO adjacency).

Run from the repository root: python test/gpu/estimator/probe_packed.py   (prints JSON lines, writes
$OUT/probe_packed.json). Bytes everywhere; "tokens" is the real tokens of a batch (the sum of its lengths).
"""
import json
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

DEV = "cuda"
RESULTS = []


def mem():
    torch.cuda.synchronize()
    return torch.cuda.memory_allocated()


def peak():
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated()


def emit(row):
    RESULTS.append(row)
    print(json.dumps(row), flush=True)


def draw_lengths(batch, lo, hi):
    lengths = torch.randint(lo, hi + 1, (batch,))
    lengths[0] = hi  # the batch is padded to hi
    return lengths


# ---- (1) recurrent layers, packed against padded ------------------------------------------------------------------

def rnn_run(rnn, x, lengths, packed, bf16):
    """One forward and backward; the sizes of what it kept and took, over the memory allocated before it."""
    x.grad = None
    rnn.zero_grad(set_to_none=True)
    torch.cuda.empty_cache()
    base = mem()
    torch.cuda.reset_peak_memory_stats()
    row = {}
    with torch.autocast(DEV, dtype=torch.bfloat16, enabled=bf16):
        if packed:
            p = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
            before_rnn = mem()
            row["pack_kept"] = before_rnn - base
            row["pack_peak"] = peak() - base
            torch.cuda.reset_peak_memory_stats()
            out, h = rnn(p)
            after_rnn = mem()
            row["rnn_forward_peak"] = peak() - before_rnn
            out_bytes = out.data.numel() * out.data.element_size()
            state_bytes = sum(t.numel() * t.element_size() for t in (h if isinstance(h, tuple) else (h,)))
            row["rnn_reserve"] = after_rnn - before_rnn - out_bytes - state_bytes
            row["rnn_output"] = out_bytes
            torch.cuda.reset_peak_memory_stats()
            y, _ = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
            row["unpack_made"] = mem() - after_rnn
            row["unpack_peak"] = peak() - after_rnn
            del out
        else:
            before_rnn = mem()
            out, h = rnn(x)
            after_rnn = mem()
            row["rnn_forward_peak"] = peak() - before_rnn
            out_bytes = out.numel() * out.element_size()
            state_bytes = sum(t.numel() * t.element_size() for t in (h if isinstance(h, tuple) else (h,)))
            row["rnn_reserve"] = after_rnn - before_rnn - out_bytes - state_bytes
            row["rnn_output"] = out_bytes
            y = out
            del out
    del h
    after = mem()
    row["forward_kept"] = after - base
    torch.cuda.reset_peak_memory_stats()
    y.float().sum().backward()
    row["backward_peak_over_forward_end"] = peak() - after
    del y
    row["after_backward"] = mem() - base
    return row


def rnn_cases():
    batch, inp, hidden = 64, 256, 512
    for cell in ("GRU", "LSTM"):
        for layers, dropout in ((1, 0.0), (2, 0.0), (2, 0.3)):
            for bi in (False, True):
                torch.manual_seed(0)
                rnn = getattr(nn, cell)(inp, hidden, num_layers=layers, batch_first=True, bidirectional=bi, dropout=dropout).to(DEV)
                for bf16 in (False, True):
                    for lo, hi in ((50, 400), (200, 400), (20, 100)):
                        lengths = draw_lengths(batch, lo, hi)
                        x = torch.randn(batch, hi, inp, device=DEV, requires_grad=True)
                        row = {"part": "rnn", "cell": cell, "layers": layers, "dropout": dropout, "dirs": 2 if bi else 1,
                               "bf16": bf16, "batch": batch, "input": inp, "hidden": hidden, "lo": lo, "hi": hi,
                               "tokens": int(lengths.sum()), "padded_tokens": batch * hi}
                        for packed in (False, True):
                            for attempt in range(2):  # the first warms cuDNN and the allocator
                                run = rnn_run(rnn, x, lengths, packed, bf16)
                            row["packed" if packed else "padded"] = run
                        unit_packed = row["tokens"] * hidden * layers * row["dirs"] * 4
                        unit_padded = row["padded_tokens"] * hidden * layers * row["dirs"] * 4
                        row["reserve_per_unit"] = {"padded": round(row["padded"]["rnn_reserve"] / unit_padded, 3),
                                                   "packed": round(row["packed"]["rnn_reserve"] / unit_packed, 3)}
                        row["backward_extra_per_token_hidden_dir"] = {
                            "padded": round(row["padded"]["backward_peak_over_forward_end"] / (row["padded_tokens"] * hidden * row["dirs"] * 4), 3),
                            "packed": round(row["packed"]["backward_peak_over_forward_end"] / (row["tokens"] * hidden * row["dirs"] * 4), 3)}
                        emit(row)
                        del x
                del rnn
                torch.cuda.empty_cache()


# ---- (2) sparse adjacency -----------------------------------------------------------------------------------------

def edges(n, e, seed=0):
    g = torch.Generator(device=DEV)
    g.manual_seed(seed)
    return torch.randint(0, n, (2, e), device=DEV, generator=g)


def sparse_storage(n, e):
    """Bytes each form of an n x n adjacency of e random edges holds, and the peak of making it."""
    torch.cuda.empty_cache()
    row = {"part": "sparse_storage", "nodes": n, "edges": e}
    base = mem()
    idx = edges(n, e)
    val = torch.ones(e, device=DEV)
    row["index_and_values"] = mem() - base
    torch.cuda.reset_peak_memory_stats()
    raw = torch.sparse_coo_tensor(idx, val, (n, n))
    row["coo_uncoalesced_extra"] = mem() - base - row["index_and_values"]
    start = mem()
    torch.cuda.reset_peak_memory_stats()
    adj = raw.coalesce()
    row["coalesce_made"] = mem() - start
    row["coalesce_peak"] = peak() - start
    row["nnz_coalesced"] = adj._nnz()
    del raw, idx, val
    row["coalesced_alone"] = mem() - base
    start = mem()
    torch.cuda.reset_peak_memory_stats()
    csr = adj.to_sparse_csr()
    row["csr_made"] = mem() - start
    row["csr_peak"] = peak() - start
    del csr
    # Self-loops added by concatenation (a GCN's A + I), then coalesced.
    start = mem()
    torch.cuda.reset_peak_memory_stats()
    loops = torch.arange(n, device=DEV)
    idx2 = torch.cat([adj.indices(), torch.stack([loops, loops])], dim=1)
    adj2 = torch.sparse_coo_tensor(idx2, torch.ones(idx2.shape[1], device=DEV), (n, n)).coalesce()
    del idx2, loops
    row["with_self_loops_made"] = mem() - start
    row["with_self_loops_peak"] = peak() - start
    row["nnz_with_self_loops"] = adj2._nnz()
    del adj2, adj
    emit(row)
    torch.cuda.empty_cache()


def sparse_mm_case(n, e, feats, form, bf16=False, x_grad=True):
    torch.cuda.empty_cache()
    idx = edges(n, e, seed=1)
    adj = torch.sparse_coo_tensor(idx, torch.rand(e, device=DEV), (n, n))
    if form == "coo":
        adj = adj.coalesce()
    elif form == "csr":
        adj = adj.coalesce().to_sparse_csr()
    del idx
    x = torch.randn(n, feats, device=DEV, requires_grad=x_grad)
    row = {"part": "sparse_mm", "form": form, "nodes": n, "edges": e, "features": feats, "bf16": bf16, "x_requires_grad": x_grad}
    for attempt in range(2):
        x.grad = None
        torch.cuda.empty_cache()
        base = mem()
        torch.cuda.reset_peak_memory_stats()
        try:
            with torch.autocast(DEV, dtype=torch.bfloat16, enabled=bf16):
                y = torch.sparse.mm(adj, x)
        except RuntimeError as err:
            row["error"] = str(err)[:200]
            emit(row)
            return
        row["output"] = y.numel() * y.element_size()
        row["forward_kept_beyond_output"] = mem() - base - row["output"]
        row["forward_peak"] = peak() - base
        if not x_grad:
            del y
            continue
        w = torch.randn(feats, 64, device=DEV, requires_grad=True)
        z = y @ w  # keeps y, as a linear after the aggregation would
        after = mem()
        torch.cuda.reset_peak_memory_stats()
        z.sum().backward()
        row["backward_peak_over_forward_end"] = peak() - after
        del y, z, w
    emit(row)
    del adj, x
    torch.cuda.empty_cache()


# ---- (3) whole steps of small models ------------------------------------------------------------------------------

class PackedClassifier(nn.Module):
    def __init__(self, vocab, dim, hidden, layers, bi, cell):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.rnn = getattr(nn, cell)(dim, hidden, num_layers=layers, batch_first=True, bidirectional=bi, dropout=0.2 if layers > 1 else 0.0)
        width = hidden * (2 if bi else 1)
        self.score = nn.Linear(width, 1)
        self.head = nn.Linear(width, 7)

    def forward(self, tokens, lengths, packed=True):
        e = self.emb(tokens)
        if packed:
            out, _ = self.rnn(pack_padded_sequence(e, lengths, batch_first=True, enforce_sorted=False))
            out, _ = pad_packed_sequence(out, batch_first=True, total_length=tokens.shape[1])
        else:
            out, _ = self.rnn(e)
        mask = torch.arange(tokens.shape[1], device=tokens.device)[None] < lengths.to(tokens.device)[:, None]
        w = self.score(out).squeeze(-1).masked_fill(~mask, float("-inf")).softmax(1)
        return self.head((w.unsqueeze(-1) * out).sum(1))


def step_peak(model, make_batch, loss_of, bf16=False, steps=3):
    """The peak of a training step over the memory allocated before it (weights, Adam states, resident data)."""
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    rows = []
    for _ in range(steps):
        batch = make_batch()
        opt.zero_grad(set_to_none=True)
        torch.cuda.empty_cache()
        base = mem()
        torch.cuda.reset_peak_memory_stats()
        with torch.autocast(DEV, dtype=torch.bfloat16, enabled=bf16):
            loss = loss_of(model, batch)
        after_forward = mem()
        loss.backward()
        back = peak()
        opt.step()
        rows.append({"base": base, "forward_kept": after_forward - base, "step_peak_over_base": back - base, "peak": back})
        del loss, batch
    return rows[-1]


def packed_steps():
    for cell, layers, bi, bf16, batch, lo, hi in (("GRU", 2, True, False, 128, 40, 300), ("LSTM", 1, False, True, 192, 100, 500), ("GRU", 1, True, True, 96, 10, 200)):
        for packed in (True, False):
            torch.manual_seed(0)
            model = PackedClassifier(30000, 256, 384, layers, bi, cell).to(DEV)
            tokens_seen = []

            def make_batch():
                lengths = draw_lengths(batch, lo, hi)
                tokens_seen.append(int(lengths.sum()))
                tokens = torch.randint(1, 30000, (batch, hi), device=DEV)
                return tokens, lengths, torch.randint(0, 7, (batch,), device=DEV)

            row = step_peak(model, make_batch, lambda m, b: F.cross_entropy(m(b[0], b[1], packed), b[2]), bf16)
            row.update({"part": "packed_step", "cell": cell, "layers": layers, "dirs": 2 if bi else 1, "bf16": bf16, "batch": batch,
                        "lo": lo, "hi": hi, "packed": packed, "tokens": tokens_seen[-1], "vocab": 30000, "embed": 256, "hidden": 384,
                        "parameters": sum(p.numel() for p in model.parameters())})
            emit(row)
            del model
            torch.cuda.empty_cache()


class Sage(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.self_lin = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.neigh_lin = nn.ModuleList(nn.Linear(a, b, bias=False) for a, b in zip(dims[:-1], dims[1:]))

    def forward(self, x, adj):
        for i, (ls, ln) in enumerate(zip(self.self_lin, self.neigh_lin)):
            x = ls(x) + ln(torch.sparse.mm(adj, x))
            if i < len(self.self_lin) - 1:
                x = F.relu(x)
        return x


def sage_steps():
    for n, e, dims, form in ((120_000, 1_500_000, [300, 256, 256, 16], "coo"), (120_000, 3_000_000, [300, 256, 256, 16], "coo"),
                             (120_000, 1_500_000, [300, 256, 256, 16], "csr")):
        torch.cuda.empty_cache()
        start = mem()
        idx = edges(n, e, seed=2)
        adj = torch.sparse_coo_tensor(idx, torch.full((e,), 0.1, device=DEV), (n, n)).coalesce()
        if form == "csr":
            adj = adj.to_sparse_csr()
        del idx
        adj_bytes = mem() - start
        feats = torch.randn(n, dims[0], device=DEV)
        labels = torch.randint(0, dims[-1], (n,), device=DEV)
        model = Sage(dims).to(DEV)
        row = step_peak(model, lambda: None, lambda m, b: F.cross_entropy(m(feats, adj), labels))
        row.update({"part": "sage_step", "form": form, "nodes": n, "edges": e, "dims": dims, "adjacency_bytes": adj_bytes,
                    "nnz": adj._nnz() if form == "coo" else int(adj.values().numel())})
        emit(row)
        del model, adj, feats, labels
        torch.cuda.empty_cache()


def safely(label, fn, *args, **kwargs):
    """Runs one part; an error (an op a build does not support) is a row, not the end of the probe."""
    try:
        fn(*args, **kwargs)
    except Exception as err:  # noqa: BLE001 - any failure is reported as data
        emit({"part": label, "args": repr(args), "kwargs": repr(kwargs), "error": f"{type(err).__name__}: {str(err)[:300]}"})
        torch.cuda.empty_cache()


def main():
    t0 = time.time()
    safely("rnn", rnn_cases)
    for n, e in ((100_000, 1_000_000), (100_000, 4_000_000), (400_000, 1_000_000)):
        safely("sparse_storage", sparse_storage, n, e)
    for n, e, f in ((100_000, 1_000_000, 256), (100_000, 4_000_000, 256), (50_000, 1_000_000, 512)):
        for form in ("coo", "uncoalesced", "csr"):
            safely("sparse_mm", sparse_mm_case, n, e, f, form)
        safely("sparse_mm", sparse_mm_case, n, e, f, "coo", x_grad=False)
        safely("sparse_mm", sparse_mm_case, n, e, f, "coo", bf16=True)
    safely("packed_step", packed_steps)
    safely("sage_step", sage_steps)
    out = os.environ.get("OUT", ".")
    with open(os.path.join(out, "probe_packed.json"), "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                   "seconds": round(time.time() - t0, 1), "results": RESULTS}, f, indent=1)


if __name__ == "__main__":
    main()
