"""Fine-tune GPT-2 on a text file with AdamW and bf16 autocast.

    python examples/train_gpt2.py --data corpus.txt
"""
import argparse

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AutoTokenizer, GPT2LMHeadModel

parser = argparse.ArgumentParser()
parser.add_argument("--data", default="corpus.txt")
parser.add_argument("--batch-size", type=int, default=8)
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("--lr", type=float, default=5e-5)
args = parser.parse_args()

BLOCK_SIZE = 512


class TextBlocks(Dataset):
    """Cuts the tokenized corpus into BLOCK_SIZE-token training examples."""

    def __init__(self, path, tokenizer):
        with open(path, encoding="utf-8") as f:
            ids = tokenizer(f.read(), return_tensors="pt").input_ids[0]
        usable = (len(ids) // BLOCK_SIZE) * BLOCK_SIZE
        self.blocks = ids[:usable].view(-1, BLOCK_SIZE)

    def __len__(self):
        return len(self.blocks)

    def __getitem__(self, i):
        return self.blocks[i]


device = "cuda"
tokenizer = AutoTokenizer.from_pretrained("gpt2")
model = GPT2LMHeadModel.from_pretrained("gpt2").to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)

data = TextBlocks(args.data, tokenizer)
split = max(1, len(data) // 20)
train_set, eval_set = torch.utils.data.random_split(data, [len(data) - split, split])
train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, drop_last=True)
eval_loader = DataLoader(eval_set, batch_size=args.batch_size)

for epoch in range(args.epochs):
    model.train()
    for step, input_ids in enumerate(train_loader):
        input_ids = input_ids.to(device)
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=input_ids, labels=input_ids).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step % 50 == 0:
            print(f"epoch {epoch} step {step} loss {loss.item():.4f}")

    model.eval()
    total = 0.0
    with torch.no_grad():
        for input_ids in eval_loader:
            input_ids = input_ids.to(device)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                total += model(input_ids=input_ids, labels=input_ids).loss.item()
    print(f"epoch {epoch} eval loss {total / max(1, len(eval_loader)):.4f}")

model.save_pretrained("gpt2-finetuned")
