# Per-call saved memory of nn.MultiheadAttention cross-attention (one query over 120 keys) and of
# nn.GRUCell, as the held-out GRU seq2seq decoder calls them, in units of the tensors named.
import json, os
import torch
import torch.nn as nn

dev = "cuda"
B, S, E, H = 256, 120, 1024, 8
res = {}

def per_call(fn, n=10):
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    keep = [fn(t) for t in range(n)]
    torch.cuda.synchronize()
    grown = (torch.cuda.memory_allocated() - base) / n
    del keep
    return grown

for mask in (False, True):
    for dropout in (0.0, 0.1):
        mha = nn.MultiheadAttention(E, H, dropout=dropout, batch_first=True).to(dev).train()
        memory = torch.randn(B, S, E, device=dev, requires_grad=True)
        pad = torch.zeros(B, S, dtype=torch.bool, device=dev)
        pad[:, S // 2:] = True
        query = torch.randn(B, E, device=dev, requires_grad=True)
        def step(t):
            q = query * 1.0  # a new query each step, as a decoder's hidden state
            ctx, _ = mha(q.unsqueeze(1), memory, memory, key_padding_mask=pad if mask else None, need_weights=False)
            return ctx
        grown = per_call(step)
        # minus the query copy (B x E fp32) and the context (B x E)
        res[f"mha_mask{mask}_dropout{dropout}"] = {"bytes_per_call": grown, "units_of_BSE_fp32": (grown - 2 * B * E * 4) / (B * S * E * 4)}
        del mha, memory

cell = nn.GRUCell(1536, 1024).to(dev).train()
x = torch.randn(B, 1536, device=dev, requires_grad=True)
state = {"h": torch.randn(B, 1024, device=dev, requires_grad=True)}
def gru_step(t):
    inp = x * 1.0
    state["h"] = cell(inp, state["h"])
    return state["h"]
grown = per_call(gru_step)
res["grucell"] = {"bytes_per_call": grown, "units_of_B_hidden_fp32": grown / (B * 1024 * 4)}
out = os.environ.get("OUT", ".")
with open(os.path.join(out, "probe_step.json"), "w") as fh:
    json.dump(res, fh, indent=1)
print(json.dumps(res, indent=1))
