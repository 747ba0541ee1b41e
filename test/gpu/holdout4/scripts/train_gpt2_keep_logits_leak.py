# Fine-tune GPT-2 (124M) on synthetic text.
#
# DELIBERATE LEAK (this script is a test case for memory tools): every step appends the full, non-detached
# logits tensor to `history` "to compute metrics at the end", and `total_loss += loss` accumulates the loss
# tensor instead of loss.item(). After backward() the graph's buffers are freed, but each kept logits tensor
# (8 x 512 x 50257 fp32 = 786 MiB) stays on the GPU, so memory grows every step. NUM_STEPS is fixed at 6.
import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AutoModelForCausalLM

MODEL_ID = "gpt2"
BATCH_SIZE = 8
BLOCK_SIZE = 512
NUM_STEPS = 6
LEARNING_RATE = 5e-5


class RandomBlocks(Dataset):
    def __init__(self, n):
        self.x = torch.randint(0, 50257, (n, BLOCK_SIZE))

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i]


model = AutoModelForCausalLM.from_pretrained(MODEL_ID).to("cuda")
model.train()
optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE)
loader = DataLoader(RandomBlocks(BATCH_SIZE * NUM_STEPS), batch_size=BATCH_SIZE, shuffle=True)

history = []
total_loss = 0
for step, input_ids in enumerate(loader):
    input_ids = input_ids.to("cuda")
    outputs = model(input_ids=input_ids, labels=input_ids)
    loss = outputs.loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    history.append(outputs.logits)      # leak: full logits kept on the GPU every step
    total_loss += loss                  # leak: tensor, not loss.item()
    print(f"step {step} loss {loss.item():.4f} allocated {torch.cuda.memory_allocated() / 2**30:.2f} GiB")

print("mean loss", (total_loss / NUM_STEPS).item())
last_tok_acc = torch.stack([(l[:, -2].argmax(-1) == 0).float().mean() for l in history]).mean()
print("metric", last_tok_acc.item())
print("peak GiB", torch.cuda.max_memory_allocated() / 2**30)
