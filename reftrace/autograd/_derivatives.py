"""Backward nodes made from each op's derivatives.yaml entry (torch's generated Functions.cpp).

``derivatives(op, {...})`` (reftrace/ops/_registry.py) declares an op's formulas as Python
expressions beside its kernel; this module compiles them once per overload (``compiled(op)``):

- which inputs are differentiable: the arguments named by the formula keys, less those marked
  ``"non_differentiable"``, in schema order (the order of ``next_functions``);
- what is saved: the names the formulas read (found with ``ast``), as torch's generated code saves
  them. A tensor read only for its metadata (``self.shape``, ``self.dtype``...) is saved as that
  metadata (torch saves ``self_sym_sizes``), so changing it in place afterwards is no error; for
  an in-place op, ``self`` is saved as a clone taken before the op (torch's ``original_self``);
- ``result`` (``result0``.., or the schema's return names) are the outputs, saved after the call.

A formula is evaluated with the saved values, ``grad`` / ``grads`` and ``grad_input_mask``
as local names, and reftrace's namespace (its ops) plus the FunctionsManual helpers as globals.
Formulas call ordinary ops, so with ``create_graph=True`` the backward is itself recorded.
"""
import ast
import re

from .graph import Node, NoDerivativeNode, NotImplementedNode, node_class
from ._node_names import NODE_NAMES

# Tensor attributes that only read metadata: a tensor used only through these is saved as metadata
_META_ATTRS = frozenset({"shape", "dtype", "device", "dim", "numel", "size", "stride", "ndim",
                         "is_complex", "is_floating_point", "layout", "is_contiguous"})
# helpers that only read their argument's metadata (torch saves e.g. tensors_args_sizes_symint)
_META_FUNCS = frozenset({"to_args_sizes", "to_args_sizes_symint", "to_args_scalartypes",
                         "TensorGeometry", "_to_copy_backward"})

_NAMESPACE = None


def namespace():
    """The globals formulas are evaluated in: reftrace's functions, FunctionsManual's helpers,
    then every op of the table by its ATen name (``avg_pool2d``, ``threshold_backward``)."""
    global _NAMESPACE
    if _NAMESPACE is None:
        import builtins
        import reftrace
        from . import (_functions_manual, _functions_manual_grid, _functions_manual_lu,
                       _functions_manual_rnn, _functions_manual_scatter)
        ns = dict(vars(builtins))
        ns.update({k: v for k, v in vars(reftrace).items() if not k.startswith("__")})
        for helpers in (_functions_manual, _functions_manual_grid, _functions_manual_lu,
                        _functions_manual_rnn, _functions_manual_scatter):
            ns.update({k: v for k, v in vars(helpers).items() if not k.startswith("__")})
        from ..ops import PACKETS  # every ATen op by its name, also those with no Python function
        for qualified, packet in PACKETS.items():
            ns.setdefault(qualified.split("::")[1], packet)
        ns["__builtins__"] = builtins
        _NAMESPACE = ns
    return _NAMESPACE


def output_names(op):
    """The names a formula uses for the op's outputs: ``result``, or ``result0``.. and the
    schema's return names when there are several."""
    returns = op.schema.returns
    if len(returns) == 1:
        return ["result"]
    return [r.name or f"result{i}" for i, r in enumerate(returns)]


# reftrace ops that stand for a torch op of another name (torch's composite calls it and records
# its node) or a hand-written torch node (torch/csrc/autograd/functions/tensor.h)
_TORCH_NODES = {
    "batch_norm": "native_batch_norm", "layer_norm": "native_layer_norm",
    "group_norm": "native_group_norm", "_convolution": "convolution",
    "nll_loss": "nll_loss_forward", "nll_loss2d": "nll_loss2d_forward",
    "adaptive_avg_pool2d": "_adaptive_avg_pool2d", "linalg_inv": "linalg_inv_ex",
    "unsafe_chunk": "unsafe_split.Tensor",  # (these have no overload name to append)
    "square": "pow.Tensor_Scalar", "conj_physical": "_conj_physical",
}
_HAND_WRITTEN = {"copy_": "CopyBackwards"}


