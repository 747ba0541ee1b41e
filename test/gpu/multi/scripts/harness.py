"""What the multi-GPU training scripts share: process-group set-up, the parallel wrappers (DDP, FSDP2, DeepSpeed
ZeRO), and the per-rank peak-memory record.

The scripts keep the model, batch, sequence length, optimizer and precision in their own source, where
`oomguard estimate` reads them; this module holds only what the estimator takes from --gpus/--strategy.
Measured like test/gpu/truth-measure.py: the CUDA peak counters are reset once the model is wrapped and the
optimizer built, then at each phase boundary (forward, backward, optimizer step); the step peak is the largest of
the phases, which equals torch.cuda.max_memory_allocated() over the whole loop.
"""
import argparse
import datetime
import gc
import importlib.util
import json
import os
import socket
import sys
import time
import traceback

import torch
import torch.distributed as dist

# Strategy names on the command line; the estimator's --strategy for each (FSDP's SHARD_GRAD_OP keeps the gathered
# weights from forward to backward and shards gradients and optimizer states: ZeRO-2's layout).
STRATEGIES = {
    'ddp': 'ddp',
    'fsdp_full': 'fsdp',
    'fsdp_grad_op': 'zero2',
    'zero2': 'zero2',
    'zero3': 'zero3',
}
DEEPSPEED_STRATEGIES = ('zero2', 'zero3')

# NVLink multicast stays off: a program that uses it can put a shared host's GPUs out of service.
MULTICAST_OFF = {'NCCL_NVLS_ENABLE': '0', 'TORCH_SYMM_MEM_DISABLE_MULTICAST': '1', 'NVSHMEM_DISABLE_NVLS': '1'}

MIB = 1024.0 * 1024.0


def deepspeed_available():
    return importlib.util.find_spec('deepspeed') is not None


