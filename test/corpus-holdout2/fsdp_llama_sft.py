# torchrun --nproc_per_node 8 fsdp_llama_sft.py --model_name meta-llama/Llama-3.2-1B --resume_from out/step_2000
import argparse
import functools
import os

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import MixedPrecision, ShardingStrategy, StateDictType, FullStateDictConfig
from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
from torch.utils.data import DataLoader, DistributedSampler
from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling
from transformers.models.llama.modeling_llama import LlamaDecoderLayer


def setup():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return local_rank


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model_name", default="meta-llama/Llama-3.2-1B")
    ap.add_argument("--resume_from", default=None)
    ap.add_argument("--output_dir", default="out")
    ap.add_argument("--lr", type=float, default=2e-5)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch_size", type=int, default=4)
    args = ap.parse_args()

    local_rank = setup()
    rank = dist.get_rank()

    tok = AutoTokenizer.from_pretrained(args.model_name)
    tok.pad_token = tok.eos_token
    model = AutoModelForCausalLM.from_pretrained(args.model_name, torch_dtype=torch.bfloat16)
    model.gradient_checkpointing_enable()

    if args.resume_from:
        state = torch.load(os.path.join(args.resume_from, "model.pt"), weights_only=True)  # expect: OOM110
        model.load_state_dict(state)

    if dist.get_rank() == 0 and os.path.exists(os.path.join(args.output_dir, "best_metrics.pt")):
        best = torch.load(os.path.join(args.output_dir, "best_metrics.pt"))
        print("previous best:", best)

    wrap_policy = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={LlamaDecoderLayer})
    bf16 = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16, buffer_dtype=torch.bfloat16)
    model = FSDP(
        model,
        auto_wrap_policy=wrap_policy,
        mixed_precision=bf16,
        sharding_strategy=ShardingStrategy.FULL_SHARD,
        device_id=torch.cuda.current_device(),
        use_orig_params=True,
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)

    ds = load_dataset("tatsu-lab/alpaca", split="train")
    ds = ds.map(lambda ex: tok(ex["text"], truncation=True, max_length=1024), remove_columns=ds.column_names)
    sampler = DistributedSampler(ds, shuffle=True)
    loader = DataLoader(ds, batch_size=args.batch_size, sampler=sampler,
                        collate_fn=DataCollatorForLanguageModeling(tok, mlm=False), num_workers=2)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        for step, batch in enumerate(loader):
            batch = {k: v.to(local_rank) for k, v in batch.items()}
            loss = model(**batch).loss
            loss.backward()
            model.clip_grad_norm_(1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if rank == 0 and step % 20 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")

    cfg = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, cfg):
        cpu_state = model.state_dict()
    if rank == 0:
        os.makedirs(args.output_dir, exist_ok=True)
        torch.save(cpu_state, os.path.join(args.output_dir, "model.pt"))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
