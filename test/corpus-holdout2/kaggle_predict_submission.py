# Cassava leaf disease - inference notebook exported to a script
import gc
import os

import numpy as np
import pandas as pd
import timm
import torch
import torch.nn as nn
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms
from tqdm import tqdm

TEST_DIR = "../input/cassava-leaf-disease-classification/test_images"
MODEL_NAME = "tf_efficientnet_b4_ns"
CKPT = "../input/cassava-b4/tf_efficientnet_b4_ns_fold0_best.pth"
IMG_SIZE = 512
BATCH_SIZE = 32
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class TestDataset(Dataset):
    def __init__(self, df, transform=None):
        self.df = df
        self.file_names = df["image_id"].values
        self.transform = transform

    def __len__(self):
        return len(self.df)

    def __getitem__(self, idx):
        image = Image.open(os.path.join(TEST_DIR, self.file_names[idx])).convert("RGB")
        return self.transform(image)


tfm = transforms.Compose([
    transforms.Resize((IMG_SIZE, IMG_SIZE)),
    transforms.ToTensor(),
    transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
])


def predict(model, loader):
    model.eval()
    preds = []
    for i, images in enumerate(tqdm(loader)):
        images = images.to(device)
        logits = model(images)  # expect: OOM104
        logits_flip = model(torch.flip(images, dims=[3]))
        probs = (logits.softmax(1) + logits_flip.softmax(1)) / 2
        preds.append(probs.argmax(1).cpu().numpy())
        torch.cuda.empty_cache()  # expect: OOM106
    return np.concatenate(preds)


test = pd.DataFrame({"image_id": sorted(os.listdir(TEST_DIR))})
test_loader = DataLoader(TestDataset(test, transform=tfm), batch_size=BATCH_SIZE, shuffle=False,
                         num_workers=4, pin_memory=True)

model = timm.create_model(MODEL_NAME, pretrained=False, num_classes=5)
model.load_state_dict(torch.load(CKPT, map_location="cpu")["model"])
if torch.cuda.device_count() > 1:
    model = torch.nn.DataParallel(model)  # expect: OOM108
model.to(device)

test["label"] = predict(model, test_loader)
test[["image_id", "label"]].to_csv("submission.csv", index=False)

del model
gc.collect()
torch.cuda.empty_cache()
