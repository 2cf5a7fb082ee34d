"""Traced inference of the model programs, reftrace vs torch, single-threaded on both sides.

    python bench/bench_models.py                  # every model, ratio per model + geometric mean
    python bench/bench_models.py --quick          # fewer, shorter repeats
    python bench/bench_models.py --profile unet   # where reftrace's time goes in one model

Models: the programs of examples/ (CNNs, sequence models, attention, generative), each run
under torch and under reftrace (``import reftrace as torch`` rebound, as tests/test_nn_examples.py
does); the reftrace model gets torch's parameters and buffers, both are traced on the example
inputs (check_trace=False) and the traced module is called on them under no_grad.

Timing: both libraries single-threaded (torch.set_num_threads(1); OMP/OPENBLAS/MKL threads 1,
set before NumPy and torch load). torch's profiling executor optimises a traced function during
its first calls, so each trace is called ``WARMUP`` times before timing. Figures are the minimum
over rounds of the mean time per call, the libraries taking turns within each round
(bench/_common.py: per_call). Target (issue 15): geometric mean <= 2.0x torch, no model above 3x.

--profile NAME: reftrace's traced call of one model with every kernel wrapped in a timer
(outermost kernel calls only: a kernel calling other ops counts once). Per op overload: calls,
time in the kernel, and the share of the call; what is left ("outside kernels") is the generated
code, input checks, attribute reads and call_method frames. --cprofile adds cProfile's top
functions by own time (NumPy's C calls appear by name: where kernel time is arithmetic).
"""
import argparse
import math
import os
import sys
import warnings

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
import reftrace  # noqa: E402
from _common import TIMER, per_call  # noqa: E402

try:
    import torch
except ImportError:  # nothing to compare with: the profile mode still works
    torch = None

warnings.simplefilter("ignore")  # torch 2.13 deprecates torch.jit.trace itself
MODELS = ["mlp", "lenet", "dcgan", "unet", "mobilenet", "audio_cnn", "super_resolution",
          "attention", "lstm_tagger", "gru_lm", "transformer_encoder", "gpt2_block", "bert_tiny"]
WARMUP = 20


def load(name, lib):
    """Run examples/NAME.py with its reftrace imports pointed at ``lib``; its namespace."""
    with open(os.path.join(ROOT, "examples", name + ".py"), encoding="utf-8") as f:
        source = f.read()
    libname = lib.__name__
    for old, new in (("import reftrace.nn.functional as F", f"import {libname}.nn.functional as F"),
                     ("from reftrace.nn import functional as F", f"from {libname}.nn import functional as F"),
                     ("import reftrace as torch", f"import {libname} as torch"),
                     ("from reftrace import nn", f"from {libname} import nn")):
        source = source.replace(old, new)
    namespace = {"__name__": f"bench_{name}"}
    exec(compile(source, name + ".py", "exec"), namespace)
    return namespace


def as_tuple(v):
    return v if isinstance(v, tuple) else (v,)


def reftrace_model(name, th_ns=None):
    """(traced reftrace module, inputs); with torch's namespace, its parameters and inputs."""
    ns = load(name, reftrace)
    model = ns["model"].eval()
    if th_ns is not None:
        model.load_state_dict({k: reftrace.from_numpy(v.detach().numpy().copy())
                               for k, v in th_ns["model"].state_dict().items()})
        inputs = tuple(reftrace.from_numpy(t.numpy().copy()) for t in as_tuple(th_ns["EXAMPLE_INPUTS"]))
    else:
        inputs = as_tuple(ns["EXAMPLE_INPUTS"])
    with reftrace.no_grad():
        traced = reftrace.jit.trace(model, inputs, check_trace=False)
    return traced, inputs


def torch_model(name):
    ns = load(name, torch)
    inputs = as_tuple(ns["EXAMPLE_INPUTS"])
    with torch.no_grad():
        traced = torch.jit.trace(ns["model"].eval(), inputs, check_trace=False)
    return traced, inputs, ns


def caller(lib, traced, inputs):
    def call():
        with lib.no_grad():
            return traced(*inputs)
    return call


