"""ELECTRA pre-training from scratch (replaced token detection): a small MLM generator proposes tokens at
masked positions, the discriminator classifies every token as original / replaced.

Both models are built from ElectraConfig (no checkpoint), trained jointly by one AdamW.
"""
import torch
from torch.utils.data import DataLoader, Dataset
from transformers import ElectraConfig, ElectraForMaskedLM, ElectraForPreTraining, get_linear_schedule_with_warmup

CONFIG = {
    "data": {"seq_len": 512, "batch_size": 32, "mask_prob": 0.15, "vocab_size": 30522},
    "generator": {"hidden_size": 256, "num_hidden_layers": 12, "num_attention_heads": 4, "intermediate_size": 1024,
                  "embedding_size": 768},
    "discriminator": {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
                      "intermediate_size": 3072, "embedding_size": 768},
    "optim": {"lr": 5e-4, "weight_decay": 0.01, "warmup": 100, "total_steps": 10000},
    "disc_weight": 50.0,
    "max_steps": 4,
}
MASK_ID, PAD_ID, CLS_ID, SEP_ID = 103, 0, 101, 102


class RandomTokens(Dataset):
    def __init__(self, n, seq_len, vocab):
        self.n, self.seq_len, self.vocab = n, seq_len, vocab

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        ids = torch.randint(1000, self.vocab, (self.seq_len,))
        ids[0], ids[-1] = CLS_ID, SEP_ID
        return {"input_ids": ids, "attention_mask": torch.ones(self.seq_len, dtype=torch.long)}


def mask_tokens(input_ids, prob):
    labels = input_ids.clone()
    special = (input_ids == CLS_ID) | (input_ids == SEP_ID) | (input_ids == PAD_ID)
    probs = torch.full(input_ids.shape, prob, device=input_ids.device).masked_fill(special, 0.0)
    masked = torch.bernoulli(probs).bool()
    labels[~masked] = -100
    gen_input = input_ids.masked_fill(masked, MASK_ID)
    return gen_input, labels, masked


def main():
    dc = CONFIG["data"]
    device = "cuda"
    gen_cfg = ElectraConfig(vocab_size=dc["vocab_size"], max_position_embeddings=dc["seq_len"], **CONFIG["generator"])
    disc_cfg = ElectraConfig(vocab_size=dc["vocab_size"], max_position_embeddings=dc["seq_len"],
                             **CONFIG["discriminator"])
    generator = ElectraForMaskedLM(gen_cfg).to(device)
    discriminator = ElectraForPreTraining(disc_cfg).to(device)
    discriminator.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    generator.train()
    discriminator.train()

    params = list(generator.parameters()) + list(discriminator.parameters())
    decay = [p for p in params if p.ndim >= 2]
    no_decay = [p for p in params if p.ndim < 2]
    oc = CONFIG["optim"]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": oc["weight_decay"]},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=oc["lr"], eps=1e-6)
    scheduler = get_linear_schedule_with_warmup(optimizer, oc["warmup"], oc["total_steps"])

    loader = DataLoader(RandomTokens(dc["batch_size"] * CONFIG["max_steps"], dc["seq_len"], dc["vocab_size"]),
                        batch_size=dc["batch_size"], shuffle=True)
    for step, batch in enumerate(loader):
        input_ids = batch["input_ids"].to(device)
        attention_mask = batch["attention_mask"].to(device)
        gen_input, mlm_labels, masked = mask_tokens(input_ids, dc["mask_prob"])

        with torch.autocast("cuda", dtype=torch.bfloat16):
            gen_out = generator(input_ids=gen_input, attention_mask=attention_mask, labels=mlm_labels)
            with torch.no_grad():
                logits = gen_out.logits[masked].float()
                gumbel = -torch.log(-torch.log(torch.rand_like(logits).clamp(1e-9, 1.0)).clamp(min=1e-9))
                sampled = torch.argmax(logits + gumbel, dim=-1)
                disc_input = input_ids.clone()
                disc_input[masked] = sampled
                disc_labels = (disc_input != input_ids).long()
            disc_out = discriminator(input_ids=disc_input, attention_mask=attention_mask, labels=disc_labels)
            loss = gen_out.loss + CONFIG["disc_weight"] * disc_out.loss

        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        print(f"step {step}: gen {gen_out.loss.item():.3f} disc {disc_out.loss.item():.4f} "
              f"replaced {disc_labels.float().mean().item():.3f}")


if __name__ == "__main__":
    main()
