"""Fine-tune ResNet-50 while a forward hook (left over from a feature-visualisation session) keeps layer1's
output of every training step in a list, without .detach() or .cpu().

THIS SCRIPT HAS A MEMORY LEAK ON PURPOSE: each step appends a 128 x 256 x 56 x 56 fp32 tensor (392 MiB) to
`feature_maps`; after 16 steps that is about 6 GiB more than the training step itself needs."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset
from torchvision.models import resnet50

BATCH_SIZE = 128
IMG_SIZE = 224
NUM_CLASSES = 102
STEPS = 16

feature_maps = []


def save_features(module, inputs, output):
    feature_maps.append(output)      # meant for plotting a few maps; never cleared


class Flowers(Dataset):
    def __len__(self):
        return BATCH_SIZE * STEPS

    def __getitem__(self, i):
        return torch.randn(3, IMG_SIZE, IMG_SIZE), i % NUM_CLASSES


model = resnet50(weights=None)
model.fc = nn.Linear(model.fc.in_features, NUM_CLASSES)
model = model.cuda()
hook = model.layer1.register_forward_hook(save_features)

optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
criterion = nn.CrossEntropyLoss()
loader = DataLoader(Flowers(), batch_size=BATCH_SIZE, shuffle=True, num_workers=4)

model.train()
for step, (images, labels) in enumerate(loader):
    images, labels = images.cuda(), labels.cuda()
    optimizer.zero_grad()
    loss = criterion(model(images), labels)
    loss.backward()
    optimizer.step()
    print(f"step {step} loss {loss.item():.3f} kept maps {len(feature_maps)} "
          f"alloc {torch.cuda.memory_allocated() / 2**30:.2f} GiB")
