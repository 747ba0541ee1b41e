#!/usr/bin/env python
# coding: utf-8

# # Latent diffusion fine-tune on Pokémon captions 🐉
# Exported from `ldm_finetune.ipynb` (Colab). Cells kept in order.

# In[1]:


import os
os.putenv("CUDA_VISIBLE_DEVICES", "0")  # expect: OOM105

import torch
import torch.nn.functional as F
from datasets import load_dataset
from diffusers import AutoencoderKL, DDPMScheduler, UNet2DConditionModel
from transformers import CLIPTextModel, CLIPTokenizer
from torchvision import transforms


# In[2]:


pretrained = "CompVis/stable-diffusion-v1-4"
device = "cuda"
lr = 1e-5
epochs = 3
bs = 4

tokenizer = CLIPTokenizer.from_pretrained(pretrained, subfolder="tokenizer")
text_encoder = CLIPTextModel.from_pretrained(pretrained, subfolder="text_encoder").to(device)
vae = AutoencoderKL.from_pretrained(pretrained, subfolder="vae").to(device)
unet = UNet2DConditionModel.from_pretrained(pretrained, subfolder="unet").to(device)
noise_scheduler = DDPMScheduler.from_pretrained(pretrained, subfolder="scheduler")
vae.requires_grad_(False)
text_encoder.requires_grad_(False)


# In[3]:


tf = transforms.Compose([transforms.Resize(512), transforms.CenterCrop(512),
                         transforms.ToTensor(), transforms.Normalize([0.5], [0.5])])
ds = load_dataset("lambdalabs/pokemon-blip-captions", split="train")


def collate(examples):
    pixels = torch.stack([tf(e["image"].convert("RGB")) for e in examples])
    ids = tokenizer([e["text"] for e in examples], padding="max_length", truncation=True,
                    max_length=tokenizer.model_max_length, return_tensors="pt").input_ids
    return pixels, ids


loader = torch.utils.data.DataLoader(ds, batch_size=bs, shuffle=True, collate_fn=collate)
optimizer = torch.optim.AdamW(unet.parameters(), lr=lr)


# In[4]:


# training ✨
unet.train()
for epoch in range(epochs):
    epoch_loss = 0.0
    for step, (pixels, ids) in enumerate(loader):
        pixels, ids = pixels.to(device), ids.to(device)
        with torch.no_grad():
            latents = vae.encode(pixels).latent_dist.sample() * 0.18215
            cond = text_encoder(ids)[0]
        noise = torch.randn_like(latents)
        t = torch.randint(0, noise_scheduler.config.num_train_timesteps, (latents.shape[0],), device=device)
        noisy = noise_scheduler.add_noise(latents, noise, t)
        pred = unet(noisy, t, encoder_hidden_states=cond).sample
        loss = F.mse_loss(pred.float(), noise.float(), reduction="mean")
        loss.backward()
        torch.nn.utils.clip_grad_norm_(unet.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()
        epoch_loss += loss  # expect: OOM102
        if step % 100 == 0:
            print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
    print(f"== epoch {epoch} mean loss {epoch_loss.item() / len(loader):.4f}")


# In[5]:


# quick sample to eyeball progress 👀
unet.eval()
prompt = ["a cute blue dragon pokemon, sugimori style"]
with torch.no_grad():
    cond = text_encoder(tokenizer(prompt, padding="max_length", max_length=tokenizer.model_max_length,
                                  return_tensors="pt").input_ids.to(device))[0]
noise_scheduler.set_timesteps(50)
latents = torch.randn(1, 4, 64, 64, device=device) * noise_scheduler.init_noise_sigma
for t in noise_scheduler.timesteps:
    noise_pred = unet(latents, t, encoder_hidden_states=cond).sample  # expect: OOM104
    latents = noise_scheduler.step(noise_pred, t, latents).prev_sample


# In[6]:


with torch.no_grad():
    image = vae.decode(latents / 0.18215).sample
image = (image / 2 + 0.5).clamp(0, 1)[0].permute(1, 2, 0).detach().cpu().numpy()
import matplotlib.pyplot as plt
plt.imshow(image)
plt.axis("off")
plt.show()
unet.save_pretrained("unet-pokemon")
