"""Knowledge distillation: frozen bert-base-uncased teacher -> 4-layer, 384-wide student (sentiment, 5 classes)."""
import argparse

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForSequenceClassification, BertConfig, BertForSequenceClassification


def get_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--teacher", default="bert-base-uncased")
    ap.add_argument("--num_labels", type=int, default=5)
    ap.add_argument("--max_len", type=int, default=256)
    ap.add_argument("--bs", type=int, default=64, dest="batch_size")
    ap.add_argument("--temperature", type=float, default=2.0)
    ap.add_argument("--alpha", type=float, default=0.7)
    ap.add_argument("--steps", type=int, default=10)
    return ap.parse_args()


class Reviews(Dataset):
    def __init__(self, n, max_len, num_labels):
        self.n, self.max_len, self.num_labels = n, max_len, num_labels

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        ids = torch.randint(1000, 30000, (self.max_len,))
        ids[0] = 101
        ids[-1] = 102
        return {"input_ids": ids, "attention_mask": torch.ones(self.max_len, dtype=torch.long),
                "labels": torch.tensor(i % self.num_labels)}


def main():
    args = get_args()
    teacher = AutoModelForSequenceClassification.from_pretrained(args.teacher, num_labels=args.num_labels)
    teacher.cuda().eval()
    for p in teacher.parameters():
        p.requires_grad_(False)

    student_cfg = BertConfig(vocab_size=30522, hidden_size=384, num_hidden_layers=4, num_attention_heads=12,
                             intermediate_size=1536, num_labels=args.num_labels)
    student = BertForSequenceClassification(student_cfg).cuda()
    # start the student's embeddings from the teacher's, projected down
    with torch.no_grad():
        w = teacher.bert.embeddings.word_embeddings.weight[:, :384]
        student.bert.embeddings.word_embeddings.weight.copy_(w)

    opt = torch.optim.AdamW(student.parameters(), lr=1e-4, weight_decay=0.01)
    scaler = torch.amp.GradScaler("cuda")
    loader = DataLoader(Reviews(args.batch_size * args.steps, args.max_len, args.num_labels),
                        batch_size=args.batch_size, shuffle=True)
    T = args.temperature
    student.train()
    for step, batch in enumerate(loader):
        batch = {k: v.cuda() for k, v in batch.items()}
        labels = batch.pop("labels")
        with torch.autocast("cuda", dtype=torch.float16):
            with torch.no_grad():
                t_logits = teacher(**batch).logits
            s_logits = student(**batch).logits
            kd = F.kl_div(F.log_softmax(s_logits / T, -1), F.softmax(t_logits / T, -1),
                          reduction="batchmean") * T * T
            ce = F.cross_entropy(s_logits, labels)
            loss = args.alpha * kd + (1 - args.alpha) * ce
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        print(f"step {step} kd {kd.item():.4f} ce {ce.item():.4f}")


if __name__ == "__main__":
    main()
