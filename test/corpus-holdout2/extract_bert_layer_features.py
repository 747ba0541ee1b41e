"""Extract sentence features (mean of the last four layers' [CLS]) for a probing study."""
import argparse

import numpy as np
import torch
from datasets import load_dataset
from torch.utils.data import DataLoader
from tqdm import tqdm
from transformers import AutoModel, AutoTokenizer, DataCollatorWithPadding

parser = argparse.ArgumentParser()
parser.add_argument("--model_name", default="bert-base-uncased")
parser.add_argument("--dataset", default="glue")
parser.add_argument("--subset", default="sst2")
parser.add_argument("--split", default="train")
parser.add_argument("--batch_size", type=int, default=256)
parser.add_argument("--max_length", type=int, default=128)
parser.add_argument("--out", default="features_sst2_train.npy")
args = parser.parse_args()

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
tokenizer = AutoTokenizer.from_pretrained(args.model_name)
model = AutoModel.from_pretrained(args.model_name, output_hidden_states=True)  # expect: OOM115
model.to(device)

ds = load_dataset(args.dataset, args.subset, split=args.split)
ds = ds.map(lambda ex: tokenizer(ex["sentence"], truncation=True, max_length=args.max_length),
            batched=True, remove_columns=[c for c in ds.column_names if c != "label"])
ds = ds.remove_columns(["label"])
collator = DataCollatorWithPadding(tokenizer)
loader = DataLoader(ds, batch_size=args.batch_size, collate_fn=collator, num_workers=4)

model.eval()
all_feats = None
with torch.no_grad():
    for batch in tqdm(loader):
        batch = {k: v.to(device) for k, v in batch.items()}
        out = model(**batch)
        layers = torch.stack(out.hidden_states[-4:]).mean(0)
        feats = layers[:, 0]
        all_feats = feats if all_feats is None else torch.cat([all_feats, feats], dim=0)  # expect: OOM117

np.save(args.out, all_feats.cpu().numpy())
print("saved", tuple(all_feats.shape), "to", args.out)
