"""Generated code: a traced Graph turned into a Python function that calls the kernels directly.

    fn = compiled(graph, "fn")   # built once, cached on the graph
    fn(*args)                    # == Interpreter(graph).run(*args), bit for bit
    print(fn.source)

The interpreter (interpreter.py) is the readable reference: one hook per node kind, run over an
environment. It pays for that on every node of every call (a hook call, list building, dict
reads and writes). Here each node becomes one line of Python, in the style of torch.fx's
codegen, and CPython runs the lines with local variables only:

    def fn(x):
        x_3 = aten_add_Tensor(x, c0, 1);  del x
        x_5 = aten_mul_Tensor(x_3, c1);  del x_3
        return x_5

Names: graph values keep their debug names made legal (``x.3`` -> ``x_3``, ``%5`` -> ``_5``);
ops are named by their overload (``aten_add_Tensor``); int, float, str, bool and None constants
are written inline, others are globals (tensors: ``c0, c1 ..``), the very objects the graph holds
and the interpreter passes. Each value is deleted right after its last use, so a large
intermediate dies as soon as nothing needs it.

One source, two functions. A kernel call alone is not quite what the interpreter does:
``run_kernel`` also applies the requires_grad rule, which costs about a microsecond per op. When
grad mode is off, or nothing the call can reach requires grad (inputs, module parameters and
buffers, tensor constants), no result can require grad, and the rule never fires: that call runs
the source compiled with the op names bound to bare kernels. Otherwise it runs the same source
with each op name bound to ``run_kernel``. Both give the interpreter's results.
"""
import itertools
import keyword
import linecache
import math
import re
import weakref

from .._dispatch import run_kernel
from .._math_bits import LIVE as MATH_BITS_LIVE
from .._tensor import Tensor, scalar_to_tensor
from . import _types as T
from ..autograd.grad_mode import STATE as GRAD
from ._python_op import run_python_op
from . import _size_arith
from ._size_arith import int_div, wrap_int64
from .interpreter import InterpreterError, _argument_converter, check_input, size_of


def compiled(graph, name="forward"):
    """The CompiledGraph of ``graph``: made on first use (``name`` names its function), then
    kept as ``graph.__dict__["_compiled"]`` (where traced calls look first)."""
    c = graph.__dict__.get("_compiled")
    if c is None:
        c = graph.__dict__["_compiled"] = CompiledGraph(graph, name)
    return c


class CompiledGraph:
    """Calls check the inputs as the interpreter does, then run the generated function."""

    _counter = itertools.count()

    def __init__(self, graph, name="forward"):
        self.graph = graph
        self.source, fn_name, namespace, ops = generate(graph, name)
        filename = f"<reftrace-codegen-{next(self._counter)}:{name}>"
        # tracebacks show the generated line that failed; the text goes when this object does
        linecache.cache[filename] = (len(self.source), None, self.source.splitlines(True), filename)
        weakref.finalize(self, linecache.cache.pop, filename, None)
        code = compile(self.source, filename, "exec")
        fast, grad = dict(namespace), dict(namespace)
        for n, op in ops.items():
            fast[n] = op.kernel
            grad[n] = _with_grad_rule(op)
        # a nested method or function call runs in its caller's mode: what the callee can reach
        # the caller reached too, so asking again would walk the module tree once per level
        for ns, run in ((fast, "run_nested_fast"), (grad, "run_nested_grad")):
            ns["call_method"], ns["call_function"] = _call_method(run), _call_function(run)
        exec(code, fast)
        exec(code, grad)
        self._fast, self._grad = fast[fn_name], grad[fn_name]
        self._inputs = [(v.type_, v.debugName()) for v in graph.param.outputs_]
        self._inputs_ok = _input_predicate(self._inputs)
        self._n_inputs = len(self._inputs)
        self._constants = tuple(v for v in namespace.values() if isinstance(v, Tensor))

    def __call__(self, *args):
        self._check(args)
        if (GRAD.enabled and _reaches_requires_grad(args, self._constants)) or MATH_BITS_LIVE[0]:
            return self._grad(*args)  # (run_kernel also resolves conjugate views: _math_bits)
        return self._fast(*args)

    def run_nested_fast(self, *args):
        """A call from a caller whose reachable tensors need no grad: only this graph's own
        constants are new here."""
        if len(args) != self._n_inputs or not self._inputs_ok(*args):  # (_check, inlined)
            self._check(args)
        if (GRAD.enabled and self._constants and any(c.requires_grad for c in self._constants)) \
                or MATH_BITS_LIVE[0]:
            return self._grad(*args)
        return self._fast(*args)

    def run_nested_grad(self, *args):
        self._check(args)
        return self._grad(*args)

    def _check(self, args):
        """The interpreter's input checks (a generated predicate first: the full checks, which
        raise the interpreter's errors, run only when it says no)."""
        inputs = self._inputs
        if len(args) != len(inputs):
            raise InterpreterError(
                f"expected {len(inputs)} argument(s) but received {len(args)} argument(s)")
        if not self._inputs_ok(*args):
            for (typ, name), a in zip(inputs, args):
                check_input(typ, a, name)

    def run_fast(self, *args):
        self.check(args)
        return self._fast(*args)


