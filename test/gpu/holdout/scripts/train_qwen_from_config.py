"""Train a 12-layer Qwen2.5-style model from scratch.

Only the architecture comes from the hub (AutoConfig.from_pretrained); the weights are freshly initialised
with AutoModelForCausalLM.from_config.  No autocast and no explicit dtype: the model is used as constructed.
"""
import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AutoConfig, AutoModelForCausalLM

BASE = "Qwen/Qwen2.5-0.5B"
N_LAYERS = 12
BATCH_SIZE = 4
SEQ_LEN = 1024
STEPS = 5


class Shards(Dataset):
    def __init__(self, n, seq_len, vocab):
        self.x = torch.randint(0, vocab, (n, seq_len))

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i]


def main():
    config = AutoConfig.from_pretrained(BASE)
    config.num_hidden_layers = N_LAYERS          # half-depth variant for the ablation
    config.max_window_layers = N_LAYERS
    # build straight on the GPU: initialising ~300M parameters on the CPU takes far too long
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(config)
    print("param dtype:", next(model.parameters()).dtype)

    loader = DataLoader(Shards(BATCH_SIZE * STEPS, SEQ_LEN, config.vocab_size), batch_size=BATCH_SIZE)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)

    model.train()
    for step, ids in enumerate(loader):
        ids = ids.cuda()
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(f"step {step} loss {loss.item():.3f}")


if __name__ == "__main__":
    main()
