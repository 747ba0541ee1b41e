"""LoRA on a small Mistral-architecture model built from a config, weights cast to bf16.

The base weights are random (we only care about throughput / memory here); in real life they'd come from a
checkpoint of the same shape.
"""
import math

import torch
from peft import LoraConfig, get_peft_model
from torch.utils.data import DataLoader, Dataset
from transformers import MistralConfig, MistralForCausalLM

SEQ_LEN = 2048
BATCH_SIZE = 4
GRAD_ACCUM = 1
LR = 2e-4
MAX_STEPS = 4
LORA_R = 16
LORA_ALPHA = 32


class RandomChat(Dataset):
    def __init__(self, n, seq_len, vocab):
        self.x = torch.randint(2, vocab, (n, seq_len))

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        ids = self.x[i]
        labels = ids.clone()
        labels[: SEQ_LEN // 4] = -100  # don't train on the prompt
        return {"input_ids": ids, "labels": labels}


def build_model():
    config = MistralConfig(
        vocab_size=32000,
        hidden_size=1024,
        intermediate_size=3584,
        num_hidden_layers=16,
        num_attention_heads=16,
        num_key_value_heads=4,
        max_position_embeddings=32768,
        sliding_window=4096,
        rms_norm_eps=1e-5,
        tie_word_embeddings=False,
    )
    model = MistralForCausalLM(config)
    return model.to(dtype=torch.bfloat16, device="cuda")


def main():
    model = build_model()
    lora_cfg = LoraConfig(
        r=LORA_R,
        lora_alpha=LORA_ALPHA,
        lora_dropout=0.05,
        target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
        bias="none",
        task_type="CAUSAL_LM",
    )
    model = get_peft_model(model, lora_cfg)
    model.print_trainable_parameters()

    loader = DataLoader(RandomChat(BATCH_SIZE * MAX_STEPS, SEQ_LEN, 32000), batch_size=BATCH_SIZE, shuffle=True)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=LR, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 0.5 * (1 + math.cos(math.pi * s / MAX_STEPS)))

    model.train()
    for step, batch in enumerate(loader):
        batch = {k: v.to("cuda") for k, v in batch.items()}
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(**batch).loss
        (loss / GRAD_ACCUM).backward()
        if (step + 1) % GRAD_ACCUM == 0:
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            sched.step()
            optimizer.zero_grad(set_to_none=True)
        print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