def node_name(op):
    """torch's grad_fn class name for ``op`` (an in-place or out variant shares its functional's)."""
    base = op.schema.name.split("::")[1]
    if base in _HAND_WRITTEN:
        return _HAND_WRITTEN[base]
    key = _TORCH_NODES.get(base, base) + ("." + op.overload if op.overload else "")
    name = NODE_NAMES.get(key)
    if name is None and op.schema.is_inplace:
        twin = _functional_twin(op)
        name = twin is not None and NODE_NAMES.get(twin.qualified.split("::")[1]) or None
    if name is None and op.is_inplace:
        base = op.schema.name.split("::")[1].rstrip("_")
        name = NODE_NAMES.get(base + ("." + op.overload if op.overload else ""))
    if name is None and base.endswith("_copy"):
        # a view-copy op (permute_copy) has its view's node, suffixed: PermuteBackward0_copy
        view = NODE_NAMES.get(base[:-5] + ("." + op.overload if op.overload else ""))
        name = view and view + "_copy"
    return name


def _signature(op):
    return [(a.name, str(a.type)) for a in op.schema.arguments]


def _functional_twin(op):
    """The functional overload an in-place one takes its yaml entry from: torchgen matches them by
    signature (argument names and types), not by overload name (pow_.Scalar is pow.Tensor_Scalar)."""
    from ..ops import PACKETS
    packet = PACKETS.get(op.schema.name.rstrip("_"))
    sig = _signature(op)
    for ov in (packet.overloads if packet is not None else ()):
        if not ov.schema.is_inplace and not ov.schema.is_out and _signature(ov) == sig:
            return ov
    return None


class _Formula:
    __slots__ = ("inputs", "code", "text", "slots")

    def __init__(self, inputs, code, text):
        self.inputs = inputs  # the argument names this formula gives gradients for
        self.code = code
        self.text = text
        self.slots = None  # the edge index of each input, when no input is a Tensor[] list


class Compiled:
    """An overload's derivatives, compiled: what to save, which inputs get edges, the formulas."""

    def __init__(self, op):
        self.op = op
        args = op.schema.arguments
        self.name = node_name(op) or _fallback_name(op)
        self.cls = node_class(self.name, FormulaNode)
        diff = set()
        self.users = {}  # saved name -> the inputs whose formulas read it
        self.formulas = []
        reads = set()
        uses = []
        for key, text in op.derivatives.items():
            names = key.split(", ")
            if text == "non_differentiable":
                continue
            diff.update(names)
            tree = ast.parse(text.strip(), mode="eval")
            uses.append(tree)
            read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
            reads |= read
            wrapped = _wrapped_reads(tree, names)
            for r in read:  # torch saves a value only when an input whose formula reads it
                self.users.setdefault(r, set()).update(wrapped.get(r, names))  # needs a gradient
            code = compile(tree, f"<derivative of {op.qualified} for {key}>", "eval")
            self.formulas.append(_Formula(tuple(names), code, text))
        # a value no input's gradient needs (wrap_opt_if without a grad_input_mask) is never
        # saved: record() then checks users even when every input needs a gradient
        self.unused_saves = any(not u for u in self.users.values())
        # the differentiable inputs, in schema order: (argument index, name, is a Tensor[] list)
        self.inputs = [(i, a.name, a.type.is_list) for i, a in enumerate(args) if a.name in diff]
        # with no Tensor[] input every node of this op has one edge per input, in this order:
        # the name -> edge slices (and each formula's edge indices) are worked out once here
        self.static_slices = None
        if not any(is_list for _, _, is_list in self.inputs):
            self.static_slices = {name: (k, 1, False) for k, (_, name, _) in enumerate(self.inputs)}
            for f in self.formulas:
                f.slots = tuple(self.static_slices[n][0] for n in f.inputs)
        self.outputs = output_names(op)
        n_out = len(op.schema.returns)
        # torchgen's gen_differentiable_outputs: without an output_differentiability list, a
        # formula that reads ``grad`` (not ``grads``) makes only the first output differentiable
        # (_ctc_loss's log_alpha, _weight_norm_interface's norms get no grad_fn)
        self.out_diff = op.output_differentiability or (
            (True,) + (False,) * (n_out - 1) if "grad" in reads else (True,) * n_out)
        meta_only = _metadata_only(uses)
        self.saved = []  # (argument index, name, how): how is "tensor", "meta", "value", "list"
        for i, a in enumerate(args):
            if a.name not in reads:
                continue
            if a.type.base == "Tensor" and not a.type.is_list:
                how = "meta" if a.name in meta_only else "tensor"
            elif a.type.base == "Tensor":
                how = "metalist" if a.name in meta_only else "list"
            else:
                how = "value"
            self.saved.append((i, a.name, how))
        self.saved_outputs = [(k, n) for k, n in enumerate(self.outputs) if n in reads]
        self.clone_self = op.is_inplace  # in-place: `self` is saved as it was before the op


