"""1.1B Llama (TinyLlama shape) trained from scratch; weights are created directly on the GPU."""
import torch
import torch.nn.functional as F
from transformers import LlamaConfig, LlamaForCausalLM

# TinyLlama-1.1B architecture
HIDDEN = 2048
LAYERS = 22
HEADS = 32
KV_HEADS = 4
FFN = 5632
VOCAB = 32000

BATCH = 4
SEQ = 1024
STEPS = 4
LR = 4e-4


def build_model():
    config = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=HIDDEN,
        intermediate_size=FFN,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        num_key_value_heads=KV_HEADS,
        max_position_embeddings=2048,
        tie_word_embeddings=False,
    )
    with torch.device("cuda"):
        model = LlamaForCausalLM(config)
    return model


def main():
    model = build_model()
    print(f"{sum(p.numel() for p in model.parameters()) / 1e9:.2f}B params, dtype {next(model.parameters()).dtype}")
    opt = torch.optim.AdamW(model.parameters(), lr=LR, betas=(0.9, 0.95), weight_decay=0.1)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=STEPS)

    model.train()
    for step in range(STEPS):
        tokens = torch.randint(0, VOCAB, (BATCH, SEQ + 1), device="cuda")
        x, y = tokens[:, :-1], tokens[:, 1:]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(input_ids=x).logits
        loss = F.cross_entropy(logits.float().view(-1, VOCAB), y.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        print(f"step {step} loss {loss.item():.3f}")


if __name__ == "__main__":
    main()
