"""Neural style transfer (Gatys et al.) with VGG-19 features and Adam on the input image."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torchvision import models, transforms
from torchvision.utils import save_image

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
IMSIZE = 512 if torch.cuda.is_available() else 128

loader = transforms.Compose([transforms.Resize((IMSIZE, IMSIZE)), transforms.ToTensor()])


def image_loader(path):
    image = Image.open(path).convert("RGB")
    return loader(image).unsqueeze(0).to(device, torch.float)


def gram_matrix(x):
    b, c, h, w = x.size()
    features = x.view(b * c, h * w)
    G = torch.mm(features, features.t())
    return G.div(b * c * h * w)


class Normalization(nn.Module):
    def __init__(self):
        super().__init__()
        self.mean = torch.tensor([0.485, 0.456, 0.406], device=device).view(-1, 1, 1)
        self.std = torch.tensor([0.229, 0.224, 0.225], device=device).view(-1, 1, 1)

    def forward(self, img):
        return (img - self.mean) / self.std


class VGGFeatures(nn.Module):
    def __init__(self):
        super().__init__()
        vgg = models.vgg19(weights=models.VGG19_Weights.DEFAULT).features.to(device).eval()
        self.norm = Normalization()
        self.slice1 = vgg[:1]     # conv1_1
        self.slice2 = vgg[1:6]    # conv2_1
        self.slice3 = vgg[6:11]   # conv3_1
        self.slice4 = vgg[11:20]  # conv4_1
        self.slice5 = vgg[20:22]  # conv4_2
        self.slice6 = vgg[22:29]  # conv5_1

    def forward(self, x):
        h1 = self.slice1(self.norm(x))
        h2 = self.slice2(h1)
        h3 = self.slice3(h2)
        h4 = self.slice4(h3)
        h5 = self.slice5(h4)
        h6 = self.slice6(h5)
        return {"conv1_1": h1, "conv2_1": h2, "conv3_1": h3, "conv4_1": h4, "conv4_2": h5, "conv5_1": h6}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--content", default="images/dancing.jpg")
    ap.add_argument("--style", default="images/picasso.jpg")
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--style-weight", type=float, default=1e6)
    ap.add_argument("--content-weight", type=float, default=1.0)
    args = ap.parse_args()

    content_img = image_loader(args.content)
    style_img = image_loader(args.style)
    net = VGGFeatures()

    # targets computed once; no torch.no_grad() here, so they still hang on to a graph
    content_targets = net(content_img)
    style_targets = {k: gram_matrix(v) for k, v in net(style_img).items()}

    input_img = content_img.clone().requires_grad_(True)
    optimizer = torch.optim.Adam([input_img], lr=0.02)
    style_layers = ["conv1_1", "conv2_1", "conv3_1", "conv4_1", "conv5_1"]

    for step in range(args.steps):
        optimizer.zero_grad()
        feats = net(input_img)
        content_loss = F.mse_loss(feats["conv4_2"], content_targets["conv4_2"])
        style_loss = sum(F.mse_loss(gram_matrix(feats[l]), style_targets[l]) for l in style_layers)
        loss = args.content_weight * content_loss + args.style_weight * style_loss
        loss.backward(retain_graph=True)  # expect: OOM107
        optimizer.step()
        with torch.no_grad():
            input_img.clamp_(0, 1)
        if step % 50 == 0:
            print(f"step {step}: style {style_loss.item():.4f} content {content_loss.item():.4f}")

    save_image(input_img.detach(), "stylized.png")


if __name__ == "__main__":
    main()
