"""Measurement harness for the held-out script set (loaded through PYTHONPATH).

What it does, without changing what the measured script does on the GPU:

* offline `from_pretrained`: a hub id that has a folder under ``hf_configs/<id with / as __>/config.json`` is
  built from that config with random weights (nothing is downloaded). The dtype follows transformers 5: the
  ``dtype=`` / ``torch_dtype=`` the script passes, else the checkpoint's stored dtype from its config.json
  (``torch_dtype`` / ``dtype``), else float32. ``device_map`` (any value but "cpu") puts the model on the GPU.
  The model comes back in eval mode, as ``from_pretrained`` returns it. ``AutoConfig.from_pretrained(id)`` and
  ``XConfig.from_pretrained(id)`` read the same config.json.
* records, at process exit, ``torch.cuda.max_memory_allocated()`` / ``max_memory_reserved()``, the parameters
  that optimizers received (deduplicated), the largest ``nn.Module`` that was moved to CUDA, dtypes, and the
  exception that ended the script, if any; appends one JSON line to the file named by ``HOLDOUT_RESULT``.

Patching is lazy (an import hook patches torch / transformers right after they are imported), so a script that
never imports them pays nothing. Strong references to parameters or modules are never kept (the harness must not
change the peak it measures).
"""

import atexit
import collections
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import threading
import time
import traceback
import weakref

_RESULT = os.environ.get("HOLDOUT_RESULT")
_HERE = os.path.dirname(os.path.abspath(__file__))
_HF_DIR = os.environ.get("HOLDOUT_HF_CONFIGS") or os.path.join(os.path.dirname(_HERE), "hf_configs")
_PID = os.getpid()
_T0 = time.time()

# No network anywhere: make the HF libraries fail fast instead of waiting on a socket.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("WANDB_MODE", "disabled")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

_state = {
    "exception": None,
    "opt_params": {},  # id(param) -> (numel, dtype str, requires_grad)
    "optimizers": [],
    "module": None,  # snapshot of the largest module seen on CUDA
    "module_ref": None,
    "hub_models": [],
    "notes": [],
}
_tl = threading.local()


def _note(msg):
    if len(_state["notes"]) < 50:
        _state["notes"].append(str(msg)[:500])


# --------------------------------------------------------------------------- import hook

class _PatchLoader(importlib.abc.Loader):
    def __init__(self, inner, hook):
        self._inner = inner
        self._hook = hook

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module):
        self._inner.exec_module(module)
        try:
            self._hook(sys.modules.get(module.__name__, module))
        except Exception as exc:  # never break the import
            _note("hook for %s failed: %r" % (module.__name__, exc))

    def __getattr__(self, name):
        return getattr(self._inner, name)


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, hooks):
        self.hooks = hooks
        self.busy = set()

    def find_spec(self, fullname, path=None, target=None):
        hook = self.hooks.get(fullname)
        if hook is None or fullname in self.busy:
            return None
        self.busy.add(fullname)
        try:
            spec = None
            for finder in sys.meta_path:
                if finder is self:
                    continue
                fs = getattr(finder, "find_spec", None)
                if fs is None:
                    continue
                try:
                    spec = fs(fullname, path, target)
                except Exception:
                    spec = None
                if spec is not None:
                    break
            if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
                return spec
            spec.loader = _PatchLoader(spec.loader, hook)
            return spec
        finally:
            self.busy.discard(fullname)


# --------------------------------------------------------------------------- torch patches

def _majority_dtype(counter):
    if not counter:
        return None
    return max(counter.items(), key=lambda kv: kv[1])[0]


def _module_snapshot(mod):
    total = 0
    trainable = 0
    on_cuda = False
    dtypes = collections.Counter()
    seen = set()
    for p in mod.parameters():
        if id(p) in seen:
            continue
        seen.add(id(p))
        n = p.numel()
        total += n
        if p.requires_grad:
            trainable += n
        dtypes[str(p.dtype)] += n
        if p.device.type == "cuda":
            on_cuda = True
    return {
        "class": type(mod).__name__,
        "params": total,
        "trainable": trainable,
        "dtype": _majority_dtype(dtypes),
        "dtypes": dict(dtypes),
        "on_cuda": on_cuda,
    }


