"""Summarisation inference: a bart-base shaped model from BartConfig (random weights stand in for a fine-tuned
checkpoint), cast to bf16, beam search (4 beams) over 1024-token articles in batches of 64."""
import torch
from torch.utils.data import DataLoader, Dataset
from transformers import BartConfig, BartForConditionalGeneration, GenerationConfig

ARTICLE_LEN = 1024
SUMMARY_MAX = 128
BATCH_SIZE = 64
NUM_BEAMS = 4
N_ARTICLES = 128

config = BartConfig(
    vocab_size=50265, d_model=768, encoder_layers=6, decoder_layers=6, encoder_attention_heads=12,
    decoder_attention_heads=12, encoder_ffn_dim=3072, decoder_ffn_dim=3072, max_position_embeddings=1024,
    pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2,
)
model = BartForConditionalGeneration(config).to("cuda", dtype=torch.bfloat16).eval()
gen_cfg = GenerationConfig(num_beams=NUM_BEAMS, max_new_tokens=SUMMARY_MAX, min_new_tokens=SUMMARY_MAX // 2,
                           length_penalty=2.0, early_stopping=True,
                           decoder_start_token_id=2, bos_token_id=0, eos_token_id=2, pad_token_id=1,
                           forced_bos_token_id=0)


class Articles(Dataset):
    def __len__(self):
        return N_ARTICLES

    def __getitem__(self, i):
        n = torch.randint(600, ARTICLE_LEN + 1, ()).item()
        ids = torch.full((ARTICLE_LEN,), config.pad_token_id)
        ids[:n] = torch.randint(3, 50000, (n,))
        ids[0], ids[n - 1] = 0, 2
        return ids


summaries = []
for input_ids in DataLoader(Articles(), batch_size=BATCH_SIZE):
    input_ids = input_ids.cuda()
    attention_mask = (input_ids != config.pad_token_id).long()
    with torch.inference_mode():
        out = model.generate(input_ids=input_ids, attention_mask=attention_mask, generation_config=gen_cfg)
    summaries.extend(out.cpu())
print(len(summaries), "summaries; longest", max(len(s) for s in summaries))
