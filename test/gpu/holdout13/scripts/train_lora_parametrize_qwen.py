"""Hand-written LoRA on a frozen Qwen2.5-0.5B through torch.nn.utils.parametrize (minLoRA-style).

Each targeted nn.Linear gets a parametrization W -> W + (B @ A) * alpha / r, so `module.weight` is
recomputed at every forward. Base weights stay frozen in bf16; the adapters are fp32.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as parametrize
from transformers import AutoModelForCausalLM


class LoRAParametrization(nn.Module):
    def __init__(self, fan_out, fan_in, rank, alpha, dropout=0.0):
        super().__init__()
        self.lora_A = nn.Parameter(torch.empty(rank, fan_in))
        self.lora_B = nn.Parameter(torch.zeros(fan_out, rank))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        self.scale = alpha / rank

    def forward(self, W):
        return W + (self.lora_B @ self.lora_A).to(W.dtype) * self.scale


def add_lora(model, targets, rank, alpha):
    n = 0
    for name, module in model.named_modules():
        if isinstance(module, nn.Linear) and name.split(".")[-1] in targets:
            out_f, in_f = module.weight.shape
            lora = LoRAParametrization(out_f, in_f, rank, alpha).to(module.weight.device)
            parametrize.register_parametrization(module, "weight", lora)
            n += 1
    return n


def main(model_id="Qwen/Qwen2.5-0.5B", rank=16, alpha=32, targets=("q_proj", "k_proj", "v_proj", "o_proj"),
         batch_size=8, seq_len=1024, steps=5, lr=2e-4):
    model = AutoModelForCausalLM.from_pretrained(model_id, dtype=torch.bfloat16).cuda()
    for p in model.parameters():
        p.requires_grad_(False)
    n = add_lora(model, set(targets), rank, alpha)
    trainable = [p for p in model.parameters() if p.requires_grad]
    print(f"LoRA on {n} linears, trainable {sum(p.numel() for p in trainable) / 1e6:.2f}M")

    opt = torch.optim.AdamW(trainable, lr=lr, weight_decay=0.0)
    vocab = model.config.vocab_size
    model.train()
    for step in range(steps):
        ids = torch.randint(0, vocab, (batch_size, seq_len), device="cuda")
        logits = model(input_ids=ids).logits
        loss = F.cross_entropy(logits[:, :-1].float().reshape(-1, vocab), ids[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        print(f"step {step}: loss {loss.item():.4f}")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
