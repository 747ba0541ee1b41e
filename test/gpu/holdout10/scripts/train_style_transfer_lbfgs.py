"""Neural style transfer (Gatys et al.), following the classic PyTorch tutorial: a frozen VGG19 feature
extractor, content loss at conv4_2, Gram-matrix style losses at conv1_1..conv5_1, and the *image* optimised
with L-BFGS (history_size=100) through a closure.

(The tutorial loads ImageNet weights; offline we use random weights, which changes nothing about memory.)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision.models import vgg19

imsize = 768
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
content_layers = ["conv_10"]                                   # conv4_2
style_layers = ["conv_1", "conv_3", "conv_5", "conv_9", "conv_13"]
style_weight = 1e6
content_weight = 1.0
num_outer_steps = 3
lbfgs_iters_per_step = 20


class Normalization(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]).view(-1, 1, 1))
        self.register_buffer("std", torch.tensor([0.229, 0.224, 0.225]).view(-1, 1, 1))

    def forward(self, img):
        return (img - self.mean) / self.std


def gram_matrix(x):
    b, c, h, w = x.size()
    feats = x.view(b * c, h * w)
    return torch.mm(feats, feats.t()).div(b * c * h * w)


class ContentLoss(nn.Module):
    def __init__(self, target):
        super().__init__()
        self.target = target.detach()
        self.loss = torch.tensor(0.0)

    def forward(self, x):
        self.loss = F.mse_loss(x, self.target)
        return x


class StyleLoss(nn.Module):
    def __init__(self, target_feature):
        super().__init__()
        self.target = gram_matrix(target_feature).detach()
        self.loss = torch.tensor(0.0)

    def forward(self, x):
        self.loss = F.mse_loss(gram_matrix(x), self.target)
        return x


def get_style_model_and_losses(cnn, style_img, content_img):
    model = nn.Sequential(Normalization().to(device))
    content_losses, style_losses = [], []
    i = 0
    for layer in cnn.children():
        if isinstance(layer, nn.Conv2d):
            i += 1
            name = f"conv_{i}"
        elif isinstance(layer, nn.ReLU):
            name = f"relu_{i}"
            layer = nn.ReLU(inplace=False)
        elif isinstance(layer, nn.MaxPool2d):
            name = f"pool_{i}"
        else:
            raise RuntimeError(f"unrecognized layer {layer.__class__.__name__}")
        model.add_module(name, layer)
        if name in content_layers:
            target = model(content_img).detach()
            cl = ContentLoss(target)
            model.add_module(f"content_loss_{i}", cl)
            content_losses.append(cl)
        if name in style_layers:
            target_feature = model(style_img).detach()
            sl = StyleLoss(target_feature)
            model.add_module(f"style_loss_{i}", sl)
            style_losses.append(sl)
    # trim everything after the last loss layer
    for j in range(len(model) - 1, -1, -1):
        if isinstance(model[j], (ContentLoss, StyleLoss)):
            break
    return model[: j + 1], style_losses, content_losses


def run_style_transfer(cnn, content_img, style_img, input_img):
    model, style_losses, content_losses = get_style_model_and_losses(cnn, style_img, content_img)
    input_img.requires_grad_(True)
    model.eval()
    model.requires_grad_(False)
    optimizer = torch.optim.LBFGS([input_img], lr=1.0, max_iter=lbfgs_iters_per_step, history_size=100)
    for outer in range(num_outer_steps):
        def closure():
            with torch.no_grad():
                input_img.clamp_(0, 1)
            optimizer.zero_grad()
            model(input_img)
            s = sum(sl.loss for sl in style_losses) * style_weight
            c = sum(cl.loss for cl in content_losses) * content_weight
            loss = s + c
            loss.backward()
            return loss

        loss = optimizer.step(closure)
        print(f"outer step {outer}: loss {loss.item():.4f}")
    with torch.no_grad():
        input_img.clamp_(0, 1)
    return input_img


if __name__ == "__main__":
    cnn = vgg19(weights=None).features.to(device).eval()
    content_img = torch.rand(1, 3, imsize, imsize, device=device)
    style_img = torch.rand(1, 3, imsize, imsize, device=device)
    input_img = content_img.clone()
    output = run_style_transfer(cnn, content_img, style_img, input_img)
    print(output.shape, "peak GiB", torch.cuda.max_memory_allocated() / 2**30)
