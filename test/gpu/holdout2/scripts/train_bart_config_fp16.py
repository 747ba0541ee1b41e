"""Train a BART-base-sized summarizer from scratch (random init from an explicit config)."""
import torch
from torch.utils.data import DataLoader, Dataset
from transformers import BartConfig, BartForConditionalGeneration

MAX_SOURCE_LEN = 512
MAX_TARGET_LEN = 128
BATCH_SIZE = 16
TRAIN_STEPS = 4
EVAL_STEPS = 2
LEARNING_RATE = 5e-4
VOCAB = 50265
PAD, BOS, EOS = 1, 0, 2

config = BartConfig(
    vocab_size=VOCAB,
    d_model=768,
    encoder_layers=6,
    decoder_layers=6,
    encoder_attention_heads=12,
    decoder_attention_heads=12,
    encoder_ffn_dim=3072,
    decoder_ffn_dim=3072,
    max_position_embeddings=1024,
    dropout=0.1,
    pad_token_id=PAD,
    bos_token_id=BOS,
    eos_token_id=EOS,
    decoder_start_token_id=EOS,
    forced_eos_token_id=EOS,
)


class Articles(Dataset):
    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.docs = [torch.randint(4, VOCAB, (int(torch.randint(300, 900, (1,), generator=g)),), generator=g)
                     for _ in range(n)]
        self.sums = [torch.randint(4, VOCAB, (int(torch.randint(30, 200, (1,), generator=g)),), generator=g)
                     for _ in range(n)]

    def __len__(self):
        return len(self.docs)

    def __getitem__(self, i):
        return self.docs[i], self.sums[i]


def pad_to(seqs, length, value):
    out = torch.full((len(seqs), length), value, dtype=torch.long)
    for i, s in enumerate(seqs):
        s = s[:length]
        out[i, :len(s)] = s
    return out


def collate(batch):
    docs, sums = zip(*batch)
    docs = [torch.cat([torch.tensor([BOS]), d[:MAX_SOURCE_LEN - 2], torch.tensor([EOS])]) for d in docs]
    sums = [torch.cat([torch.tensor([BOS]), s[:MAX_TARGET_LEN - 2], torch.tensor([EOS])]) for s in sums]
    input_ids = pad_to(docs, MAX_SOURCE_LEN, PAD)
    labels = pad_to(sums, MAX_TARGET_LEN, -100)
    return {"input_ids": input_ids, "attention_mask": (input_ids != PAD).long(), "labels": labels}


model = BartForConditionalGeneration(config).cuda()
print(f"params: {model.num_parameters() / 1e6:.1f}M")

optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, weight_decay=0.01, fused=True)
scaler = torch.amp.GradScaler("cuda", init_scale=2.0 ** 12)
train_loader = DataLoader(Articles(BATCH_SIZE * TRAIN_STEPS, 0), batch_size=BATCH_SIZE, shuffle=True,
                          collate_fn=collate)
eval_loader = DataLoader(Articles(BATCH_SIZE * EVAL_STEPS, 1), batch_size=BATCH_SIZE, collate_fn=collate)

model.train()
for step, batch in enumerate(train_loader):
    batch = {k: v.cuda() for k, v in batch.items()}
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(**batch).loss
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    print(f"step {step}: loss {loss.item():.3f}, scale {scaler.get_scale()}")

model.eval()
eval_loss = 0.0
with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
    for batch in eval_loader:
        batch = {k: v.cuda() for k, v in batch.items()}
        eval_loss += model(**batch).loss.item()
print(f"eval loss: {eval_loss / EVAL_STEPS:.3f}")
