"""Domain-adaptive MLM pre-training for a BERT-base encoder, with manual gradient accumulation."""
import torch
from torch.utils.data import DataLoader, Dataset
from transformers import BertConfig, BertForMaskedLM, get_linear_schedule_with_warmup

cfg = {
    "tokenizer_max_length": 512,   # what tokenizer(...) truncates to
    "seq_len": 128,                # sentences are short: we pack / pad to 128
    "batch_size": 32,
    "grad_accum_steps": 4,
    "num_updates": 3,
    "lr": 1e-4,
    "warmup": 1,
    "mlm_probability": 0.15,
    "vocab_size": 30522,
}


class LineByLine(Dataset):
    def __init__(self, n, seq_len, vocab_size):
        self.ids = torch.randint(999, vocab_size, (n, seq_len))
        self.ids[:, 0], self.ids[:, -1] = 101, 102

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return self.ids[i]


def mask_tokens(inputs, mlm_probability, mask_token_id=103, vocab_size=30522):
    labels = inputs.clone()
    probability_matrix = torch.full(labels.shape, mlm_probability)
    special = (inputs == 101) | (inputs == 102) | (inputs == 0)
    probability_matrix.masked_fill_(special, 0.0)
    masked = torch.bernoulli(probability_matrix).bool()
    labels[~masked] = -100
    replaced = torch.bernoulli(torch.full(labels.shape, 0.8)).bool() & masked
    inputs = inputs.clone()
    inputs[replaced] = mask_token_id
    rand = torch.bernoulli(torch.full(labels.shape, 0.5)).bool() & masked & ~replaced
    inputs[rand] = torch.randint(vocab_size, labels.shape)[rand]
    return inputs, labels


def main():
    device = torch.device("cuda")
    config = BertConfig(vocab_size=cfg["vocab_size"], max_position_embeddings=cfg["tokenizer_max_length"])
    model = BertForMaskedLM(config).to(device)

    n_micro = cfg["num_updates"] * cfg["grad_accum_steps"]
    loader = DataLoader(LineByLine(cfg["batch_size"] * n_micro, cfg["seq_len"], cfg["vocab_size"]),
                        batch_size=cfg["batch_size"], shuffle=True)

    no_decay = ["bias", "LayerNorm.weight"]
    grouped = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
         "weight_decay": 0.01},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
         "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(grouped, lr=cfg["lr"])
    scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=cfg["warmup"],
                                                num_training_steps=cfg["num_updates"])

    model.train()
    optimizer.zero_grad()
    global_step = 0
    for step, batch in enumerate(loader):
        inputs, labels = mask_tokens(batch, cfg["mlm_probability"])
        inputs, labels = inputs.to(device), labels.to(device)
        outputs = model(input_ids=inputs, attention_mask=(inputs != 0).long(), labels=labels)
        loss = outputs.loss / cfg["grad_accum_steps"]
        loss.backward()
        if (step + 1) % cfg["grad_accum_steps"] == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            global_step += 1
            print(f"update {global_step} loss {loss.item() * cfg['grad_accum_steps']:.4f}")


if __name__ == "__main__":
    main()
