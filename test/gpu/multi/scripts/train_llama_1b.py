"""Llama-style 1.1B (TinyLlama's shape, grouped-query attention), random init, bf16 autocast over fp32 weights,
AdamW, batch 4 x 512 tokens per GPU, data parallel.

    torchrun --nproc_per_node 2 train_llama_1b.py --strategy ddp|fsdp_full|fsdp_grad_op|zero2|zero3 --out DIR

Each rank writes DIR/llama_1b__STRATEGY__wsN__rankR.json with its peak torch.cuda.max_memory_allocated().
The configuration is gpu-truth's llama1b_train_b4_s512_ampbf16_adamw, so world size 1 under DDP can be checked
against that single-GPU measurement.
"""
import torch
from transformers import AutoModelForCausalLM, LlamaConfig

import harness

BATCH_SIZE = 4
SEQ_LEN = 512


def main():
    args = harness.parse_args(__doc__.splitlines()[0])
    run = harness.Run('train_llama_1b.py', 'llama_1b', args)
    run.skip_if_unavailable()
    try:
        device = run.init()
        torch.manual_seed(0)
        config = LlamaConfig(hidden_size=2048, intermediate_size=5632, num_hidden_layers=22, num_attention_heads=32,
                             num_key_value_heads=4, vocab_size=32000, max_position_embeddings=2048,
                             tie_word_embeddings=False, use_cache=False)
        with torch.device(device):
            model = AutoModelForCausalLM.from_config(config, attn_implementation="sdpa")
        run.count_parameters(model)
        model.train()
        model = run.wrap(model, blocks=model.model.layers)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        engine = run.engine(model, optimizer, BATCH_SIZE)
        if engine is not None:
            model = engine

        # One fixed random batch per rank, as in gpu-truth: the loader is not what is measured.
        generator = torch.Generator(device=device)
        generator.manual_seed(1234 + run.rank)
        input_ids = torch.randint(0, config.vocab_size, (BATCH_SIZE, SEQ_LEN), device=device, generator=generator)

        run.start()
        for _ in range(args.steps):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(input_ids=input_ids, labels=input_ids).loss
            run.phase('forward')
            run.loss(loss)
            if engine is not None:
                engine.backward(loss)  # DeepSpeed reduces and partitions the gradients itself
            else:
                loss.backward()
            del loss
            run.phase('backward')
            if engine is not None:
                engine.step()
            else:
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
            run.phase('optimizer')
        run.finish()
    except Exception as error:  # noqa: BLE001 - every failure is recorded in the rank's JSON, then re-raised
        run.fail(error)
        raise


if __name__ == '__main__':
    main()
