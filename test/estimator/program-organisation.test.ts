// How public repositories organise a training program: argparse sub-commands, model registries with a config file,
// several models in one script. The estimate must read the model the script builds from these.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateText } from './helpers';

/** A Llama trained through an argparse `train` sub-command whose sizes come from a shared parent parser. */
function subcommandScript(parseCall: string, hiddenDefault = '512'): string {
  return [
    'import argparse, sys',
    'import torch',
    'from transformers import LlamaConfig, LlamaForCausalLM',
    'def cmd_train(args):',
    '    config = LlamaConfig(vocab_size=args.vocab_size, hidden_size=args.hidden_size, intermediate_size=1376,',
    '                         num_hidden_layers=args.num_layers, num_attention_heads=8, num_key_value_heads=2)',
    '    model = LlamaForCausalLM(config).cuda()',
    '    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)',
    '    for _ in range(3):',
    '        ids = torch.randint(0, args.vocab_size, (args.batch_size, args.seq_len), device="cuda")',
    '        loss = model(input_ids=ids, labels=ids).loss',
    '        loss.backward()',
    '        opt.step()',
    '        opt.zero_grad()',
    'def cmd_eval(args):',
    '    print(args.ckpt)',
    'def main(argv=None):',
    '    parser = argparse.ArgumentParser()',
    '    sub = parser.add_subparsers(dest="command", required=True)',
    '    common = argparse.ArgumentParser(add_help=False)',
    '    common.add_argument("--vocab-size", type=int, default=8000)',
    `    common.add_argument("--hidden-size", type=int, default=${hiddenDefault})`,
    '    common.add_argument("--num-layers", type=int, default=4)',
    '    p_eval = sub.add_parser("eval", parents=[common])',
    '    p_eval.add_argument("--ckpt", default="x.pt")',
    '    p_eval.add_argument("--batch-size", type=int, default=64)',
    '    p_eval.set_defaults(func=cmd_eval)',
    '    p_train = sub.add_parser("train", parents=[common])',
    '    p_train.add_argument("--batch-size", type=int, default=6)',
    '    p_train.add_argument("--seq-len", type=int, default=256)',
    '    p_train.set_defaults(func=cmd_train)',
    `    args = ${parseCall}`,
    '    args.func(args)',
    'if __name__ == "__main__":',
    '    main()',
  ].join('\n');
}

test('argparse sub-commands: the named sub-command\'s parser (with its parents\' arguments) gives the values', async () => {
  const result = await estimateText(subcommandScript('parser.parse_args(sys.argv[1:] or ["train"])'), '/tmp/llama_sub.py');
  assert.equal(result.detected.model.source, 'from-config');
  const spec = result.config.model;
  assert.ok(spec.kind === 'transformer');
  if (spec.kind !== 'transformer') return;
  assert.equal(spec.hidden, 512);
  assert.equal(spec.layers, 4);
  assert.equal(spec.vocab, 8000);
  assert.equal(spec.kvHeads, 2);
  // The train parser's batch size (6), not the eval parser's (64).
  assert.equal(result.detected.batchSize.value, 6);
  assert.equal(result.detected.seqLen?.value, 256);
});

test('argparse sub-commands, none named: the first declared sub-command is the one read', async () => {
  const result = await estimateText(subcommandScript('parser.parse_args()'), '/tmp/llama_sub_first.py');
  // "eval" comes first here: its function builds no model, so nothing is resolved rather than a 7B default.
  assert.notEqual(result.detected.model.source, 'from-config');
});

test('a config size the script does not determine leaves the model unresolved, never the base checkpoint\'s size', async () => {
  const result = await estimateText(subcommandScript('parser.parse_args(["train"])', 'int(open("h.txt").read())'), '/tmp/llama_sub_unknown.py');
  assert.equal(result.detected.model.source, 'unresolved');
  assert.match(result.unresolved?.reason ?? "", /hidden_size/);
});
