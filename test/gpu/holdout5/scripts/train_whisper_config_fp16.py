"""Speech recognition: train a Whisper-base sized encoder-decoder from scratch on log-mel features.

Features are random (80 mel bins x 3000 frames = 30 s, which is what Whisper's encoder expects).
"""
import torch
from torch.utils.data import DataLoader, Dataset
from transformers import WhisperConfig, WhisperForConditionalGeneration

BATCH_SIZE = 32
N_MELS = 80
N_FRAMES = 3000
MAX_LABEL_LEN = 128
NUM_STEPS = 5
LEARNING_RATE = 1e-4


class FakeASR(Dataset):
    def __init__(self, n, vocab_size):
        self.n = n
        self.vocab_size = vocab_size

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        feats = torch.randn(N_MELS, N_FRAMES)
        n_tok = int(torch.randint(MAX_LABEL_LEN // 2, MAX_LABEL_LEN + 1, (1,)))
        labels = torch.full((MAX_LABEL_LEN,), -100, dtype=torch.long)
        labels[:n_tok] = torch.randint(0, 50000, (n_tok,))
        return {"input_features": feats, "labels": labels}


config = WhisperConfig(
    vocab_size=51865,
    num_mel_bins=N_MELS,
    d_model=512,
    encoder_layers=6,
    encoder_attention_heads=8,
    decoder_layers=6,
    decoder_attention_heads=8,
    encoder_ffn_dim=2048,
    decoder_ffn_dim=2048,
    max_source_positions=1500,
    max_target_positions=448,
)


def main():
    model = WhisperForConditionalGeneration(config)
    model.cuda()
    model.train()

    loader = DataLoader(FakeASR(BATCH_SIZE * NUM_STEPS, config.vocab_size), batch_size=BATCH_SIZE, num_workers=2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE)
    scaler = torch.amp.GradScaler("cuda")

    for step, batch in enumerate(loader):
        input_features = batch["input_features"].cuda()
        labels = batch["labels"].cuda()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(input_features=input_features, labels=labels).loss
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
        print(f"step {step}: loss {loss.item():.3f} (scale {scaler.get_scale()})")


if __name__ == "__main__":
    main()
