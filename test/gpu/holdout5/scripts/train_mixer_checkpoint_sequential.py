"""MLP-Mixer (B/16) image classifier; the block stack runs through checkpoint_sequential to save activations."""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint_sequential
from torch.utils.data import DataLoader, Dataset


def get_config():
    return {
        "image_size": 224,
        "patch_size": 16,
        "hidden_dim": 768,
        "tokens_mlp_dim": 384,
        "channels_mlp_dim": 3072,
        "num_blocks": 12,
        "num_classes": 1000,
        "batch_size": 192,
        "segments": 4,
        "lr": 1e-3,
        "steps": 5,
    }


class MlpBlock(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class MixerBlock(nn.Module):
    def __init__(self, num_tokens, dim, tokens_mlp_dim, channels_mlp_dim):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.token_mixing = MlpBlock(num_tokens, tokens_mlp_dim)
        self.norm2 = nn.LayerNorm(dim)
        self.channel_mixing = MlpBlock(dim, channels_mlp_dim)

    def forward(self, x):
        y = self.norm1(x).transpose(1, 2)
        x = x + self.token_mixing(y).transpose(1, 2)
        x = x + self.channel_mixing(self.norm2(x))
        return x


class MlpMixer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        num_tokens = (cfg["image_size"] // cfg["patch_size"]) ** 2
        self.stem = nn.Conv2d(3, cfg["hidden_dim"], cfg["patch_size"], stride=cfg["patch_size"])
        self.blocks = nn.Sequential(*[
            MixerBlock(num_tokens, cfg["hidden_dim"], cfg["tokens_mlp_dim"], cfg["channels_mlp_dim"])
            for _ in range(cfg["num_blocks"])
        ])
        self.norm = nn.LayerNorm(cfg["hidden_dim"])
        self.head = nn.Linear(cfg["hidden_dim"], cfg["num_classes"])
        self.segments = cfg["segments"]

    def forward(self, x):
        x = self.stem(x).flatten(2).transpose(1, 2)   # B x tokens x dim
        if self.training:
            x = checkpoint_sequential(self.blocks, self.segments, x, use_reentrant=False)
        else:
            x = self.blocks(x)
        x = self.norm(x).mean(dim=1)
        return self.head(x)


class RandomImageNet(Dataset):
    def __init__(self, cfg):
        self.n = cfg["batch_size"] * cfg["steps"]
        self.size = cfg["image_size"]
        self.k = cfg["num_classes"]

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.size, self.size), torch.randint(self.k, ()).item()


def train(cfg):
    model = MlpMixer(cfg).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    loss_fn = nn.CrossEntropyLoss()
    dl = DataLoader(RandomImageNet(cfg), batch_size=cfg["batch_size"], num_workers=4)
    model.train()
    for i, (x, y) in enumerate(dl):
        x, y = x.cuda(), y.cuda()
        loss = loss_fn(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"{i}: {loss.item():.3f}")


if __name__ == "__main__":
    train(get_config())
