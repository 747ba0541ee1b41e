"""Image captioning with VisionEncoderDecoderModel assembled from a ViTConfig encoder and a GPT2Config decoder
(both written in code, no checkpoint). fp16 AMP, captions padded to 64 tokens with -100 labels."""
import torch
from torch.utils.data import DataLoader, Dataset
from transformers import GPT2Config, ViTConfig, VisionEncoderDecoderConfig, VisionEncoderDecoderModel

IMAGE_SIZE = 224
CAPTION_LEN = 64
BATCH_SIZE = 48
VOCAB = 50257
BOS = EOS = PAD = 50256

enc_cfg = ViTConfig(image_size=IMAGE_SIZE, patch_size=16, hidden_size=768, num_hidden_layers=12,
                    num_attention_heads=12, intermediate_size=3072)
dec_cfg = GPT2Config(vocab_size=VOCAB, n_positions=1024, n_embd=768, n_layer=6, n_head=12,
                     bos_token_id=BOS, eos_token_id=EOS)
config = VisionEncoderDecoderConfig.from_encoder_decoder_configs(enc_cfg, dec_cfg)
config.decoder_start_token_id = BOS
config.pad_token_id = PAD
config.eos_token_id = EOS
model = VisionEncoderDecoderModel(config=config).cuda()


class Captions(Dataset):
    def __len__(self):
        return BATCH_SIZE * 8

    def __getitem__(self, i):
        n = torch.randint(12, CAPTION_LEN, ()).item()
        labels = torch.full((CAPTION_LEN,), -100)
        labels[:n] = torch.randint(0, VOCAB - 1, (n,))
        labels[n - 1] = EOS
        return torch.randn(3, IMAGE_SIZE, IMAGE_SIZE), labels


loader = DataLoader(Captions(), batch_size=BATCH_SIZE, shuffle=True, num_workers=2)
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.01)
scaler = torch.amp.GradScaler("cuda")

model.train()
for step, (pixel_values, labels) in enumerate(loader):
    pixel_values, labels = pixel_values.cuda(), labels.cuda()
    with torch.autocast("cuda", dtype=torch.float16):
        outputs = model(pixel_values=pixel_values, labels=labels)   # decoder_input_ids are shifted from labels
    optimizer.zero_grad()
    scaler.scale(outputs.loss).backward()
    scaler.step(optimizer)
    scaler.update()
    print(f"step {step}: loss {outputs.loss.item():.4f}")

model.eval()
with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
    generated = model.generate(pixel_values[:8], max_new_tokens=32, num_beams=3)
print(generated.shape)