def _input_predicate(inputs):
    """A function of the inputs that is True when check_input would pass them all: tensors and
    modules (by their type) tested inline; other types by check_input itself."""
    terms, env = [], {"Tensor": Tensor, "check_input": check_input}
    for i, (typ, name) in enumerate(inputs):
        env[f"t{i}"], env[f"n{i}"] = typ, name
        if isinstance(typ, T.TensorType):
            terms.append(f"isinstance(a{i}, Tensor)")
        elif isinstance(typ, T.ClassType):
            terms.append(f"getattr(a{i}, '_type', None) is t{i}")
        else:
            terms.append(f"check_input(t{i}, a{i}, n{i}) is None")
    params = ", ".join(f"a{i}" for i in range(len(inputs)))
    return eval(f"lambda {params}: {' and '.join(terms) or 'True'}", env)


def _with_grad_rule(op):
    def call(*args):
        return run_kernel(op, args)
    return call


def _reaches_requires_grad(args, constants):
    """Whether a tensor constant or a tensor in the arguments (in containers, or a module's
    parameter or buffer) requires grad: only then can the requires_grad rule mark a result."""
    for c in constants:
        if c.requires_grad:
            return True
    stack = list(args)
    while stack:
        v = stack.pop()
        if isinstance(v, Tensor):
            if v.requires_grad:
                return True
        elif isinstance(v, (tuple, list)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v)
            stack.extend(v.values())
        elif isinstance(getattr(v, "_parameters", None), dict):  # a (traced) module
            stack.extend(v._parameters.values())
            stack.extend(v._buffers.values())
            stack.extend(v._modules.values())
    return False


# -- helpers the generated code calls: each mirrors the interpreter's hook of the same node kind --

def list_unpack(lst, n):
    if len(lst) != n:
        raise InterpreterError(f"Expected {n} elements in a list but found {len(lst)}")
    return lst


def getitem(container, key):
    if isinstance(container, dict) and key not in container:
        raise InterpreterError(f"KeyError: {key}")
    return container[key]


def num_to_tensor(v):
    t = scalar_to_tensor(v)
    t._wrapped = False
    return t


def call_method(name, module, *args):
    # looked up on the module's type at run time, as the interpreter does
    return compiled(module._type.methods[name], name)(module, *args)


def call_function(name, graph, *args):
    return compiled(graph, name)(*args)


def _call_method(run):
    """call_method as a generated function's namespace binds it: ``run`` names the callee's
    method for the caller's mode (``run_nested_fast`` or ``run_nested_grad``)."""
    def call_method(name, module, *args):
        graph = module._type.methods[name]
        c = graph.__dict__.get("_compiled")  # (compiled()'s cache, read without its call)
        if c is None:
            c = compiled(graph, name)
        return getattr(c, run)(module, *args)
    return call_method


def _call_function(run):
    def call_function(name, graph, *args):
        return getattr(compiled(graph, name), run)(*args)
    return call_function


_PLAIN = {}  # class -> {name: whether the class leaves `name` to the instance's tables}


def get_attr(obj, name):
    """getattr(obj, name) (the interpreter's GetAttr) without nn.Module's __getattr__ chain for
    a parameter, buffer or submodule: read from its table directly, where ordinary lookup would
    reach it (not in the instance's __dict__, not defined on its class). A model's call makes
    dozens of these reads, so the steps are few: no tuple keys, no default arguments."""
    try:
        d = obj.__dict__
    except AttributeError:
        return getattr(obj, name)
    if name not in d:
        cls = type(obj)
        names = _PLAIN.get(cls)
        if names is None:
            names = _PLAIN[cls] = {}
        plain = names.get(name)
        if plain is None:
            plain = names[name] = not hasattr(cls, name)
        if plain:  # (nn.Module.__getattr__'s order, without building a tuple of the tables)
            try:
                table = d["_parameters"]
                if name in table:
                    return table[name]
                table = d["_buffers"]
                if name in table:
                    return table[name]
                table = d["_modules"]
                if name in table:
                    return table[name]
            except KeyError:  # (not a module)
                pass
    return getattr(obj, name)


