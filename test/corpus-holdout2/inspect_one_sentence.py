"""Dump the hidden states and attention maps of one example sentence for a blog-post figure."""
import torch
from transformers import AutoModel, AutoTokenizer

MODEL = "bert-base-uncased"
SENTENCE = "The quick brown fox jumps over the lazy dog 🦊"

tokenizer = AutoTokenizer.from_pretrained(MODEL)
model = AutoModel.from_pretrained(MODEL, output_attentions=True)

inputs = tokenizer(SENTENCE, return_tensors="pt")
with torch.no_grad():
    out = model(**inputs, output_hidden_states=True)

print("tokens:", tokenizer.convert_ids_to_tokens(inputs["input_ids"][0]))
print("number of hidden-state tensors:", len(out.hidden_states))
print("last attention map:", tuple(out.attentions[-1].shape))

hidden = torch.stack(out.hidden_states).squeeze(1)
attn = torch.stack(out.attentions).squeeze(1)
torch.save({"hidden": hidden, "attn": attn, "sentence": SENTENCE}, "fox_activations.pt")
