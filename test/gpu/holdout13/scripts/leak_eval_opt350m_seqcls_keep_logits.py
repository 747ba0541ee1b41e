"""Fine-tune OPT-350m for 3-way NLI, then validate.

DELIBERATE LEAK (kept on purpose for the held-out set): `validate()` runs without torch.no_grad() and appends
every batch's `outputs.logits` (still attached to its autograd graph, on the GPU) to a list, so the activations
of all validation batches stay alive until the list is dropped.
"""
import torch
from torch.utils.data import DataLoader, TensorDataset
from transformers import AutoModelForSequenceClassification

MODEL = "facebook/opt-350m"
TRAIN_BS, EVAL_BS = 8, 8
SEQ = 256
TRAIN_STEPS, EVAL_BATCHES = 3, 5


def make_split(n, seed):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(4, 50000, (n, SEQ), generator=g)
    labels = torch.randint(0, 3, (n,), generator=g)
    return TensorDataset(ids, labels)


def train(model, loader, optimizer):
    model.train()
    for step, (ids, labels) in enumerate(loader):
        out = model(input_ids=ids.cuda(), labels=labels.cuda())
        out.loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(f"train step {step} loss {out.loss.item():.4f}")


def validate(model, loader):
    model.eval()
    all_logits, all_labels = [], []
    for ids, labels in loader:                      # no torch.no_grad() here
        outputs = model(input_ids=ids.cuda())
        all_logits.append(outputs.logits)           # keeps the graph of every batch
        all_labels.append(labels.cuda())
        print(f"  eval batch, allocated {torch.cuda.memory_allocated() / 2**30:.2f} GiB")
    logits = torch.cat(all_logits)
    labels = torch.cat(all_labels)
    return (logits.argmax(-1) == labels).float().mean().item()


def main():
    model = AutoModelForSequenceClassification.from_pretrained(MODEL, num_labels=3, dtype=torch.float32).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    train_loader = DataLoader(make_split(TRAIN_BS * TRAIN_STEPS, 0), batch_size=TRAIN_BS, shuffle=True)
    val_loader = DataLoader(make_split(EVAL_BS * EVAL_BATCHES, 1), batch_size=EVAL_BS)
    train(model, train_loader, optimizer)
    acc = validate(model, val_loader)
    print(f"val acc {acc:.3f}; peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
