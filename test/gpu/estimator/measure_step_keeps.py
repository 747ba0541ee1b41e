#!/usr/bin/env python3
"""What one step keeps, for four mechanisms the estimator models (issue #13, held-out set 6):

1. derivatives of a network's output w.r.t. its inputs with create_graph=True (physics-informed losses):
   the graph kept and the backward peak for derivative order 0, 1 and 2, in units of N x width x depth x 4 bytes;
2. LBFGS: the bytes its state keeps after steps, in units of the parameters' bytes (history_size pairs);
3. nn.Embedding(sparse=True) + SparseAdam: whether exp_avg / exp_avg_sq are dense, and the step's peak;
4. transformers generate() with beam search on an encoder-decoder (BART from a config, bf16): the peak above the
   weights for a few batch / beams / source lengths.

Run on a CUDA machine:  python3 measure_step_keeps.py --out OUTDIR   (writes OUTDIR/step_keeps.json)
"""
import argparse
import json
import time
import traceback

import torch
import torch.nn as nn

T0 = time.time()
MIB = 2 ** 20


def log(*a):
    print(f'[{time.time() - T0:6.1f}s]', *a, flush=True)


def reset():
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    return torch.cuda.memory_allocated()


class MLP(nn.Module):
    def __init__(self, width, depth, act):
        super().__init__()
        layers = [nn.Linear(2, width), act()]
        for _ in range(depth - 1):
            layers += [nn.Linear(width, width), act()]
        layers.append(nn.Linear(width, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, t, x):
        return self.net(torch.cat([t, x], dim=1))


def derivative_step(n, width, depth, act, order):
    model = MLP(width, depth, act).cuda()
    t = torch.rand(n, 1, device='cuda', requires_grad=True)
    x = torch.rand(n, 1, device='cuda', requires_grad=True)
    # one step first so the parameter gradients exist, then set_to_none as zero_grad does
    out = {}
    for rep in range(2):
        model.zero_grad(set_to_none=True)
        base = reset()
        u = model(t, x)
        if order == 0:
            f = u
        else:
            u_t, u_x = torch.autograd.grad(u, (t, x), torch.ones_like(u), create_graph=True)
            f = u_t + u * u_x
            if order == 2:
                u_xx = torch.autograd.grad(u_x, x, torch.ones_like(u_x), create_graph=True)[0]
                f = f - 0.01 * u_xx
        loss = (f ** 2).mean()
        torch.cuda.synchronize()
        kept = torch.cuda.memory_allocated() - base
        before_backward_peak = torch.cuda.max_memory_allocated() - base
        loss.backward()
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - base
        del u, f, loss
        out = {'kept': kept, 'forward_peak': before_backward_peak, 'peak': peak}
    unit = n * width * depth * 4
    res = {k: v / unit for k, v in out.items()}
    res.update({'n': n, 'width': width, 'depth': depth, 'act': act.__name__, 'order': order, 'unit_bytes': unit,
                'param_bytes': sum(p.numel() for p in model.parameters()) * 4})
    return res


def lbfgs_state(width, depth, history):
    model = MLP(width, depth, nn.Tanh).cuda()
    p_bytes = sum(p.numel() for p in model.parameters()) * 4
    t = torch.rand(256, 1, device='cuda')
    x = torch.rand(256, 1, device='cuda')
    opt = torch.optim.LBFGS(model.parameters(), lr=1.0, max_iter=20, history_size=history, tolerance_grad=1e-12,
                            tolerance_change=1e-15, line_search_fn='strong_wolfe')

    def closure():
        opt.zero_grad()
        loss = ((model(t, x) - torch.sin(3 * x)) ** 2).mean()
        loss.backward()
        return loss

    model.zero_grad(set_to_none=True)
    base = reset()
    for _ in range(4):
        opt.step(closure)
    torch.cuda.synchronize()
    after = torch.cuda.memory_allocated() - base
    st = opt.state[opt._params[0]]
    return {'width': width, 'depth': depth, 'history_size': history, 'param_bytes': p_bytes,
            'kept_after_steps_in_params': after / p_bytes, 'pairs_kept': len(st.get('old_dirs', [])),
            'peak_in_params': (torch.cuda.max_memory_allocated() - base) / p_bytes}


def sparse_adam(vocab, dim, batch, neg):
    emb_in = nn.Embedding(vocab, dim, sparse=True).cuda()
    emb_out = nn.Embedding(vocab, dim, sparse=True).cuda()
    p_bytes = 2 * vocab * dim * 4
    opt = torch.optim.SparseAdam(list(emb_in.parameters()) + list(emb_out.parameters()), lr=1e-3)
    res = {'vocab': vocab, 'dim': dim, 'batch': batch, 'neg': neg, 'param_bytes': p_bytes}
    for rep in range(3):
        base = reset()
        c = torch.randint(0, vocab, (batch,), device='cuda')
        o = torch.randint(0, vocab, (batch,), device='cuda')
        ng = torch.randint(0, vocab, (batch, neg), device='cuda')
        v, u, n = emb_in(c), emb_out(o), emb_out(ng)
        loss = -(torch.nn.functional.logsigmoid((v * u).sum(-1)) +
                 torch.nn.functional.logsigmoid(-torch.bmm(n, v.unsqueeze(2)).squeeze(2)).sum(-1)).mean()
        opt.zero_grad()
        loss.backward()
        torch.cuda.synchronize()
        after_backward = torch.cuda.memory_allocated() - base
        grad = emb_out.weight.grad
        opt.step()
        torch.cuda.synchronize()
        st = opt.state[emb_in.weight]
        res[f'rep{rep}'] = {'peak_above_start': torch.cuda.max_memory_allocated() - base,
                            'after_backward': after_backward, 'after_step': torch.cuda.memory_allocated() - base,
                            'grad_is_sparse': bool(grad.is_sparse), 'grad_nnz_rows': int(grad._nnz()) if grad.is_sparse else None,
                            'exp_avg_sparse': bool(st['exp_avg'].is_sparse), 'exp_avg_numel': st['exp_avg'].numel()}
        del v, u, n, loss
    return res


def bart_generate(batch, src, beams, new_tokens, attn):
    from transformers import BartConfig, BartForConditionalGeneration, GenerationConfig
    cfg = BartConfig(vocab_size=50265, d_model=768, encoder_layers=6, decoder_layers=6, encoder_attention_heads=12,
                     decoder_attention_heads=12, encoder_ffn_dim=3072, decoder_ffn_dim=3072,
                     max_position_embeddings=1024, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                     decoder_start_token_id=2, attn_implementation=attn)
    model = BartForConditionalGeneration(cfg).to('cuda', dtype=torch.bfloat16).eval()
    gen = GenerationConfig(num_beams=beams, max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                           decoder_start_token_id=2, bos_token_id=0, eos_token_id=2, pad_token_id=1)
    ids = torch.randint(3, 50000, (batch, src), device='cuda')
    mask = torch.ones_like(ids)
    base = reset()
    with torch.inference_mode():
        out = model.generate(input_ids=ids, attention_mask=mask, generation_config=gen)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    del model
    return {'batch': batch, 'src': src, 'beams': beams, 'new_tokens': new_tokens, 'attn': attn, 'out_len': out.shape[1],
            'peak_above_weights': peak, 'peak_above_weights_mib': peak / MIB,
            'cross_kv_mib': 6 * 2 * batch * beams * src * 768 * 2 / MIB}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', required=True)
    args = ap.parse_args()
    results = {'torch': torch.__version__, 'device': torch.cuda.get_device_name(), 'derivatives': [], 'lbfgs': [],
               'sparse_adam': [], 'generate': []}
    try:
        import transformers
        results['transformers'] = transformers.__version__
    except Exception:
        pass

    def attempt(key, fn, *a):
        try:
            r = fn(*a)
            results[key].append(r)
            log(key, json.dumps(r))
        except Exception:
            results[key].append({'args': repr(a), 'error': traceback.format_exc()[-800:]})
            log(key, 'failed', a, traceback.format_exc()[-400:])
        with open(f'{args.out}/step_keeps.json', 'w') as fh:
            json.dump(results, fh, indent=1)

    for act in (nn.Tanh, nn.SiLU, nn.ReLU):
        for order in (0, 1, 2):
            attempt('derivatives', derivative_step, 32768, 512, 4, act, order)
    for order in (0, 1, 2):
        attempt('derivatives', derivative_step, 32768, 256, 8, nn.Tanh, order)
    attempt('lbfgs', lbfgs_state, 512, 4, 10)
    attempt('lbfgs', lbfgs_state, 256, 4, 50)
    attempt('sparse_adam', sparse_adam, 400_000, 128, 4096, 10)
    for batch, src, beams, new in ((16, 512, 4, 32), (16, 512, 1, 32)):
        attempt('generate', bart_generate, batch, src, beams, new, 'sdpa')
    log('done')


if __name__ == '__main__':
    main()
