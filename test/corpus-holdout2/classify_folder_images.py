# Classify every image in a folder with our fine-tuned EfficientNet and write a CSV.
import csv
import glob
import os
import sys

import torch
import torch.nn as nn
from PIL import Image
from torchvision import models, transforms

IMG_DIR = sys.argv[1] if len(sys.argv) > 1 else "incoming/"
CLASSES = ["cardboard", "glass", "metal", "paper", "plastic", "trash"]

preprocess = transforms.Compose([
    transforms.Resize(256),
    transforms.CenterCrop(224),
    transforms.ToTensor(),
    transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
])

model = models.efficientnet_b0(weights=None, num_classes=len(CLASSES))
model.load_state_dict(torch.load("best.pth", map_location="cpu"))
model = nn.DataParallel(  # expect: OOM108
    model, device_ids=list(range(torch.cuda.device_count()))
)
model = model.cuda()
model.eval()

results = {}
for path in sorted(glob.glob(os.path.join(IMG_DIR, "*.jpg"))):
    img = preprocess(Image.open(path).convert("RGB")).unsqueeze(0).cuda()
    logits = model(img)  # expect: OOM104
    prob = logits.softmax(dim=1)[0]
    results[os.path.basename(path)] = (CLASSES[prob.argmax().item()], round(prob.max().item(), 4))

with open("predictions.csv", "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(["file", "label", "confidence"])
    for name, (label, conf) in results.items():
        writer.writerow([name, label, conf])
print(f"classified {len(results)} images")