def cannot_run(kind):
    raise RuntimeError(f"reftrace's interpreter cannot run {kind}")


_HELPERS = {f.__name__: f for f in (list_unpack, getitem, num_to_tensor, call_method,
                                     call_function, cannot_run, run_python_op, size_of, get_attr,
                                     wrap_int64, int_div)}
# builtins the generated lines call: a value named `int` must not shadow them
_BUILTINS_USED = ("int", "float", "getattr", "isinstance", "Tensor")
# schema argument types whose constant values are converted once, here (the converted values are
# singletons: the interpreter would pass the very same objects). Device constants are converted on
# every call, as the interpreter does, since each conversion makes a new device object.
_FOLDED = ("ScalarType", "MemoryFormat", "Layout")
_NOT_IDENT = re.compile(r"\W")
# a number n read back from num_to_tensor(n) (a 0-dim tensor of n's own type): the same number
_READ_BACK = {"aten::Int": "int({})", "aten::Float": "float({})", "aten::ScalarImplicit": "{}"}


class _Namer:
    """Legal, unique Python names from hints (debug names, op names)."""

    def __init__(self, reserved):
        self.taken = set(reserved)

    def __call__(self, hint):
        base = _NOT_IDENT.sub("_", hint) or "_"
        if base[0].isdigit():
            base = "_" + base
        if keyword.iskeyword(base):
            base += "_"
        name, i = base, 1
        while name in self.taken:
            name, i = f"{base}_{i}", i + 1
        self.taken.add(name)
        return name


def _is_literal(v):
    """Constants written into the source as Python literals."""
    if v is None or type(v) in (int, bool, str):
        return True
    return type(v) is float and math.isfinite(v)


def generate(graph, name):
    """(source, function name, namespace, ops): the function's source text, its name, the
    globals it reads, and the ops it calls (global name -> OpOverload: CompiledGraph binds each
    name to the kernel or to run_kernel)."""
    emitter = _Emitter()
    emitter.declare_globals(graph)
    fn_name = emitter.namer(name)
    params = [emitter.namer(v.debugName()) for v in graph.param.outputs_]
    lines = [f"def {fn_name}({', '.join(params)}):"]
    rets = emitter.body(graph, params, lines, "    ", 0)
    lines.append("    return " + (rets[0] if len(rets) == 1 else "(" + ", ".join(rets) + ")"))
    return "\n".join(lines) + "\n", fn_name, emitter.namespace, emitter.ops


# how deep submodule calls are inlined (each level indents the source once)
INLINE_DEPTH = 8


