"""CTC fine-tuning of a wav2vec2-base-sized model (Wav2Vec2Config built in code) on 12 s synthetic utterances,
fp16 autocast + GradScaler, HF gradient checkpointing, frozen convolutional feature encoder."""
import os

import torch
import yaml
from torch.utils.data import DataLoader, Dataset
from transformers import Wav2Vec2Config, Wav2Vec2ForCTC

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "configs", "wav2vec2_ctc.yaml")) as f:
    hp = yaml.safe_load(f)

NUM_SAMPLES = hp["sampling_rate"] * hp["max_duration_s"]   # 192000 samples per utterance


class SyntheticSpeech(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        audio = torch.randn(NUM_SAMPLES) * 0.1
        n_chars = int(torch.randint(hp["max_label_len"] // 2, hp["max_label_len"] + 1, ()))
        text = torch.randint(1, hp["vocab_size"], (n_chars,))
        return audio, text


def collate(batch):
    audio = torch.stack([a for a, _ in batch])
    labels = torch.full((len(batch), hp["max_label_len"]), -100, dtype=torch.long)
    for i, (_, t) in enumerate(batch):
        labels[i, : len(t)] = t
    return audio, labels


config = Wav2Vec2Config(
    vocab_size=hp["vocab_size"],
    hidden_size=hp["hidden_size"],
    num_hidden_layers=hp["num_hidden_layers"],
    num_attention_heads=hp["num_attention_heads"],
    intermediate_size=hp["intermediate_size"],
    layerdrop=hp["layerdrop"],
    mask_time_prob=hp["mask_time_prob"],
    ctc_loss_reduction="mean",
    pad_token_id=0,
)
model = Wav2Vec2ForCTC(config)
if hp["freeze_feature_encoder"]:
    model.freeze_feature_encoder()
if hp["gradient_checkpointing"]:
    model.gradient_checkpointing_enable()
model.cuda().train()

optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=hp["learning_rate"])
scaler = torch.amp.GradScaler("cuda", init_scale=hp["init_loss_scale"], enabled=hp["fp16"])
loader = DataLoader(SyntheticSpeech(hp["per_device_train_batch_size"] * hp["max_steps"]),
                    batch_size=hp["per_device_train_batch_size"], collate_fn=collate, shuffle=True)

for step, (audio, labels) in enumerate(loader):
    audio, labels = audio.cuda(), labels.cuda()
    with torch.autocast("cuda", dtype=torch.float16, enabled=hp["fp16"]):
        loss = model(input_values=audio, labels=labels).loss
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    print(f"step {step} ctc loss {loss.item():.3f} scale {scaler.get_scale()}")

print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")
