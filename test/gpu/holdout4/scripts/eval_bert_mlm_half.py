"""Masked-LM accuracy of bert-base-uncased on synthetic text: model converted with .half(), evaluation under
torch.no_grad(); predictions are moved to the CPU per batch."""
import argparse

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForMaskedLM

MASK_ID, CLS_ID, SEP_ID, PAD_ID = 103, 101, 102, 0


class MaskedText(Dataset):
    def __init__(self, n, seq_len, vocab, mask_prob=0.15):
        ids = torch.randint(1000, vocab, (n, seq_len))
        ids[:, 0], ids[:, -1] = CLS_ID, SEP_ID
        labels = torch.full_like(ids, -100)
        mask = torch.rand(n, seq_len) < mask_prob
        mask[:, 0] = mask[:, -1] = False
        labels[mask] = ids[mask]
        ids[mask] = MASK_ID
        self.ids, self.labels = ids, labels

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.labels[i]}


def evaluate(model, loader):
    correct = total = 0
    all_preds = []
    with torch.no_grad():
        for batch in loader:
            input_ids = batch["input_ids"].cuda()
            labels = batch["labels"].cuda()
            logits = model(input_ids=input_ids, attention_mask=input_ids.ne(PAD_ID)).logits
            preds = logits.argmax(dim=-1)
            m = labels.ne(-100)
            correct += (preds[m] == labels[m]).sum().item()
            total += m.sum().item()
            all_preds.append(preds.cpu())
    return correct / max(total, 1), torch.cat(all_preds)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model_name_or_path", default="bert-base-uncased")
    ap.add_argument("--per_device_eval_batch_size", type=int, default=128)
    ap.add_argument("--max_seq_length", type=int, default=512)
    ap.add_argument("--num_eval_samples", type=int, default=1024)
    args = ap.parse_args()

    model = AutoModelForMaskedLM.from_pretrained(args.model_name_or_path)
    model = model.half().cuda().eval()
    ds = MaskedText(args.num_eval_samples, args.max_seq_length, model.config.vocab_size)
    loader = DataLoader(ds, batch_size=args.per_device_eval_batch_size)
    acc, preds = evaluate(model, loader)
    print(f"masked-token accuracy {acc:.4f} on {len(preds)} sequences")
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