def compare(names, repeat, min_time):
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}; numpy threads "
          f"{os.environ['OPENBLAS_NUM_THREADS']}; warm-up {WARMUP} calls")
    print(f"{'model':<22}{'torch us':>11}{'reftrace us':>13}{'ratio':>8}")
    ratios = []
    for name in names:
        th_traced, th_inputs, th_ns = torch_model(name)
        rt_traced, rt_inputs = reftrace_model(name, th_ns)
        fns = {"torch": caller(torch, th_traced, th_inputs),
               "reftrace": caller(reftrace, rt_traced, rt_inputs)}
        for _ in range(WARMUP):
            for fn in fns.values():
                fn()
        t = per_call(fns, repeat, min_time)
        ratios.append(t["reftrace"] / t["torch"])
        print(f"{name:<22}{t['torch'] * 1e6:>11.0f}{t['reftrace'] * 1e6:>13.0f}{ratios[-1]:>8.2f}",
              flush=True)
    geomean = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(f"{'geometric mean':<46}{geomean:>8.2f}   (target <= 2.0; max {max(ratios):.2f}, target <= 3)")


class KernelTimers:
    """Every registered kernel wrapped in a timer (outermost calls only), while active."""

    def __init__(self):
        from reftrace.ops._registry import OVERLOADS
        self.overloads = list(OVERLOADS.values())
        self.totals = {}   # qualified name -> [calls, seconds]
        self.depth = 0

    def wrap(self, ov):
        kernel, totals, clock = ov.kernel, self.totals, TIMER
        entry = totals.setdefault(ov.qualified, [0, 0.0])

        def timed(*args):
            if self.depth:
                return kernel(*args)
            self.depth = 1
            t0 = clock()
            try:
                return kernel(*args)
            finally:
                entry[1] += clock() - t0
                entry[0] += 1
                self.depth = 0
        timed.original = kernel
        return timed

    def __enter__(self):
        for ov in self.overloads:
            ov.kernel = self.wrap(ov)
        return self

    def __exit__(self, *exc):
        for ov in self.overloads:
            ov.kernel = ov.kernel.original


def profile(name, rounds, use_cprofile):
    th_ns = None
    if torch is not None:
        torch.set_num_threads(1)
        th_ns = torch_model(name)[2]
    plain = per_call({"reftrace": caller(reftrace, *reftrace_model(name, th_ns))}, 5, 0.2)["reftrace"]
    with KernelTimers() as timers:  # wrapped before tracing: the generated code binds them
        traced, inputs = reftrace_model(name, th_ns)
        call = caller(reftrace, traced, inputs)
        for _ in range(WARMUP):
            call()
        for v in timers.totals.values():
            v[:] = [0, 0.0]
        t0 = TIMER()
        for _ in range(rounds):
            call()
        total = (TIMER() - t0) / rounds
        rows = sorted(((v[1] / rounds, v[0] // rounds, k) for k, v in timers.totals.items() if v[0]),
                      reverse=True)
    in_kernels = sum(r[0] for r in rows)
    print(f"{name}: {plain * 1e6:.0f} us per traced call unwrapped, {total * 1e6:.0f} us wrapped "
          f"({len(rows)} op kinds, {sum(r[1] for r in rows)} kernel calls)")
    print(f"{'op':<44}{'calls':>6}{'us':>10}{'us/call':>9}{'share':>7}")
    for seconds, calls, qualified in rows:
        print(f"{qualified:<44}{calls:>6}{seconds * 1e6:>10.1f}{seconds * 1e6 / calls:>9.1f}"
              f"{seconds / total:>7.1%}")
    print(f"{'outside kernels':<44}{'':>6}{(total - in_kernels) * 1e6:>10.1f}{'':>9}"
          f"{(total - in_kernels) / total:>7.1%}")
    if use_cprofile:  # (the wrapped kernels stay bound in this trace's generated code)
        import cProfile
        import pstats
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(rounds):
            call()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="*", help=f"default: all ({', '.join(MODELS)})")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--profile", action="store_true", help="profile reftrace's call instead")
    parser.add_argument("--cprofile", action="store_true", help="with --profile: cProfile too")
    args = parser.parse_args()
    names = args.models or MODELS
    if args.profile:
        for name in names:
            profile(name, 20 if args.quick else 100, args.cprofile)
        return
    if torch is None:
        print("torch is not installed: nothing to compare with (--profile still works)")
        return
    compare(names, 3 if args.quick else 7, 0.05 if args.quick else 0.2)


if __name__ == "__main__":
    main()
