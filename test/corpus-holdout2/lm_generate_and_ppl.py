"""Greedy generation with a KV cache + perplexity evaluation for a causal LM."""
import argparse
import json

import torch
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoTokenizer


@torch.no_grad()
def greedy_decode(model, input_ids, attention_mask, max_new_tokens=50, eos_id=None):
    past = None
    generated = input_ids
    cur = input_ids
    for _ in range(max_new_tokens):
        out = model(input_ids=cur, attention_mask=attention_mask, past_key_values=past, use_cache=True)
        past = out.past_key_values
        next_tok = out.logits[:, -1, :].argmax(dim=-1, keepdim=True)
        generated = torch.cat([generated, next_tok], dim=-1)
        attention_mask = torch.cat([attention_mask, torch.ones_like(next_tok)], dim=-1)
        cur = next_tok
        if eos_id is not None and (next_tok == eos_id).all():
            break
    return generated


def evaluate_ppl(model, loader, device):
    model.eval()
    nlls = []
    with torch.no_grad():
        for batch in loader:
            ids = batch["input_ids"].to(device)
            mask = batch["attention_mask"].to(device)
            labels = ids.masked_fill(mask == 0, -100)
            out = model(input_ids=ids, attention_mask=mask, labels=labels)
            nlls.append(out.loss)
    return torch.exp(torch.stack(nlls).mean()).item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="Qwen/Qwen2.5-0.5B")
    ap.add_argument("--prompts", default="prompts.jsonl")
    ap.add_argument("--max_new_tokens", type=int, default=64)
    ap.add_argument("--save_attn", action="store_true")
    args = ap.parse_args()
    device = torch.device("cuda")

    tok = AutoTokenizer.from_pretrained(args.model, padding_side="left")
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=torch.bfloat16,
                                                 output_attentions=args.save_attn).to(device)

    prompts = [json.loads(l)["prompt"] for l in open(args.prompts)]

    def collate(batch):
        return tok(batch, return_tensors="pt", padding=True)

    prompt_loader = DataLoader(prompts, batch_size=16, collate_fn=collate)
    model.eval()
    results = []
    with torch.inference_mode():
        for batch in prompt_loader:
            ids = batch["input_ids"].to(device)
            mask = batch["attention_mask"].to(device)
            out_ids = greedy_decode(model, ids, mask, args.max_new_tokens, tok.eos_token_id)
            results.extend(tok.batch_decode(out_ids[:, ids.shape[1]:], skip_special_tokens=True))

    wiki = load_dataset("wikitext", "wikitext-2-raw-v1", split="test").filter(lambda ex: len(ex["text"]) > 50)
    ppl_loader = DataLoader(wiki["text"], batch_size=8,
                            collate_fn=lambda b: tok(b, return_tensors="pt", padding=True, truncation=True, max_length=512))
    print("ppl:", evaluate_ppl(model, ppl_loader, device))

    with open("generations.jsonl", "w") as f:
        for p, r in zip(prompts, results):
            f.write(json.dumps({"prompt": p, "completion": r}) + "\n")


if __name__ == "__main__":
    main()