class _Emitter:
    """Writes graphs as lines of one function. A submodule's method call (prim::CallMethod) is
    written inline, as torch's executor inlines it (the Inline pass), under a guard that the
    module is of the traced class and the arguments pass the callee's input checks; otherwise
    (the guard fails, or the callee is nested too deep) the line calls ``call_method``, which
    runs the callee's own generated function. Inlined or called, the callee's lines are the
    same: inlining saves the call, its input checks and its mode decision (the callee's tensor
    constants join the caller's, which decides for both)."""

    def __init__(self):
        self.namer = _Namer(set(_HELPERS) | set(_BUILTINS_USED))
        self.namespace = dict(_HELPERS)
        self.ops = {}            # global name -> OpOverload
        self.op_names = {}       # OpOverload -> global name
        self.object_names = {}   # id(constant object), or a converter's type name -> global name
        self.counter = itertools.count()
        self.expr = {}           # Value -> the expression that reads it

    def global_for(self, obj, hint, key=None):
        key = id(obj) if key is None else key
        if key not in self.object_names:
            self.object_names[key] = self.namer(hint)
            self.namespace[self.object_names[key]] = obj
        return self.object_names[key]

    def declare_globals(self, graph):
        """Ops and constants get their global names first, so value names never shadow them."""
        expr = self.expr
        for n in graph:
            if n.kind_ == "prim::Constant" and n.attrs and "value" not in n.attrs:
                # a traced function used as a value (prim::CallFunction's callee): its graph
                expr[n.outputs_[0]] = self.global_for(n.outputs_[0].type_.callee, n.s("name"))
            elif n.kind_ == "prim::Constant":
                v = None if not n.attrs else n.attrs["value"][1]
                expr[n.outputs_[0]] = repr(v) if _is_literal(v) else \
                    self.global_for(v, f"c{next(self.counter)}" if isinstance(v, Tensor) else "const")
            elif n.op is not None and n.op not in self.op_names:
                self.op_names[n.op] = self.namer(n.op.qualified.replace("::", "_"))
                self.ops[self.op_names[n.op]] = n.op

    def body(self, graph, params, lines, indent, depth, result=None):
        """Append ``graph``'s lines to ``lines`` with its inputs read from the expressions
        ``params`` (never deleted here: the caller owns them); the returned values' expressions.
        ``result``: the name for the one returned value, where a node of ``graph`` makes it."""
        expr = self.expr
        nodes = list(graph)
        for v, p in zip(graph.param.outputs_, params):
            expr[v] = p
        for n in nodes:
            if n.kind_ != "prim::Constant":
                for o in n.outputs_:
                    expr[o] = self.namer(o.debugName())
        ret = graph.ret.inputs_[0] if result is not None else None
        if ret is not None and ret.node_ is not graph.param and ret.node_.kind_ != "prim::Constant":
            expr[ret] = result
        # aten::Int (Float, ScalarImplicit) of a prim::NumToTensor reads back the number n the tensor
        # was made from: ``int(n)`` is what ``int(num_to_tensor(n)._to_number())`` gives, without the
        # tensor. Size arithmetic traces to many of these (one per use of ``x.size(0)``), and the
        # NumToTensor whose every use is such a read is not run at all (it has no effect).
        # Size arithmetic over such numbers is Python int arithmetic where nothing sees the
        # tensors (_size_arith.py): those nodes read their operands' numbers too.
        made_from = {n.outputs_[0]: n.inputs_[0] for n in nodes if n.kind_ == "prim::NumToTensor"}
        folded = _size_arith.folded_values(nodes, graph.ret.inputs_)
        inputs, reads = {}, set()
        for n in nodes:
            if n.kind_ in _READ_BACK and (n.inputs_[0] in made_from or n.inputs_[0] in folded):
                inputs[n] = [made_from.get(n.inputs_[0], n.inputs_[0])]
                reads.add(n)
            elif n.outputs_ and n.outputs_[0] in folded and n.kind_ != "prim::NumToTensor":
                inputs[n] = [made_from.get(v, v) for v in n.inputs_]
            else:
                inputs[n] = n.inputs_
        last_use = {}
        for n in nodes:
            for v in inputs[n]:
                last_use[v] = n
        for v in graph.ret.inputs_:
            last_use[v] = graph.ret  # returned: never freed
        owned = set(graph.param.outputs_) if depth else set()  # a callee's inputs are the caller's

        for n in nodes:
            if n.kind_ == "prim::Constant":
                continue
            args = [expr[v] for v in inputs[n]]
            unused = [expr[o] for o in n.outputs_ if o not in last_use]
            if n in reads:
                rhs = _READ_BACK[n.kind_].format(args[0])  # a NumToTensor's number (above)
            elif n.kind_ == "prim::NumToTensor" and unused:
                continue  # only read back as a number
            elif n.outputs_ and n.outputs_[0] in folded:
                rhs = _size_arith.expression(n, lambda v: expr[made_from.get(v, v)] if
                                             _size_arith.int_constant(v) is None else
                                             repr(_size_arith.int_constant(v)))
            else:
                rhs = _expression(n, args, self.op_names, self.global_for)
            outs = [expr[o] for o in n.outputs_]
            dead = [expr[v] for v in dict.fromkeys(inputs[n]) if last_use.get(v) is n and
                    v.node_.kind_ != "prim::Constant" and v not in owned]
            if not outs or (len(outs) == 1 and unused):
                line = rhs  # a result nobody reads (an in-place op kept for its effect)
            elif len(outs) == 1 and n.kind_ not in ("prim::ListUnpack", "prim::TupleUnpack"):
                line = f"{outs[0]} = {rhs}"
            else:
                line = f"{', '.join(outs)}{',' if len(outs) == 1 else ''} = {rhs}"
                dead += unused
            if n.kind_ == "prim::CallMethod" and len(outs) == 1 and not unused and \
                    self.inline(n, args, outs[0], line, lines, indent, depth):
                if dead:  # (after both branches)
                    lines.append(f"{indent}del {', '.join(dead)}")
                continue
            lines.append(indent + line + (f";  del {', '.join(dead)}" if dead else ""))
        return [expr[v] for v in graph.ret.inputs_]

    def inline(self, n, args, out, call_line, lines, indent, depth):
        """Write the call ``n`` (``out = call_method(...)``) inline under its guard; False when
        it cannot be (then the caller writes the call)."""
        callee = _inlinable(n, depth)
        if callee is None:
            return False
        guard = [f"getattr({args[0]}, '_type', None) is {self.global_for(n.inputs_[0].type_, 'T')}"]
        guard += [f"isinstance({a}, Tensor)" for a in args[1:]]  # (_inlinable: all Tensors)
        self.namespace["Tensor"] = Tensor
        self.declare_globals(callee)
        lines.append(f"{indent}if {' and '.join(guard)}:")
        rets = self.body(callee, args, lines, indent + "    ", depth + 1, result=out)
        if rets[0] != out:  # (the callee returns one of its inputs, or a constant)
            lines.append(f"{indent}    {out} = {rets[0]}")
        lines.append(f"{indent}else:")
        lines.append(f"{indent}    {call_line}")
        return True