def _fallback_name(op):
    base = op.schema.name.split("::")[1].rstrip("_")
    return "".join(p.title() for p in base.split("_")) + "Backward0"


def _wrapped_reads(tree, names):
    """Names a formula reads only as ``wrap_opt_if(name, <grad_input_mask[k] or ...>)``, each
    with the inputs whose gradients need it: torchgen saves such a value only when one of those
    requires grad (``_trilinear``'s i1 is saved for i2's and i3's gradients, not i1's)."""
    inside, needed = set(), {}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "wrap_opt_if" and isinstance(node.args[0], ast.Name)):
            inside.add(node.args[0])
            ks = [n.slice.value for n in ast.walk(node.args[1]) if isinstance(n, ast.Subscript)
                  and isinstance(n.value, ast.Name) and n.value.id == "grad_input_mask"]
            needed.setdefault(node.args[0].id, set()).update(names[k] for k in ks)
    elsewhere = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n not in inside}
    return {name: users for name, users in needed.items() if name not in elsewhere}


def _metadata_only(trees):
    """Names that every formula reads only as ``name.<metadata>``."""
    seen, other = set(), set()
    for tree in trees:
        parents = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                parents[child] = node
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                p = parents.get(node)
                if isinstance(p, ast.Attribute) and p.value is node and p.attr in _META_ATTRS:
                    seen.add(node.id)
                elif (isinstance(p, ast.Call) and isinstance(p.func, ast.Name)
                      and p.func.id in _META_FUNCS and node in p.args and p.func is not node):
                    seen.add(node.id)
                else:
                    other.add(node.id)
    return seen - other


def compiled(op):
    c = op.__dict__.get("_compiled_derivatives")
    if c is None:
        c = op._compiled_derivatives = Compiled(op)
    return c


_SIZE = []


class TensorMeta:
    """What a formula may read of a tensor saved for its metadata only (torch's self_sym_sizes,
    self_scalar_type ...)."""
    __slots__ = ("shape", "dtype", "device", "_stride", "_contig", "_offset")

    def __init__(self, t):
        if not _SIZE:
            from .._tensor import Size  # (this module loads before _tensor finishes)
            _SIZE.append(Size)
        self.shape = _SIZE[0](t._array.shape)
        self.dtype = t.dtype
        self.device = t.device
        self._stride = t.stride()
        self._contig = t._stride is None or None  # None: worked out when asked
        self._offset = t.storage_offset() if t._base is not None else 0

    def storage_offset(self):
        return self._offset

    @property
    def ndim(self):
        return len(self.shape)

    layout = property(lambda self: None)

    def dim(self):
        return len(self.shape)

    def numel(self):
        return self.shape.numel()

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def stride(self, dim=None):
        return self._stride if dim is None else self._stride[dim]

    def is_complex(self):
        return self.dtype.is_complex

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_contiguous(self, memory_format=None):
        if self._contig is None:
            from .._tensor import _is_contiguous
            self._contig = _is_contiguous(tuple(self.shape), self._stride)
        return self._contig


class SavedVariable:
    """A tensor saved for backward with its version then (torch's SavedVariable): unpacking a
    tensor modified in place since raises torch's error."""
    __slots__ = ("tensor", "version", "saving_node", "output_nr")

    def __init__(self, t, is_output=False, saving_node=None):
        self.tensor = t
        self.version = t._version
        # the error names an output after the node saving it, an input after its grad_fn then
        self.saving_node = saving_node if is_output else None
        self.output_nr = t._output_nr

    def unpack(self):
        t = self.tensor
        if t._version != self.version:
            # torch 2.13's message names the node without "Backward0": "output 0 of Exp"
            fn = self.saving_node if self.saving_node is not None else t._grad_fn
            name = re.sub(r"Backward\d*$", "", fn.name()) if fn is not None else None
            where = f", which is output {self.output_nr} of {name}," if name else ""
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{t.type()} [{', '.join(map(str, t.shape_tuple))}]]"
                f"{where} is at version {t._version}; expected version {self.version} instead. "
                "Hint: enable anomaly detection to find the operation that failed to compute its "
                "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
        return t


