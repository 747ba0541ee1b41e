"""Train an opus-mt sized Marian model from a config written in code (en->de), fp16 AMP, padded batches."""
import math
import random

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import MarianConfig, MarianMTModel, get_linear_schedule_with_warmup

config = dict(
    vocab_size=58101,
    d_model=512,
    encoder_layers=6,
    decoder_layers=6,
    encoder_attention_heads=8,
    decoder_attention_heads=8,
    encoder_ffn_dim=2048,
    decoder_ffn_dim=2048,
    max_position_embeddings=512,
    pad_token_id=58100,
    decoder_start_token_id=58100,
    eos_token_id=0,
    scale_embedding=True,
    share_encoder_decoder_embeddings=True,
)
train_cfg = {"batch_size": 64, "max_source_length": 128, "max_target_length": 128, "lr": 5e-4,
             "warmup": 4, "steps": 10, "label_smoothing": 0.1}


class ParallelCorpus(Dataset):
    def __init__(self, n, pad_id):
        self.n, self.pad_id = n, pad_id

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        src_len = random.randint(40, train_cfg["max_source_length"])
        tgt_len = random.randint(40, train_cfg["max_target_length"])
        return torch.randint(1, 58000, (src_len,)), torch.randint(1, 58000, (tgt_len,))


def collate(batch, pad_id=config["pad_token_id"]):
    src, tgt = zip(*batch)
    src_max = train_cfg["max_source_length"]
    tgt_max = train_cfg["max_target_length"]
    input_ids = torch.full((len(src), src_max), pad_id)
    labels = torch.full((len(tgt), tgt_max), -100)
    for j, (s, t) in enumerate(zip(src, tgt)):
        input_ids[j, : len(s)] = s
        labels[j, : len(t)] = t
    return {"input_ids": input_ids, "attention_mask": (input_ids != pad_id).long(), "labels": labels}


def main():
    model = MarianMTModel(MarianConfig(**config)).cuda()
    loader = DataLoader(ParallelCorpus(train_cfg["batch_size"] * train_cfg["steps"], config["pad_token_id"]),
                        batch_size=train_cfg["batch_size"], shuffle=True, collate_fn=collate)
    no_decay = ("bias", "layer_norm.weight")
    groups = [
        {"params": [p for n, p in model.named_parameters() if not n.endswith(no_decay)], "weight_decay": 0.01},
        {"params": [p for n, p in model.named_parameters() if n.endswith(no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=train_cfg["lr"], betas=(0.9, 0.98))
    scheduler = get_linear_schedule_with_warmup(optimizer, train_cfg["warmup"], train_cfg["steps"])
    scaler = torch.amp.GradScaler("cuda")
    loss_fct = torch.nn.CrossEntropyLoss(ignore_index=-100, label_smoothing=train_cfg["label_smoothing"])

    model.train()
    for step, batch in enumerate(loader):
        batch = {k: v.cuda() for k, v in batch.items()}
        labels = batch["labels"]
        # shift right the way Marian does it: decoder starts from pad
        decoder_input_ids = labels.new_full(labels.shape, config["decoder_start_token_id"])
        decoder_input_ids[:, 1:] = labels[:, :-1].masked_fill(labels[:, :-1] == -100, config["pad_token_id"])
        with torch.autocast("cuda", dtype=torch.float16):
            out = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                        decoder_input_ids=decoder_input_ids)
            loss = loss_fct(out.logits.view(-1, out.logits.size(-1)), labels.view(-1))
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        print(f"step {step} loss {loss.item():.3f} ppl {math.exp(min(loss.item(), 20)):.1f}")


if __name__ == "__main__":
    main()
