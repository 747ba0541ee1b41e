"""
Character-level GPT on tinyshakespeare, nanoGPT-style, but fed from a DataLoader.
torch.compile + bf16 autocast + GradScaler (kept for fp16 fallback).
"""
import math
import os
import pickle
from contextlib import nullcontext

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset

# -----------------------------------------------------------------------------
out_dir = "out-shakespeare-char"
eval_interval = 250
eval_iters = 200
log_interval = 10
batch_size = 64
block_size = 256
n_layer, n_head, n_embd, dropout = 6, 6, 384, 0.2
learning_rate = 1e-3
max_epochs = 20
grad_accum = 2
dtype = "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
compile_model = True
# -----------------------------------------------------------------------------

device = "cuda"
ptdtype = {"bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
ctx = torch.autocast(device_type="cuda", dtype=ptdtype) if device == "cuda" else nullcontext()


class CharBlocks(Dataset):
	def __init__(self, path):
		self.data = np.memmap(path, dtype=np.uint16, mode="r")

	def __len__(self):
		return (len(self.data) - 1) // block_size

	def __getitem__(self, i):
		chunk = torch.from_numpy(self.data[i * block_size:(i + 1) * block_size + 1].astype(np.int64))
		return chunk[:-1], chunk[1:]


class Block(nn.Module):
	def __init__(self):
		super().__init__()
		self.ln1, self.ln2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
		self.attn = nn.MultiheadAttention(n_embd, n_head, dropout=dropout, batch_first=True)
		self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd),
								 nn.Dropout(dropout))

	def forward(self, x, mask):
		h = self.ln1(x)
		x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
		return x + self.mlp(self.ln2(x))


class CharGPT(nn.Module):
	def __init__(self, vocab):
		super().__init__()
		self.tok = nn.Embedding(vocab, n_embd)
		self.pos = nn.Parameter(torch.zeros(1, block_size, n_embd))
		self.blocks = nn.ModuleList([Block() for _ in range(n_layer)])
		self.ln = nn.LayerNorm(n_embd)
		self.head = nn.Linear(n_embd, vocab, bias=False)
		self.register_buffer("mask", torch.triu(torch.ones(block_size, block_size, dtype=torch.bool), 1))

	def forward(self, idx, targets=None):
		T = idx.size(1)
		x = self.tok(idx) + self.pos[:, :T]
		for b in self.blocks:
			x = b(x, self.mask[:T, :T])
		logits = self.head(self.ln(x))
		loss = None if targets is None else F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
		return logits, loss


def estimate_loss(model, loaders):
	out = {}
	model.eval()
	for split, loader in loaders.items():
		losses = torch.zeros(eval_iters)
		for k, (X, Y) in zip(range(eval_iters), loader):
			X, Y = X.to(device), Y.to(device)
			with ctx:
				logits, loss = model(X, Y)  # expect: OOM104
			losses[k] = loss.item()
		out[split] = losses.mean().item()
	model.train()
	return out


def main():
	os.makedirs(out_dir, exist_ok=True)
	with open("data/shakespeare_char/meta.pkl", "rb") as f:
		vocab = pickle.load(f)["vocab_size"]
	train_dl = DataLoader(CharBlocks("data/shakespeare_char/train.bin"), batch_size, shuffle=True, drop_last=True)
	val_dl = DataLoader(CharBlocks("data/shakespeare_char/val.bin"), batch_size, shuffle=True)

	model = CharGPT(vocab).to(device)
	optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, betas=(0.9, 0.99), weight_decay=0.1)
	scaler = torch.amp.GradScaler("cuda", enabled=(dtype == "float16"))
	raw_model = model
	if compile_model:
		model = torch.compile(model)

	best_val = math.inf
	global_step = 0
	for epoch in range(max_epochs):
		running_loss = 0.0
		for step, (X, Y) in enumerate(train_dl):
			X, Y = X.to(device, non_blocking=True), Y.to(device, non_blocking=True)
			with ctx:
				_, loss = model(X, Y)
				loss = loss / grad_accum
			scaler.scale(loss).backward()
			running_loss = running_loss + loss  # expect: OOM102
			if (step + 1) % grad_accum == 0:
				scaler.unscale_(optimizer)
				torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
				scaler.step(optimizer)
				scaler.update()
				optimizer.zero_grad(set_to_none=True)
				global_step += 1
			if step % 200 == 0:
				torch.cuda.empty_cache()  # expect: OOM106
			if global_step % log_interval == 0 and (step + 1) % grad_accum == 0:
				print(f"epoch {epoch} step {global_step}: loss {loss.item() * grad_accum:.4f}")
			if global_step % eval_interval == 0 and (step + 1) % grad_accum == 0:
				losses = estimate_loss(model, {"train": train_dl, "val": val_dl})
				print(f"step {global_step}: train {losses['train']:.4f}, val {losses['val']:.4f}")
				if losses["val"] < best_val:
					best_val = losses["val"]
					torch.save({"model": raw_model.state_dict(), "step": global_step},
							   os.path.join(out_dir, "ckpt.pt"))
		print(f"epoch {epoch} mean train loss {running_loss.item() * grad_accum / len(train_dl):.4f}")


if __name__ == "__main__":
	main()
