# Fine-tune GPT-2 on a plain-text corpus with gradient accumulation.
# Adapted from an old run_lm_finetuning.py; kept the argument names.
import argparse
import logging
import math
import os

os.environ.update({"CUDA_VISIBLE_DEVICES": "0,1", "TOKENIZERS_PARALLELISM": "false"})  # expect: OOM105

import torch
from torch.utils.data import DataLoader, Dataset, RandomSampler, SequentialSampler
from transformers import AutoModelForCausalLM, AutoTokenizer, get_linear_schedule_with_warmup

logger = logging.getLogger(__name__)
logging.basicConfig(format="%(asctime)s - %(levelname)s - %(message)s", level=logging.INFO)


class TextBlocks(Dataset):
    def __init__(self, tokenizer, path, block_size=512):
        with open(path, encoding="utf-8") as f:
            ids = tokenizer(f.read())["input_ids"]
        self.examples = [ids[i:i + block_size] for i in range(0, len(ids) - block_size + 1, block_size)]

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, i):
        return torch.tensor(self.examples[i], dtype=torch.long)


@torch.no_grad()
def evaluate(args, model, eval_dataset):
    loader = DataLoader(eval_dataset, sampler=SequentialSampler(eval_dataset), batch_size=args.eval_batch_size)
    model.eval()
    eval_loss, nb_eval_steps = 0.0, 0
    for batch in loader:
        batch = batch.to(args.device)
        outputs = model(input_ids=batch, labels=batch)
        eval_loss += outputs.loss.mean().item()
        nb_eval_steps += 1
    eval_loss = eval_loss / max(1, nb_eval_steps)
    return {"eval_loss": eval_loss, "perplexity": math.exp(eval_loss)}


def train(args, train_dataset, eval_dataset, model):
    sampler = RandomSampler(train_dataset)
    train_dataloader = DataLoader(train_dataset, sampler=sampler, batch_size=args.train_batch_size)
    t_total = len(train_dataloader) // args.gradient_accumulation_steps * args.num_train_epochs

    no_decay = ["bias", "LayerNorm.weight", "ln_"]
    grouped = [
        {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
         "weight_decay": args.weight_decay},
        {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
         "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(grouped, lr=args.learning_rate, eps=args.adam_epsilon)
    lr_scheduler = get_linear_schedule_with_warmup(optimizer, args.warmup_steps, t_total)

    global_step = 0
    tr_loss, logging_loss = 0.0, 0.0
    model.train()
    for epoch in range(args.num_train_epochs):
        for step, batch in enumerate(train_dataloader):
            batch = batch.to(args.device)
            outputs = model(input_ids=batch, labels=batch)
            loss = outputs.loss / args.gradient_accumulation_steps
            loss.backward()
            tr_loss += loss  # expect: OOM102

            if (step + 1) % args.gradient_accumulation_steps == 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                optimizer.step()  # expect: OOM103
                lr_scheduler.step()
                global_step += 1

                if global_step % args.logging_steps == 0:
                    cur = float(tr_loss)
                    logger.info("step %d lr %.2e loss %.4f", global_step,
                                lr_scheduler.get_last_lr()[0], (cur - logging_loss) / args.logging_steps)
                    logging_loss = cur
                if global_step % args.save_steps == 0:
                    out = os.path.join(args.output_dir, f"checkpoint-{global_step}")
                    os.makedirs(out, exist_ok=True)
                    model.save_pretrained(out)
        logger.info("epoch %d: %s", epoch, evaluate(args, model, eval_dataset))
        model.train()
    return global_step, float(tr_loss) / max(1, global_step)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train_file", required=True)
    parser.add_argument("--eval_file", required=True)
    parser.add_argument("--model_name_or_path", default="gpt2")
    parser.add_argument("--output_dir", default="out/gpt2-ft")
    parser.add_argument("--block_size", type=int, default=512)
    parser.add_argument("--train_batch_size", type=int, default=4)
    parser.add_argument("--eval_batch_size", type=int, default=8)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=8)
    parser.add_argument("--learning_rate", type=float, default=5e-5)
    parser.add_argument("--weight_decay", type=float, default=0.0)
    parser.add_argument("--adam_epsilon", type=float, default=1e-8)
    parser.add_argument("--max_grad_norm", type=float, default=1.0)
    parser.add_argument("--num_train_epochs", type=int, default=3)
    parser.add_argument("--warmup_steps", type=int, default=200)
    parser.add_argument("--logging_steps", type=int, default=50)
    parser.add_argument("--save_steps", type=int, default=1000)
    args = parser.parse_args()
    args.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path).to(args.device)
    train_ds = TextBlocks(tokenizer, args.train_file, args.block_size)
    eval_ds = TextBlocks(tokenizer, args.eval_file, args.block_size)
    global_step, avg_loss = train(args, train_ds, eval_ds, model)
    logger.info("global_step = %s, average loss = %s", global_step, avg_loss)
    model.save_pretrained(args.output_dir)
    tokenizer.save_pretrained(args.output_dir)


if __name__ == "__main__":
    main()
