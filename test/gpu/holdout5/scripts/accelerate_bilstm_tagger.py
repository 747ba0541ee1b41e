"""BiLSTM sequence tagger trained with Hugging Face Accelerate (fp16 mixed precision, gradient accumulation)."""
import argparse

import torch
import torch.nn as nn
from accelerate import Accelerator
from torch.utils.data import DataLoader, Dataset


class BiLSTMTagger(nn.Module):
    def __init__(self, vocab_size, embed_dim, hidden_dim, num_tags, num_layers=2, dropout=0.3, pad_idx=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=pad_idx)
        self.lstm = nn.LSTM(embed_dim, hidden_dim, num_layers=num_layers, bidirectional=True,
                            batch_first=True, dropout=dropout)
        self.dropout = nn.Dropout(dropout)
        self.proj = nn.Linear(2 * hidden_dim, hidden_dim)
        self.classifier = nn.Linear(hidden_dim, num_tags)

    def forward(self, tokens):
        x = self.dropout(self.embedding(tokens))
        x, _ = self.lstm(x)
        x = torch.tanh(self.proj(self.dropout(x)))
        return self.classifier(x)


class RandomTagged(Dataset):
    def __init__(self, n, seq_len, vocab_size, num_tags):
        self.tokens = torch.randint(1, vocab_size, (n, seq_len))
        self.tags = torch.randint(0, num_tags, (n, seq_len))

    def __len__(self):
        return len(self.tokens)

    def __getitem__(self, i):
        return self.tokens[i], self.tags[i]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vocab_size", type=int, default=100000)
    parser.add_argument("--embed_dim", type=int, default=300)
    parser.add_argument("--hidden_dim", type=int, default=1024)
    parser.add_argument("--num_tags", type=int, default=25)
    parser.add_argument("--seq_len", type=int, default=512)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--grad_accum", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--max_steps", type=int, default=4)
    args = parser.parse_args()

    accelerator = Accelerator(mixed_precision="fp16", gradient_accumulation_steps=args.grad_accum)

    model = BiLSTMTagger(args.vocab_size, args.embed_dim, args.hidden_dim, args.num_tags)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    dataset = RandomTagged(args.batch_size * args.grad_accum * args.max_steps, args.seq_len, args.vocab_size,
                           args.num_tags)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=100, gamma=0.5)
    model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, loader, scheduler)
    criterion = nn.CrossEntropyLoss(ignore_index=-100)

    model.train()
    for step, (tokens, tags) in enumerate(loader):
        with accelerator.accumulate(model):
            logits = model(tokens)
            loss = criterion(logits.view(-1, args.num_tags), tags.view(-1))
            accelerator.backward(loss)
            if accelerator.sync_gradients:
                accelerator.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
        accelerator.print(f"micro-step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