def parse_args(description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument('--strategy', required=True, choices=sorted(STRATEGIES))
    parser.add_argument('--out', required=True, help='folder for the per-rank JSON records')
    parser.add_argument('--steps', type=int, default=3, help='optimizer steps (default 3)')
    return parser.parse_args()


class Run:
    """One rank's run: set-up, phase peaks, and the JSON record it writes at the end (also on failure)."""

    def __init__(self, script, config, args):
        self.t0 = time.time()
        self.args = args
        self.rank = int(os.environ.get('RANK', '0'))
        self.local_rank = int(os.environ.get('LOCAL_RANK', '0'))
        self.world_size = int(os.environ.get('WORLD_SIZE', '1'))
        self.record = dict(
            script=script, config=config, strategy=args.strategy, estimator_strategy=STRATEGIES[args.strategy],
            world_size=self.world_size, rank=self.rank, steps=args.steps, host=socket.gethostname(),
            date_utc=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds'),
            python=sys.version.split()[0], torch=torch.__version__, status='started', phases=[], losses=[],
        )
        self.peaks = []
        os.makedirs(args.out, exist_ok=True)

    @property
    def path(self):
        return os.path.join(self.args.out, '%s__%s__ws%d__rank%d.json' % (
            self.record['config'], self.args.strategy, self.world_size, self.rank))

    def skip_if_unavailable(self):
        """DeepSpeed strategies without DeepSpeed: record the skip and leave with status 0."""
        if self.args.strategy in DEEPSPEED_STRATEGIES and not deepspeed_available():
            self.record['status'] = 'skipped'
            self.record['reason'] = 'deepspeed is not importable'
            self.write()
            print('[rank %d] skipped %s: deepspeed is not importable' % (self.rank, self.args.strategy), flush=True)
            sys.exit(0)

    def init(self):
        for key, value in MULTICAST_OFF.items():
            os.environ[key] = value
        torch.cuda.set_device(self.local_rank)
        self.device = torch.device('cuda', self.local_rank)
        if self.args.strategy not in DEEPSPEED_STRATEGIES:
            dist.init_process_group('nccl', device_id=self.device)
        self.record['gpu'] = torch.cuda.get_device_name(self.device)
        try:
            import transformers
            self.record['transformers'] = transformers.__version__
        except ImportError:
            pass
        return self.device

    def count_parameters(self, model):
        self.record['parameters'] = sum(p.numel() for p in model.parameters())

    def wrap(self, model, blocks):
        """DDP or FSDP2 around the model; DeepSpeed wraps later, together with the optimizer (see engine())."""
        strategy = self.args.strategy
        if strategy == 'ddp':
            from torch.nn.parallel import DistributedDataParallel as DDP
            return DDP(model, device_ids=[self.local_rank])
        if strategy in ('fsdp_full', 'fsdp_grad_op'):
            from torch.distributed.device_mesh import init_device_mesh
            from torch.distributed.fsdp import fully_shard
            mesh = init_device_mesh('cuda', (self.world_size,))
            # FULL_SHARD frees each block's gathered weights after its forward; SHARD_GRAD_OP keeps them to backward.
            reshard = strategy == 'fsdp_full'
            for block in blocks:
                fully_shard(block, mesh=mesh, reshard_after_forward=reshard)
            fully_shard(model, mesh=mesh, reshard_after_forward=reshard)
            return model
        return model

    def engine(self, model, optimizer, micro_batch):
        """DeepSpeed ZeRO-2/3 around the model and the script's own optimizer; None for the torch strategies."""
        if self.args.strategy not in DEEPSPEED_STRATEGIES:
            return None
        import deepspeed
        deepspeed.init_distributed(dist_backend='nccl')
        ds_config = {
            'train_micro_batch_size_per_gpu': micro_batch,
            'gradient_accumulation_steps': 1,
            'zero_optimization': {'stage': 2 if self.args.strategy == 'zero2' else 3},
            # The script's torch.optim.AdamW, so the optimizer matches the other strategies.
            'zero_allow_untested_optimizer': True,
        }
        engine, _, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, config=ds_config)
        self.record['deepspeed'] = deepspeed.__version__
        self.record['deepspeed_config'] = ds_config
        return engine

    def start(self):
        """Called once the model is wrapped and the optimizer built: the step peak starts from here."""
        gc.collect()
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        self.record['setup_s'] = round(time.time() - self.t0, 2)
        self.record['alloc_at_start'] = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        self.step_phases = {}

    def phase(self, name):
        """Closes the phase that just ended: its peak allocated and reserved bytes."""
        torch.cuda.synchronize()
        self.step_phases[name] = torch.cuda.max_memory_allocated()
        self.step_phases[name + '_reserved'] = torch.cuda.max_memory_reserved()
        if name == 'optimizer':
            self.step_phases['after_step'] = torch.cuda.memory_allocated()
            self.record['phases'].append(self.step_phases)
            self.step_phases = {}
        torch.cuda.reset_peak_memory_stats()

    def loss(self, value):
        self.record['losses'].append(float(value.detach().float().item()))

    def finish(self):
        phases = self.record['phases']
        names = ('forward', 'backward', 'optimizer')
        self.record['peak_alloc'] = max(p[n] for p in phases for n in names)
        self.record['peak_reserved'] = max(p[n + '_reserved'] for p in phases for n in names)
        peak_of = {n: max(p[n] for p in phases) for n in names}
        self.record['peak_phase'] = max(peak_of, key=peak_of.get)
        self.record['status'] = 'ok'
        self.record['elapsed_s'] = round(time.time() - self.t0, 2)
        self.write()
        print('[rank %d] %s %s ws%d: peak allocated %.1f MiB (%s), reserved %.1f MiB' % (
            self.rank, self.record['config'], self.args.strategy, self.world_size, self.record['peak_alloc'] / MIB,
            self.record['peak_phase'], self.record['peak_reserved'] / MIB), flush=True)
        if dist.is_initialized():
            dist.barrier()
            dist.destroy_process_group()

    def fail(self, error):
        self.record['status'] = 'error'
        self.record['error'] = '%s: %s' % (type(error).__name__, str(error)[:2000])
        self.record['traceback'] = traceback.format_exc()[-4000:]
        self.record['elapsed_s'] = round(time.time() - self.t0, 2)
        self.write()
        traceback.print_exc()

    def write(self):
        with open(self.path, 'w') as f:
            json.dump(self.record, f, indent=1)
