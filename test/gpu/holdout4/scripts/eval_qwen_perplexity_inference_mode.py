"""Perplexity of Qwen2.5-0.5B on a held-out token stream: an evaluation loop under torch.inference_mode(),
passing labels= so the model computes the shifted cross-entropy itself."""
import math

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForCausalLM

MODEL_NAME = "Qwen/Qwen2.5-0.5B"
EVAL_BATCH_SIZE = 8
CONTEXT_LENGTH = 1024
NUM_EVAL_BATCHES = 6
VOCAB = 151643  # ordinary tokens (the embedding matrix is padded to 151936)


class HeldOutChunks(Dataset):
    def __init__(self, n_chunks, length):
        g = torch.Generator().manual_seed(123)
        self.tokens = torch.randint(0, VOCAB, (n_chunks, length), generator=g)

    def __len__(self):
        return len(self.tokens)

    def __getitem__(self, i):
        return self.tokens[i]


model = AutoModelForCausalLM.from_pretrained(MODEL_NAME, device_map="cuda")
model.eval()
print("dtype:", next(model.parameters()).dtype)

loader = DataLoader(HeldOutChunks(EVAL_BATCH_SIZE * NUM_EVAL_BATCHES, CONTEXT_LENGTH), batch_size=EVAL_BATCH_SIZE)
nll_sum, n_tokens = 0.0, 0
with torch.inference_mode():
    for batch in loader:
        input_ids = batch.to("cuda")
        out = model(input_ids=input_ids, labels=input_ids, use_cache=False)
        ntok = input_ids.numel() - input_ids.size(0)
        nll_sum += out.loss.item() * ntok
        n_tokens += ntok
ppl = math.exp(nll_sum / n_tokens)
print(f"perplexity over {n_tokens} tokens: {ppl:.2f}")
print(f"peak: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")
