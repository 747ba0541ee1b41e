"""Topic classification with a BERT encoder; every knob lives in configs/bert_cls.yaml."""
import os
import sys

import torch
import yaml
from torch.utils.data import DataLoader, Dataset
from transformers import BertConfig, BertForSequenceClassification

CONFIG_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "configs", "bert_cls.yaml")


def load_config(path):
    with open(path) as f:
        return yaml.safe_load(f)


class EncodedNews(Dataset):
    """What the tokenizer would have produced: ids, mask, label."""

    def __init__(self, n, seq_len, vocab_size, num_labels):
        self.ids = torch.randint(1000, vocab_size, (n, seq_len))
        self.ids[:, 0] = 101  # [CLS]
        self.mask = torch.ones(n, seq_len, dtype=torch.long)
        lengths = torch.randint(seq_len // 2, seq_len + 1, (n,))
        for i, L in enumerate(lengths.tolist()):
            self.ids[i, L:] = 0
            self.mask[i, L:] = 0
        self.labels = torch.randint(0, num_labels, (n,))

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "attention_mask": self.mask[i], "labels": self.labels[i]}


def main(config_path=CONFIG_PATH):
    cfg = load_config(config_path)
    mcfg, dcfg, tcfg = cfg["model"], cfg["data"], cfg["train"]
    device = torch.device("cuda")

    bert_config = BertConfig(**mcfg)
    model = BertForSequenceClassification(bert_config).to(device)

    train_ds = EncodedNews(tcfg["batch_size"] * dcfg["num_train_batches"], dcfg["max_seq_length"],
                           mcfg["vocab_size"], mcfg["num_labels"])
    eval_ds = EncodedNews(tcfg["eval_batch_size"] * dcfg["num_eval_batches"], dcfg["max_seq_length"],
                          mcfg["vocab_size"], mcfg["num_labels"])
    train_loader = DataLoader(train_ds, batch_size=tcfg["batch_size"], shuffle=True)
    eval_loader = DataLoader(eval_ds, batch_size=tcfg["eval_batch_size"])

    optimizer = torch.optim.AdamW(model.parameters(), lr=float(tcfg["lr"]), weight_decay=tcfg["weight_decay"])
    use_fp16 = tcfg.get("amp") == "fp16"
    scaler = torch.amp.GradScaler("cuda", enabled=use_fp16)

    for epoch in range(tcfg["epochs"]):
        model.train()
        for step, batch in enumerate(train_loader):
            batch = {k: v.to(device) for k, v in batch.items()}
            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=use_fp16):
                outputs = model(**batch)
                loss = outputs.loss
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), tcfg["grad_clip"])
            scaler.step(optimizer)
            scaler.update()
            if step % tcfg["log_every"] == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")

        model.eval()
        correct = total = 0
        with torch.no_grad():
            for batch in eval_loader:
                batch = {k: v.to(device) for k, v in batch.items()}
                with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=use_fp16):
                    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
                correct += (logits.argmax(-1) == batch["labels"]).sum().item()
                total += batch["labels"].numel()
        print(f"epoch {epoch} eval acc {correct / total:.3f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else CONFIG_PATH)
