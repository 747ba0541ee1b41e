"""CRNN 语音事件检测：卷积层用 setattr 逐层注册，forward 里用 getattr 取出；后接双向 GRU。"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

# ---- 超参数 ----
N_MELS = 128
N_FRAMES = 2000          # 20 秒音频，10ms 帧移
CONV_CHANNELS = [64, 128, 256, 256, 512]
POOL_FREQ = [2, 2, 2, 2, 2]
GRU_HIDDEN = 512
NUM_CLASSES = 527        # AudioSet 类别数
BATCH = 32
EPOCHS = 1
STEPS_PER_EPOCH = 8


class CRNN(nn.Module):
    def __init__(self, n_mels, channels, pools, hidden, num_classes):
        super().__init__()
        self.n_blocks = len(channels)
        cin = 1
        for i, (cout, p) in enumerate(zip(channels, pools)):
            # 每一层单独挂到模块上：conv0, bn0, conv1, bn1 ...
            setattr(self, f"conv{i}", nn.Conv2d(cin, cout, 3, padding=1, bias=False))
            setattr(self, f"bn{i}", nn.BatchNorm2d(cout))
            setattr(self, f"pool{i}", nn.MaxPool2d((p, 1)))   # 只在频率维度池化，保留时间分辨率
            cin = cout
        freq_out = n_mels
        for p in pools:
            freq_out //= p
        self.gru = nn.GRU(cin * freq_out, hidden, num_layers=2, batch_first=True, bidirectional=True, dropout=0.2)
        self.add_module("classifier", nn.Linear(2 * hidden, num_classes))

    def forward(self, x):                      # x: B x 1 x F x T
        for i in range(self.n_blocks):
            x = getattr(self, f"conv{i}")(x)
            x = F.relu(getattr(self, f"bn{i}")(x))
            x = getattr(self, f"pool{i}")(x)
        b, c, f, t = x.shape
        x = x.permute(0, 3, 1, 2).reshape(b, t, c * f)
        x, _ = self.gru(x)
        frame_logits = self.classifier(x)       # B x T x C
        clip_logits = frame_logits.max(dim=1).values   # 取时间维最大值作为片段预测
        return clip_logits, frame_logits


class MelClips(Dataset):
    def __len__(self):
        return BATCH * STEPS_PER_EPOCH

    def __getitem__(self, i):
        mel = torch.randn(1, N_MELS, N_FRAMES)
        target = (torch.rand(NUM_CLASSES) < 0.01).float()   # 多标签
        return mel, target


model = CRNN(N_MELS, CONV_CHANNELS, POOL_FREQ, GRU_HIDDEN, NUM_CLASSES).cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
scaler = torch.amp.GradScaler("cuda")
loader = DataLoader(MelClips(), batch_size=BATCH, shuffle=True, num_workers=2)

for epoch in range(EPOCHS):
    model.train()
    for step, (mel, target) in enumerate(loader):
        mel, target = mel.cuda(), target.cuda()
        with torch.autocast("cuda", dtype=torch.float16):
            clip_logits, _ = model(mel)
        # 损失在 autocast 外用 fp32 计算
        loss = F.binary_cross_entropy_with_logits(clip_logits.float(), target)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