def _inlinable(n, depth):
    """The graph that the CallMethod ``n`` runs, when it can be written inline: its module's
    type is a traced class (known now, and checked by the guard at run time), its other inputs
    are Tensors, it returns one value, and the nesting is not too deep."""
    if depth >= INLINE_DEPTH:
        return None
    typ = n.inputs_[0].type_
    if not isinstance(typ, T.ClassType):
        return None
    graph = typ.methods.get(n.s("name"))
    if graph is None:
        return None
    c = graph.__dict__.get("_compiled")
    if c is not None:  # what a call would run: a loaded method's graph copy (_script.ExecutorCode)
        built = getattr(c, "_built", None)
        graph = built().graph if built is not None else c.graph
    ps = graph.param.outputs_
    if len(ps) != len(n.inputs_) or ps[0].type_ is not typ or len(graph.ret.inputs_) != 1 \
            or not all(isinstance(p.type_, T.TensorType) for p in ps[1:]):
        return None
    return graph


def _expression(n, args, op_names, global_for):
    """The right-hand side of node ``n``'s line, given its argument expressions."""
    kind = n.kind_
    if kind == "prim::ListConstruct":
        return "[" + ", ".join(args) + "]"
    if kind == "prim::ListUnpack":
        return f"list_unpack({args[0]}, {len(n.outputs_)})"
    if kind == "prim::TupleConstruct":
        return "(" + ", ".join(args) + ("," if len(args) == 1 else "") + ")"
    if kind == "prim::TupleUnpack":
        return args[0]
    if kind == "prim::DictConstruct":
        return "{" + ", ".join(f"{args[i]}: {args[i + 1]}" for i in range(0, len(args), 2)) + "}"
    if kind == "prim::GetAttr":
        return f"get_attr({args[0]}, {n.s('name')!r})"
    if kind == "prim::CallMethod":
        return f"call_method({', '.join([repr(n.s('name'))] + args)})"
    if kind == "prim::CallFunction":
        callee = n.inputs_[0].node_
        name = callee.s("name") if callee.hasAttribute("name") else "function"
        return f"call_function({', '.join([repr(name)] + args)})"
    if kind == "aten::__getitem__":
        return f"getitem({args[0]}, {args[1]})"
    if kind == "prim::PythonOp":  # the node itself is a global: it holds the Function and scalars
        return f"run_python_op({global_for(n, 'python_op')}, ({''.join(a + ', ' for a in args)}))"
    if kind == "prim::NumToTensor":
        return f"num_to_tensor({args[0]})"
    if kind == "aten::size":
        return f"size_of({args[0]}, {args[1]})"
    if kind == "aten::numel":
        return f"int({args[0]}._array.size)"
    if kind == "aten::Int":
        return f"int({args[0]}._to_number())"
    if kind == "aten::Float":
        return f"float({args[0]}._to_number())"
    if kind == "aten::ScalarImplicit":
        return f"{args[0]}._to_number()"
    op = n.op
    if op is None:
        return f"cannot_run({kind!r})"
    # the interpreter's argument conversions (ScalarType ints -> dtypes ...)
    for i, a in enumerate(op.schema.arguments):
        conv = _argument_converter(a)
        if conv is None:
            continue
        src = n.inputs_[i].node_
        if src.kind_ == "prim::Constant" and a.type.base in _FOLDED:
            value = conv(None if not src.attrs else src.attrs["value"][1])
            args[i] = "None" if value is None else global_for(value, repr(value))
        else:
            args[i] = f"{global_for(conv, 'to_' + a.type.base, a.type.base)}({args[i]})"
    return f"{op_names[op]}({', '.join(args)})"
