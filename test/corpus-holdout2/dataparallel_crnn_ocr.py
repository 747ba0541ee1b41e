# CRNN text recognition (CTC) -- old multi-GPU script from 2019, still used on the lab server.
# TODO: move to DDP some day.  model = nn.DataParallel(model) used to be here.
import argparse
import os

os.putenv("CUDA_VISIBLE_DEVICES", "0,1,2,3")  # expect: OOM105

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import DataParallel as DP
from torch.utils.data import DataLoader, Dataset
from PIL import Image
import torchvision.transforms as T

parser = argparse.ArgumentParser()
parser.add_argument('--train_list', default='data/mjsynth/train.txt')
parser.add_argument('--alphabet', default='0123456789abcdefghijklmnopqrstuvwxyz')
parser.add_argument('--epochs', type=int, default=10)
parser.add_argument('--batch_size', type=int, default=256)
parser.add_argument('--lr', type=float, default=1e-3)
args = parser.parse_args()


class OCRDataset(Dataset):
    def __init__(self, list_file, alphabet):
        with open(list_file) as f:
            self.items = [line.strip().split(' ', 1) for line in f]
        self.char2idx = {c: i + 1 for i, c in enumerate(alphabet)}
        self.tf = T.Compose([T.Grayscale(), T.Resize((32, 100)), T.ToTensor()])

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, text = self.items[i]
        img = self.tf(Image.open(path))
        target = torch.tensor([self.char2idx[c] for c in text.lower() if c in self.char2idx], dtype=torch.long)
        return img, target


def collate(batch):
    imgs, targets = zip(*batch)
    lengths = torch.tensor([len(t) for t in targets], dtype=torch.long)
    return torch.stack(imgs), torch.cat(targets), lengths


class CRNN(nn.Module):
    def __init__(self, n_classes, hidden=256):
        super().__init__()
        def block(i, o, pool):
            layers = [nn.Conv2d(i, o, 3, 1, 1), nn.BatchNorm2d(o), nn.ReLU(True)]
            if pool:
                layers.append(nn.MaxPool2d(pool))
            return layers
        self.cnn = nn.Sequential(*block(1, 64, 2), *block(64, 128, 2), *block(128, 256, (2, 1)),
                                 *block(256, 512, (2, 1)), *block(512, 512, (2, 1)))
        self.rnn = nn.LSTM(512, hidden, num_layers=2, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(2 * hidden, n_classes)

    def forward(self, x):
        f = self.cnn(x).squeeze(2).permute(0, 2, 1)
        out, _ = self.rnn(f)
        return self.fc(out).log_softmax(-1)


ds = OCRDataset(args.train_list, args.alphabet)
loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, num_workers=8, collate_fn=collate)

model = CRNN(len(args.alphabet) + 1)
model = DP(model, device_ids=[0, 1, 2, 3]).cuda()  # expect: OOM108
optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
scaler = torch.cuda.amp.GradScaler()
ctc = nn.CTCLoss(blank=0, zero_infinity=True)

for epoch in range(args.epochs):
    model.train()
    optimizer.zero_grad()
    for i, (imgs, targets, target_lengths) in enumerate(loader):
        imgs = imgs.cuda()
        with torch.cuda.amp.autocast():
            log_probs = model(imgs)
        log_probs = log_probs.float().permute(1, 0, 2)
        input_lengths = torch.full((imgs.size(0),), log_probs.size(0), dtype=torch.long)
        loss = ctc(log_probs, targets, input_lengths, target_lengths)
        scaler.scale(loss).backward()
        scaler.step(optimizer)  # expect: OOM103
        scaler.update()
        torch.cuda.empty_cache()  # expect: OOM106
        if i % 100 == 0:
            print('epoch %d iter %d loss %.4f' % (epoch, i, loss.item()))
    torch.save(model.module.state_dict(), 'crnn_epoch%d.pth' % epoch)