def _note_module(mod):
    snap = _module_snapshot(mod)
    if not snap["on_cuda"]:
        return
    cur = _state["module"]
    ref = _state["module_ref"]
    same = ref is not None and ref() is mod
    if cur is None or same or snap["params"] >= cur["params"]:
        _state["module"] = snap
        try:
            _state["module_ref"] = weakref.ref(mod)
        except TypeError:
            _state["module_ref"] = None


def _patch_torch(torch):
    nn = torch.nn
    orig_apply = nn.Module._apply

    def _apply(self, *args, **kwargs):
        depth = getattr(_tl, "depth", 0)
        _tl.depth = depth + 1
        try:
            out = orig_apply(self, *args, **kwargs)
        finally:
            _tl.depth = depth
        if depth == 0:
            try:
                _note_module(self)
            except Exception as exc:
                _note("module snapshot failed: %r" % (exc,))
        return out

    nn.Module._apply = _apply

    Optimizer = torch.optim.Optimizer
    orig_init = Optimizer.__init__

    def __init__(self, *args, **kwargs):
        orig_init(self, *args, **kwargs)
        try:
            n_here = 0
            for group in self.param_groups:
                for p in group["params"]:
                    if not isinstance(p, torch.Tensor):
                        continue
                    if id(p) not in _state["opt_params"]:
                        _state["opt_params"][id(p)] = (p.numel(), str(p.dtype), bool(p.requires_grad))
                    n_here += p.numel()
            d = dict(self.defaults) if isinstance(getattr(self, "defaults", None), dict) else {}
            _state["optimizers"].append({
                "class": type(self).__name__,
                "module": type(self).__module__,
                "fused": d.get("fused"),
                "foreach": d.get("foreach"),
                "params": n_here,
            })
        except Exception as exc:
            _note("optimizer hook failed: %r" % (exc,))

    Optimizer.__init__ = __init__

    # Registered again now so that it runs before the exit handlers torch registered while importing (LIFO).
    atexit.register(_write_record)


# --------------------------------------------------------------------------- offline from_pretrained

_LOAD_ONLY_KWARGS = {
    "cache_dir", "force_download", "resume_download", "proxies", "local_files_only", "token", "use_auth_token",
    "revision", "subfolder", "variant", "use_safetensors", "weights_only", "from_tf", "from_flax",
    "low_cpu_mem_usage", "trust_remote_code", "code_revision", "offload_folder", "offload_state_dict",
    "offload_buffers", "max_memory", "quantization_config", "load_in_8bit", "load_in_4bit", "tp_plan", "tp_size",
    "device_mesh", "key_mapping", "adapter_kwargs", "adapter_name", "ignore_mismatched_sizes", "_fast_init",
    "state_dict", "_from_auto", "_from_pipeline", "mirror", "gguf_file", "generation_config", "distributed_config",
    "use_kernels", "kernel_config", "experts_implementation",
}


def _local_dir(name):
    if not isinstance(name, (str, os.PathLike)):
        return None
    name = os.fspath(name)
    if os.path.isdir(name) or os.path.isfile(name):
        return None
    cand = os.path.join(_HF_DIR, name.replace("/", "__"))
    if os.path.isfile(os.path.join(cand, "config.json")):
        return cand
    return None


def _resolve_dtype(torch, value, config):
    if isinstance(value, str) and value != "auto":
        value = getattr(torch, value)
    if isinstance(value, torch.dtype):
        return value
    # None or "auto": transformers 5 loads the checkpoint's own dtype
    stored = getattr(config, "dtype", None)
    if stored is None:
        try:
            with open(os.path.join(_local_dir(getattr(config, "_name_or_path", "")) or "", "config.json")) as fh:
                raw = json.load(fh)
            stored = raw.get("dtype") or raw.get("torch_dtype")
        except Exception:
            stored = None
    if isinstance(stored, str):
        stored = getattr(torch, stored, None)
    return stored if isinstance(stored, torch.dtype) else torch.float32


def _set_config_dtype(config, dtype):
    # transformers 5 names it `dtype` (and warns when `torch_dtype` is touched); 4.x used `torch_dtype`
    tf = sys.modules.get("transformers")
    major = 5
    try:
        major = int(str(getattr(tf, "__version__", "5")).split(".")[0])
    except ValueError:
        pass
    for attr in (("dtype",) if major >= 5 else ("dtype", "torch_dtype")):
        try:
            setattr(config, attr, dtype)
        except Exception:
            pass


