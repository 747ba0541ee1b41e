"""NER-style token classification with a RoBERTa-base sized model built from a config (no checkpoint)."""
import torch
from torch.utils.data import DataLoader, Dataset
from transformers import RobertaConfig, RobertaForTokenClassification

LABELS = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]

hparams = {
    "batch_size": 32,
    "max_seq_length": 256,
    "lr": 3e-5,
    "warmup_ratio": 0.1,
    "num_train_steps": 5,
    "grad_clip": 1.0,
}


class SyntheticNER(Dataset):
    def __init__(self, n, seq_len, vocab_size, num_labels):
        self.ids = torch.randint(3, vocab_size, (n, seq_len))
        self.ids[:, 0] = 0  # <s>
        self.ids[:, -1] = 2  # </s>
        self.labels = torch.randint(0, num_labels, (n, seq_len))
        # special tokens and "sub-word continuations" are not scored
        self.labels[:, 0] = -100
        self.labels[:, -1] = -100
        self.labels[:, 1::4] = -100

    def __len__(self):
        return self.ids.size(0)

    def __getitem__(self, i):
        return self.ids[i], self.labels[i]


config = RobertaConfig(
    vocab_size=50265,
    hidden_size=768,
    num_hidden_layers=12,
    num_attention_heads=12,
    intermediate_size=3072,
    max_position_embeddings=514,
    type_vocab_size=1,
    pad_token_id=1,
    bos_token_id=0,
    eos_token_id=2,
    num_labels=len(LABELS),
    id2label=dict(enumerate(LABELS)),
    label2id={l: i for i, l in enumerate(LABELS)},
)
model = RobertaForTokenClassification(config).cuda()

dataset = SyntheticNER(hparams["batch_size"] * hparams["num_train_steps"], hparams["max_seq_length"],
                       config.vocab_size, config.num_labels)
loader = DataLoader(dataset, batch_size=hparams["batch_size"], shuffle=True)

optimizer = torch.optim.AdamW(model.parameters(), lr=hparams["lr"])
warmup = int(hparams["warmup_ratio"] * hparams["num_train_steps"]) or 1
scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.1, total_iters=warmup)
scaler = torch.amp.GradScaler()

model.train()
for step, (input_ids, labels) in enumerate(loader):
    input_ids = input_ids.cuda()
    labels = labels.cuda()
    attention_mask = (input_ids != config.pad_token_id).long()
    with torch.autocast("cuda", dtype=torch.float16):
        out = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels)
    scaler.scale(out.loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), hparams["grad_clip"])
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    scheduler.step()
    print(step, round(out.loss.item(), 4), scaler.get_scale())
