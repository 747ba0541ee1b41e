"""Pretrain BERT-base from scratch with masked language modelling (config built in code).

Masking is done by hand in the collate function (15% of tokens: 80% [MASK], 10% random, 10% kept);
unmasked positions get label -100. fp16 autocast + GradScaler, AdamW, linear warmup/decay.
"""
import torch
from torch.utils.data import DataLoader, Dataset
from transformers import BertConfig, BertForMaskedLM, get_linear_schedule_with_warmup

VOCAB = 30522
MAX_SEQ_LEN = 512
BATCH_SIZE = 48
MLM_PROB = 0.15
MASK_ID, CLS_ID, SEP_ID, PAD_ID = 103, 101, 102, 0
NUM_STEPS = 5


class Sentences(Dataset):
    def __init__(self, n):
        self.lengths = torch.randint(200, MAX_SEQ_LEN - 1, (n,))

    def __len__(self):
        return len(self.lengths)

    def __getitem__(self, i):
        body = torch.randint(1000, VOCAB, (int(self.lengths[i]),))
        return torch.cat([torch.tensor([CLS_ID]), body, torch.tensor([SEP_ID])])


def mlm_collate(batch):
    # pad every batch to the model's max length (static shapes)
    ids = torch.full((len(batch), MAX_SEQ_LEN), PAD_ID, dtype=torch.long)
    attn = torch.zeros_like(ids)
    for i, seq in enumerate(batch):
        ids[i, : len(seq)] = seq
        attn[i, : len(seq)] = 1
    labels = ids.clone()
    special = (ids == CLS_ID) | (ids == SEP_ID) | (ids == PAD_ID)
    prob = torch.full(ids.shape, MLM_PROB)
    prob.masked_fill_(special, 0.0)
    masked = torch.bernoulli(prob).bool()
    labels[~masked] = -100
    replace = torch.bernoulli(torch.full(ids.shape, 0.8)).bool() & masked
    ids[replace] = MASK_ID
    rand = torch.bernoulli(torch.full(ids.shape, 0.5)).bool() & masked & ~replace
    ids[rand] = torch.randint(VOCAB, ids.shape)[rand]
    return {"input_ids": ids, "attention_mask": attn, "labels": labels}


config = BertConfig(vocab_size=VOCAB, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                    intermediate_size=3072, max_position_embeddings=MAX_SEQ_LEN)
model = BertForMaskedLM(config).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-6, weight_decay=0.01)
sched = get_linear_schedule_with_warmup(opt, num_warmup_steps=2, num_training_steps=NUM_STEPS)
scaler = torch.amp.GradScaler("cuda")
loader = DataLoader(Sentences(BATCH_SIZE * NUM_STEPS), batch_size=BATCH_SIZE, collate_fn=mlm_collate,
                    shuffle=True, num_workers=2)

model.train()
for step, batch in enumerate(loader):
    batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(**batch).loss
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(opt)
    scaler.update()
    sched.step()
    opt.zero_grad(set_to_none=True)
    print(f"step {step} mlm loss {loss.item():.3f}")