class _FastRandomInit:
    """While a hub model is built from its config, fill large CPU tensors from a random pool instead of drawing
    every element (CPU normal_/uniform_ in bf16/fp16 takes tens of seconds for a 1B model). Values keep the
    requested distribution's scale; only the speed differs. Restored on exit."""

    POOL = (1 << 20) + 37

    def __init__(self, torch):
        self.torch = torch

    def __enter__(self):
        import random
        torch = self.torch
        self.saved = {name: torch.Tensor.__dict__.get(name) for name in ("normal_", "uniform_")}
        orig_normal = torch.Tensor.normal_
        orig_uniform = torch.Tensor.uniform_
        rng = random.Random(1234)
        gen = torch.Generator().manual_seed(1234)
        pools = {}

        def pool(kind):
            if kind not in pools:
                if kind == "normal":
                    pools[kind] = torch.randn(self.POOL, generator=gen)
                else:
                    pools[kind] = torch.rand(self.POOL, generator=gen) * 2 - 1
            return pools[kind]

        def fill(t, kind):
            src = pool(kind)
            flat = t.view(-1)
            n, i, P = flat.numel(), 0, src.numel()
            while i < n:
                off = rng.randrange(0, P // 2)
                k = min(n - i, P - off)
                flat[i:i + k].copy_(src[off:off + k])
                i += k

        def usable(t):
            return (t.device.type == "cpu" and t.is_floating_point() and t.is_contiguous()
                    and t.numel() >= (1 << 16))

        def normal_(t, mean=0.0, std=1.0, *, generator=None):
            if not usable(t):
                return orig_normal(t, mean, std, generator=generator)
            with torch.no_grad():
                fill(t, "normal")
                if std != 1.0:
                    t.mul_(std)
                if mean != 0.0:
                    t.add_(mean)
            return t

        def uniform_(t, a=0.0, b=1.0, *, generator=None):
            if not usable(t):
                return orig_uniform(t, a, b, generator=generator)
            with torch.no_grad():
                fill(t, "uniform")
                t.mul_((b - a) / 2.0).add_((a + b) / 2.0)
            return t

        torch.Tensor.normal_ = normal_
        torch.Tensor.uniform_ = uniform_
        return self

    def __exit__(self, *exc):
        for name, value in self.saved.items():
            if value is None:
                try:
                    delattr(self.torch.Tensor, name)
                except AttributeError:
                    pass
            else:
                setattr(self.torch.Tensor, name, value)
        return False


def _build_offline(klass, hub_id, local, args, kwargs, auto):
    import torch

    kwargs = dict(kwargs)
    dtype_arg = kwargs.pop("dtype", None)
    tdt = kwargs.pop("torch_dtype", None)
    if dtype_arg is None:
        dtype_arg = tdt
    device_map = kwargs.pop("device_map", None)
    output_loading_info = kwargs.pop("output_loading_info", False)
    attn_impl = kwargs.pop("attn_implementation", None)
    dropped = [k for k in list(kwargs) if k in _LOAD_ONLY_KWARGS]
    for k in dropped:
        kwargs.pop(k)
    config = kwargs.pop("config", None)
    if config is None or isinstance(config, (str, os.PathLike)):
        src = local if config is None else (_local_dir(config) or config)
        if auto:
            from transformers import AutoConfig
            config = AutoConfig.from_pretrained(src, **kwargs)
        else:
            config = klass.config_class.from_pretrained(src, **kwargs)
    else:
        for k, v in kwargs.items():
            try:
                setattr(config, k, v)
            except Exception:
                pass
    try:
        config._name_or_path = hub_id
    except Exception:
        pass
    dtype = _resolve_dtype(torch, dtype_arg, config)
    _set_config_dtype(config, dtype)
    extra = {}
    if attn_impl is not None:
        extra["attn_implementation"] = attn_impl

    def _make():
        if auto:
            try:
                return klass.from_config(config, **extra)
            except TypeError:
                return klass.from_config(config)
        maker = getattr(klass, "_from_config", None)
        if maker is not None:
            try:
                return maker(config, **extra)
            except TypeError:
                return maker(config)
        return klass(config, *args)

    prev = torch.get_default_dtype()
    model = None
    try:
        try:
            torch.set_default_dtype(dtype)
            with _FastRandomInit(torch):
                model = _make()
        finally:
            torch.set_default_dtype(prev)
    except Exception as exc:  # e.g. an init op without a half kernel on CPU: build fp32, then cast
        _note("direct %s build failed (%r); built in float32 and cast" % (dtype, exc))
        _set_config_dtype(config, torch.float32)
        with _FastRandomInit(torch):
            model = _make()
        _set_config_dtype(config, dtype)
    wrong = any(p.is_floating_point() and p.dtype != dtype for p in model.parameters())
    if wrong:
        model = model.to(dtype)
    _set_config_dtype(model.config, dtype)
    if device_map is not None and not (isinstance(device_map, str) and device_map == "cpu"):
        model = model.to("cuda")
    model.eval()
    _state["hub_models"].append({
        "id": hub_id,
        "class": type(model).__name__,
        "dtype": str(dtype),
        "params": sum(p.numel() for p in model.parameters()),
        "device_map": None if device_map is None else str(device_map),
        "ignored_kwargs": dropped,
    })
    if output_loading_info:
        return model, {"missing_keys": [], "unexpected_keys": [], "mismatched_keys": [], "error_msgs": []}
    return model


def _wrap_model_from_pretrained(cls, auto):
    raw = cls.__dict__.get("from_pretrained")
    if raw is None:
        return
    func = raw.__func__ if isinstance(raw, (classmethod, staticmethod)) else raw
    if getattr(func, "_holdout_wrapped", False):
        return

    def from_pretrained(klass, pretrained_model_name_or_path=None, *args, **kwargs):
        local = _local_dir(pretrained_model_name_or_path)
        if local is None:
            return func(klass, pretrained_model_name_or_path, *args, **kwargs)
        return _build_offline(klass, os.fspath(pretrained_model_name_or_path), local, args, kwargs, auto)

    from_pretrained._holdout_wrapped = True
    from_pretrained.__doc__ = getattr(func, "__doc__", None)
    cls.from_pretrained = classmethod(from_pretrained)


def _wrap_config_from_pretrained(cls):
    raw = cls.__dict__.get("from_pretrained")
    if raw is None:
        return
    is_static = isinstance(raw, staticmethod)
    func = raw.__func__ if isinstance(raw, (classmethod, staticmethod)) else raw
    if getattr(func, "_holdout_wrapped", False):
        return
    if is_static:
        def from_pretrained(pretrained_model_name_or_path, *args, **kwargs):
            local = _local_dir(pretrained_model_name_or_path)
            return func(local or pretrained_model_name_or_path, *args, **kwargs)
        from_pretrained._holdout_wrapped = True
        cls.from_pretrained = staticmethod(from_pretrained)
    else:
        def from_pretrained(klass, pretrained_model_name_or_path, *args, **kwargs):
            local = _local_dir(pretrained_model_name_or_path)
            cfg = func(klass, local or pretrained_model_name_or_path, *args, **kwargs)
            if local is not None:
                target = cfg[0] if isinstance(cfg, tuple) else cfg
                try:
                    target._name_or_path = os.fspath(pretrained_model_name_or_path)
                except Exception:
                    pass
            return cfg
        from_pretrained._holdout_wrapped = True
        cls.from_pretrained = classmethod(from_pretrained)


def _hook_modeling_utils(mod):
    _wrap_model_from_pretrained(mod.PreTrainedModel, auto=False)


def _hook_configuration_utils(mod):
    seen = set()
    for name in ("PreTrainedConfig", "PretrainedConfig"):
        cls = getattr(mod, name, None)
        if cls is not None and id(cls) not in seen:
            seen.add(id(cls))
            _wrap_config_from_pretrained(cls)


def _hook_configuration_auto(mod):
    _wrap_config_from_pretrained(mod.AutoConfig)


def _hook_auto_factory(mod):
    _wrap_model_from_pretrained(mod._BaseAutoModelClass, auto=True)


def _hook_modeling_auto(mod):
    base = sys.modules["transformers.models.auto.auto_factory"]._BaseAutoModelClass
    for value in list(vars(mod).values()):
        if isinstance(value, type) and issubclass(value, base) and value is not base:
            _wrap_model_from_pretrained(value, auto=True)


# --------------------------------------------------------------------------- exit record

def _excepthook(etype, value, tb):
    try:
        _state["exception"] = "".join(traceback.format_exception_only(etype, value)).strip()[-2000:]
    except Exception:
        _state["exception"] = repr(value)[-2000:]
    _orig_excepthook(etype, value, tb)


_orig_excepthook = sys.excepthook
sys.excepthook = _excepthook


def _write_record():
    if os.getpid() != _PID or not _RESULT or _state.get("written"):
        return
    _state["written"] = True
    rec = {
        "pid": _PID,
        "argv": list(sys.argv),
        "elapsed_s": round(time.time() - _T0, 3),
        "exception": _state["exception"],
        "cuda_initialized": False,
        "peak_alloc": None,
        "peak_reserved": None,
        "alloc_at_exit": None,
    }
    torch = sys.modules.get("torch")
    if torch is not None:
        rec["torch"] = getattr(torch, "__version__", None)
        try:
            if torch.cuda.is_initialized():
                rec["cuda_initialized"] = True
                try:
                    torch.cuda.synchronize()
                except Exception:
                    pass
                rec["peak_alloc"] = int(torch.cuda.max_memory_allocated())
                rec["peak_reserved"] = int(torch.cuda.max_memory_reserved())
                rec["alloc_at_exit"] = int(torch.cuda.memory_allocated())
                rec["device_name"] = torch.cuda.get_device_name(0)
        except Exception as exc:
            _note("cuda stats failed: %r" % (exc,))
    tf = sys.modules.get("transformers")
    if tf is not None:
        rec["transformers"] = getattr(tf, "__version__", None)

    opt = _state["opt_params"]
    trainable = sum(v[0] for v in opt.values())
    opt_dtypes = collections.Counter()
    for numel, dt, _rg in opt.values():
        opt_dtypes[dt] += numel
    module = _state["module"]
    ref = _state["module_ref"]
    if ref is not None:
        live = ref()
        if live is not None:
            try:
                snap = _module_snapshot(live)
                if snap["on_cuda"]:
                    module = snap
            except Exception:
                pass
    rec["module"] = module
    rec["params"] = module["params"] if module else (trainable or None)
    rec["trainable_params"] = trainable if opt else None
    rec["opt_param_dtypes"] = dict(opt_dtypes)
    rec["dtype"] = _majority_dtype(opt_dtypes) or (module["dtype"] if module else None)
    rec["module_dtype"] = module["dtype"] if module else None
    rec["optimizers"] = _state["optimizers"]
    rec["hub_models"] = _state["hub_models"]
    rec["notes"] = _state["notes"]
    try:
        with open(_RESULT, "a") as fh:
            fh.write(json.dumps(rec) + "\n")
    except Exception:
        pass


atexit.register(_write_record)

_HOOKS = {
    "torch": _patch_torch,
    "transformers.modeling_utils": _hook_modeling_utils,
    "transformers.configuration_utils": _hook_configuration_utils,
    "transformers.models.auto.configuration_auto": _hook_configuration_auto,
    "transformers.models.auto.auto_factory": _hook_auto_factory,
    "transformers.models.auto.modeling_auto": _hook_modeling_auto,
}
for _name, _hook in _HOOKS.items():
    # already imported (unusual for a sitecustomize): patch now
    if _name in sys.modules:
        try:
            _hook(sys.modules[_name])
        except Exception as _exc:
            _note("late hook %s failed: %r" % (_name, _exc))
sys.meta_path.insert(0, _Finder(_HOOKS))


# --------------------------------------------------------------------------- chain to the environment's own sitecustomize

def _chain_next_sitecustomize():
    paths = [p for p in sys.path if p and os.path.abspath(p) != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", paths)
    if spec is None or spec.loader is None:
        return
    if spec.origin and os.path.abspath(spec.origin) == os.path.abspath(__file__):
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


try:
    _chain_next_sitecustomize()
except Exception as _exc:
    _note("chained sitecustomize failed: %r" % (_exc,))
