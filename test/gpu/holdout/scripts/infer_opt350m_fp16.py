# Perplexity of OPT-350m on held-out shards, fp16 weights, inference only.
import math

import torch
from torch.utils.data import DataLoader, TensorDataset
from transformers import AutoModelForCausalLM

MODEL = "facebook/opt-350m"
BATCH_SIZE = 16
CONTEXT = 1024
N_BATCHES = 6

model = AutoModelForCausalLM.from_pretrained(MODEL, torch_dtype=torch.float16, device_map="auto")
model.eval()

# stand-in for the tokenized evaluation shards
ids = torch.randint(4, 50265, (BATCH_SIZE * N_BATCHES, CONTEXT))
loader = DataLoader(TensorDataset(ids), batch_size=BATCH_SIZE)

nll_sum, n_tokens = 0.0, 0
with torch.inference_mode():
    for (batch,) in loader:
        batch = batch.to(model.device)
        out = model(input_ids=batch, labels=batch)
        n = batch.numel() - batch.size(0)
        nll_sum += out.loss.float().item() * n
        n_tokens += n

print(f"perplexity: {math.exp(nll_sum / n_tokens):.2f} over {n_tokens} tokens")
