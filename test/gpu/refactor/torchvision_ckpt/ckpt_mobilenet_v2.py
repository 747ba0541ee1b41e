"""torchvision mobilenet_v2 trained a few steps on random images; checkpointing is applied by `oomguard refactor`
(see run.sh). Prints one RESULT line: peak allocated, optimizer steps, last loss."""
import json

import torch
import torch.nn.functional as F
import torchvision

torch.manual_seed(0)
BATCH_SIZE = 64
IMAGE_SIZE = 224
STEPS = 4

model = torchvision.models.mobilenet_v2(weights=None, num_classes=10).cuda()
from functools import partial
from torch.utils.checkpoint import checkpoint
# BatchNorm running statistics are updated again when a block is recomputed in backward
for _block in list(model.features):  # gradient checkpointing: activations recomputed in backward
    _block.forward = partial(checkpoint, _block.forward, use_reentrant=False)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
g = torch.Generator().manual_seed(1)
images = torch.randn(STEPS * BATCH_SIZE, 3, IMAGE_SIZE, IMAGE_SIZE, generator=g)
labels = torch.randint(0, 10, (STEPS * BATCH_SIZE,), generator=g)
model.eval()  # BatchNorm statistics are not updated twice by the recomputation: the losses compare exactly
steps = 0
for i in range(STEPS):
    x = images[i * BATCH_SIZE:(i + 1) * BATCH_SIZE].cuda()
    y = labels[i * BATCH_SIZE:(i + 1) * BATCH_SIZE].cuda()
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    steps += 1
print("RESULT " + json.dumps({"peak": torch.cuda.max_memory_allocated(), "steps": steps, "loss": loss.item()}))
