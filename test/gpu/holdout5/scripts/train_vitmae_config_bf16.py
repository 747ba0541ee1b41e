"""Self-supervised MAE pre-training with the transformers implementation (ViT-B/16 encoder, 8-layer decoder)."""
import torch
from torch.utils.data import DataLoader, Dataset
from transformers import ViTMAEConfig, ViTMAEForPreTraining

IMAGE_SIZE = 224
PATCH = 16
BATCH = 256
MASK_RATIO = 0.75
BASE_LR = 1.5e-4
STEPS = 5

# MAE paper scaling rule: lr = base_lr * batch / 256
LR = BASE_LR * BATCH / 256


class UnlabeledImages(Dataset):
    def __len__(self):
        return BATCH * STEPS

    def __getitem__(self, i):
        return torch.rand(3, IMAGE_SIZE, IMAGE_SIZE)


def main():
    config = ViTMAEConfig(
        image_size=IMAGE_SIZE,
        patch_size=PATCH,
        hidden_size=768,
        num_hidden_layers=12,
        num_attention_heads=12,
        intermediate_size=3072,
        decoder_hidden_size=512,
        decoder_num_hidden_layers=8,
        decoder_num_attention_heads=16,
        decoder_intermediate_size=2048,
        mask_ratio=MASK_RATIO,
        norm_pix_loss=True,
    )
    model = ViTMAEForPreTraining(config).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR, betas=(0.9, 0.95), weight_decay=0.05)

    loader = DataLoader(UnlabeledImages(), batch_size=BATCH, num_workers=4, pin_memory=True)
    model.train()
    for it, pixel_values in enumerate(loader):
        pixel_values = pixel_values.cuda(non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            outputs = model(pixel_values=pixel_values)
            loss = outputs.loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(f"it {it} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