_FREED = ("Trying to backward through the graph a second time (or directly access saved tensors "
          "after they have already been freed). Saved intermediate values of the graph are freed "
          "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
          "backward through the graph a second time or if you need to access saved tensors after "
          "calling backward.")


_FREED_VALUE = object()  # a saved tensor released after backward (retain_graph=False)


def _is_saved_tensor(v):
    return type(v) is SavedVariable or (type(v) is list and any(type(e) is SavedVariable for e in v))


class FormulaNode(Node):
    """The grad_fn of an op with a derivatives.yaml entry."""
    __slots__ = ("_c", "_saved", "_slices", "_input_meta")

    def apply(self, grads, needed=None):
        c = self._c
        edges = self._next
        out = [None] * len(edges)
        for g in grads:
            if g is not None:
                break
        else:
            return out
        env = {}
        for name, v in self._saved.items():
            tv = type(v)
            if tv is SavedVariable:
                t = v.tensor
                # (unpack's version check, inlined: it raises only when the versions differ)
                env[name] = t if t._vc[0] == v.version else v.unpack()
            elif tv is list and v and type(v[0]) is SavedVariable:
                env[name] = [s.unpack() if s is not None else None for s in v]
            elif v is _FREED_VALUE:
                raise RuntimeError(_FREED)
            else:
                env[name] = v
        env["grads"] = grads
        env["grad"] = grads[0]
        ns = _NAMESPACE if _NAMESPACE is not None else namespace()
        slices = self._slices
        for f in c.formulas:
            slots = f.slots
            if slots is None or needed is not None:
                mask = [_needs(slices[n], needed, edges) for n in f.inputs]
            elif len(slots) == 1:  # (one input, the commonest formula: no list comprehension)
                if edges[slots[0]][0] is None:
                    continue
                mask = [True]
            else:
                mask = [edges[k][0] is not None for k in slots]
            if True not in mask:
                continue
            env["grad_input_mask"] = mask
            try:
                value = eval(f.code, ns, env)
            except NameError as e:  # a backward op the formula calls is not in reftrace yet
                raise NotImplementedError(
                    f"reftrace cannot differentiate {c.op.qualified} yet: its derivatives.yaml "
                    f"formula for {', '.join(f.inputs)} calls {e.name}, which reftrace does not "
                    f"implement (formula: {f.text})") from None
            if len(f.inputs) == 1:
                if slots is not None:
                    out[slots[0]] = value
                    continue
                value = (value,)
            if slots is not None:
                for k, v, m in zip(slots, value, mask):
                    if m:
                        out[k] = v
                continue
            for name, v, m in zip(f.inputs, value, mask):
                if not m:
                    continue
                start, n, is_list = slices[name]
                if is_list:
                    for k in range(n):
                        out[start + k] = v[k] if v is not None else None
                else:
                    out[start] = v
        return out

    def release(self):
        """Free the saved tensors (sizes, scalars stay: torch keeps those too)."""
        saved = self._saved
        if not saved:
            return
        freed = None
        for k, v in saved.items():
            if type(v) is SavedVariable or (type(v) is list and _is_saved_tensor(v)):
                if freed is None:
                    freed = dict(saved)
                freed[k] = _FREED_VALUE
        if freed is not None:
            self._saved = freed


def _needs(sl, needed, edges):
    start, n, _ = sl
    for k in range(start, start + n):
        if edges[k][0] is not None and (needed is None or needed[k]):
            return True
    return False


def make_not_implemented(op):
    """The node of an op with no formula: torch's node name when torch has a derivatives.yaml
    entry (whose formula reftrace lacks), else torch's ``NotImplemented``."""
    name = node_name(op)
    if name is None:
        return node_class("NotImplemented", NoDerivativeNode)
    return node_class(name, NotImplementedNode)
