"""MLP-Mixer B/16 from scratch (SGD + momentum, fp32).

Blocks are appended to an nn.ModuleList in a loop; constructor arguments are passed positionally.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

IMAGE_SIZE = 224
PATCH = 16
NUM_PATCHES = (IMAGE_SIZE // PATCH) ** 2
HIDDEN = 768
TOKEN_MLP = HIDDEN // 2
CHANNEL_MLP = HIDDEN * 4
DEPTH = 12
NUM_CLASSES = 1000
BATCH_SIZE = 96
TRAIN_ITERS = 5
EVAL_ITERS = 2


class MlpBlock(nn.Module):
    def __init__(self, in_dim, hidden_dim):
        super().__init__()
        self.fc1 = nn.Linear(in_dim, hidden_dim)
        self.fc2 = nn.Linear(hidden_dim, in_dim)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class MixerBlock(nn.Module):
    def __init__(self, num_patches, dim, token_dim, channel_dim):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.token_mix = MlpBlock(num_patches, token_dim)
        self.norm2 = nn.LayerNorm(dim)
        self.channel_mix = MlpBlock(dim, channel_dim)

    def forward(self, x):                                   # (B, N, C)
        y = self.norm1(x).transpose(1, 2)                   # (B, C, N)
        x = x + self.token_mix(y).transpose(1, 2)
        x = x + self.channel_mix(self.norm2(x))
        return x


class MlpMixer(nn.Module):
    def __init__(self, num_classes, image_size, patch, dim, depth, token_dim, channel_dim):
        super().__init__()
        n = (image_size // patch) ** 2
        self.stem = nn.Conv2d(3, dim, patch, stride=patch)
        self.blocks = nn.ModuleList()
        for _ in range(depth):
            self.blocks.append(MixerBlock(n, dim, token_dim, channel_dim))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        x = self.stem(x).flatten(2).transpose(1, 2)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x).mean(dim=1))


def random_batch(device):
    return (torch.randn(BATCH_SIZE, 3, IMAGE_SIZE, IMAGE_SIZE, device=device),
            torch.randint(0, NUM_CLASSES, (BATCH_SIZE,), device=device))


def main():
    device = torch.device("cuda")
    model = MlpMixer(NUM_CLASSES, IMAGE_SIZE, PATCH, HIDDEN, DEPTH, TOKEN_MLP, CHANNEL_MLP).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)

    model.train()
    for it in range(TRAIN_ITERS):
        x, y = random_batch(device)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"train it {it} loss {loss.item():.4f}")

    # quick validation (no no_grad here, but nothing with a graph is kept across iterations)
    model.eval()
    val_loss = 0.0
    for it in range(EVAL_ITERS):
        x, y = random_batch(device)
        val_loss += F.cross_entropy(model(x), y).item()
    print(f"val loss {val_loss / EVAL_ITERS:.4f}")


if __name__ == "__main__":
    main()
