"""``reftrace.jit.parse_ir``: a Graph from IR text (torch._C.parse_ir, torch/csrc/jit/ir/irparser.cpp).

    g = parse_ir('''graph(%x : Float(2, strides=[1], requires_grad=0, device=cpu)):
      %1 : int = prim::Constant[value=1]()
      %2 : Float(2, strides=[1], requires_grad=0, device=cpu) = aten::add(%x, %x, %1)
      return (%2)''')

The grammar is what ir.py prints (torch's ir.cpp): ``graph(<inputs>):``, one node a line
(``<outputs> = kind[attributes](<inputs>)``, then optional ``, scope: ...`` and ``# file:line:col``),
nested ``blockN(<inputs>):`` ... ``-> (<values>)`` blocks, and ``return (<values>)``. Each aten
node finds its operator in reftrace's op table by its inputs' types (Node::maybeOperator), so a
parsed graph runs through the interpreter or the generated code: a graph printed by torch runs
without torch.

Deliberately unlike torch (spec IRP-2): value names and source locations are kept, so a printed
graph round-trips (``str(parse_ir(str(g))) == str(g)``, value numbers aside), and class types
(``__torch__.Net``) parse as opaque class types instead of failing. As in torch, tensor constants
are refused unless ``parse_tensor_constants=True``; then ``{v}`` fills a tensor of the declared
type with ``v``, a printed tensor (`` 1  2 [ CPUFloatType{2} ]``) is read back, and ``<Tensor>``
(contents not printed) becomes zeros of the declared type (torch leaves the memory uninitialized).
"""
import math
import re

from .. import _dtype as D
from .._device import device as Device
from . import _types as T
from ._schema_matching import matching_overload
from .ir import Graph

_DTYPES = {d.ir_name: d for d in D.ALL_DTYPES + D.BAREBONES_UNSIGNED}
_SIMPLE = {"Tensor": T.TENSOR, "int": T.IntType, "float": T.FloatType, "bool": T.BoolType,
           "str": T.StringType, "NoneType": T.NoneType, "Device": T.DeviceType,
           "Scalar": T.NumberType, "number": T.NumberType, "Generator": T.GeneratorType,
           "complex": T.ComplexType, "ScalarType": T.IntType, "Layout": T.IntType,
           "MemoryFormat": T.IntType}
_NAME = re.compile(r"[A-Za-z0-9_.]+")
_NUMBER = re.compile(r"-?(?:\d+\.?\d*(?:e[+-]?\d+)?|\.\d+(?:e[+-]?\d+)?|inf|nan)")
_COMPLEX = re.compile(r"-?(?:\d+\.?\d*(?:e[+-]?\d+)?|inf|nan)[+-](?:\d+\.?\d*(?:e[+-]?\d+)?|inf|nan)j")
_KIND = re.compile(r"[A-Za-z_][A-Za-z0-9_]*::[A-Za-z0-9_]+")
_LOCATION = re.compile(r"(.*):(\d+):\d+$")
_CPP_TENSOR_TYPE = re.compile(r"\[ (?:CPU|CUDA)(\w+)Type\{([\d,]*)\} \]")


class IRParseError(RuntimeError):
    pass


class _Cursor:
    """The text and a position in it; every error shows the line and where in it."""

    def __init__(self, text):
        self.text = text
        self.pos = 0

    def error(self, what):
        start = self.text.rfind("\n", 0, self.pos) + 1
        end = self.text.find("\n", self.pos)
        line = self.text[start:end if end >= 0 else len(self.text)]
        number = self.text.count("\n", 0, self.pos) + 1
        return IRParseError(f"{what} at line {number}:\n{line}\n{' ' * (self.pos - start)}^ <--- HERE")

    def skip_spaces(self, newlines=False):
        t, p = self.text, self.pos
        while p < len(t) and (t[p] in " \t" or (newlines and t[p] in "\r\n")):
            p += 1
        self.pos = p

    def peek(self, s):
        self.skip_spaces()
        return self.text.startswith(s, self.pos)

    def accept(self, s):
        if self.peek(s):
            self.pos += len(s)
            return True
        return False

    def expect(self, s):
        if not self.accept(s):
            found = self.text[self.pos:self.pos + 12].split("\n")[0] or "end of line"
            raise self.error(f"expected {s!r} but found {found!r}")

    def match(self, pattern, what):
        self.skip_spaces()
        m = pattern.match(self.text, self.pos)
        if not m:
            raise self.error(f"expected {what}")
        self.pos = m.end()
        return m.group(0)

    def items(self, parse_one, close):
        """``a, b, c<close>`` (possibly empty): the parsed items, the closing text consumed."""
        out = []
        if self.accept(close):
            return out
        while True:
            out.append(parse_one())
            if self.accept(close):
                return out
            self.expect(",")

    def rest_of_line(self):
        end = self.text.find("\n", self.pos)
        end = len(self.text) if end < 0 else end
        s = self.text[self.pos:end]
        self.pos = end
        return s

    def end_line(self):
        self.skip_spaces()
        if self.pos < len(self.text) and self.text[self.pos] not in "\r\n":
            raise self.error("expected the end of the line")
        self.skip_spaces(newlines=True)


def parse_ir(text, parse_tensor_constants=False):
    """torch._C.parse_ir: the Graph the IR ``text`` describes."""
    if not isinstance(text, str):
        raise TypeError(f"parse_ir() expects IR text (a str), not {type(text).__name__}")
    return _Parser(text, parse_tensor_constants).parse()


class _Parser:
    def __init__(self, text, parse_tensor_constants):
        self.c = _Cursor(text)
        self.parse_tensor_constants = parse_tensor_constants
        self.graph = Graph()
        self.values = {}  # name in the text -> Value
        self.classes = {}

    def parse(self):
        c, g = self.c, self.graph
        c.skip_spaces(newlines=True)
        c.expect("graph")
        c.expect("(")
        self._inputs(lambda t: g.add_input(t))
        c.expect(")")
        c.expect(":")
        c.end_line()
        self._nodes(g.block, "return")
        c.expect("return")
        for v in self._value_list():
            g.register_output(v)
        c.skip_spaces(newlines=True)
        if c.pos != len(c.text):
            raise c.error("unexpected text after the return statement")
        return g

    # -- values and types -----------------------------------------------------------------
    def _inputs(self, add):
        c = self.c
        c.skip_spaces(newlines=True)
        if c.peek(")"):
            return
        while True:
            c.skip_spaces(newlines=True)
            name, typ = self._value_decl()
            self._define(name, add(typ))
            c.skip_spaces(newlines=True)
            if not c.accept(","):
                return

    def _value_decl(self):
        c = self.c
        c.expect("%")
        name = c.match(_NAME, "a value name")
        c.expect(":")
        return name, self.type_()

    def _define(self, name, value):
        if name in self.values:
            raise self.c.error(f"value %{name} is defined twice")
        self.values[name] = value
        if not name.isdigit():
            self.graph.set_debug_name(value, name)

    def _use(self):
        c = self.c
        c.expect("%")
        name = c.match(_NAME, "a value name")
        v = self.values.get(name)
        if v is None:
            raise c.error(f"value %{name} is used before it is defined")
        return v

    def _value_list(self):
        self.c.expect("(")
        return self.c.items(self._use, ")")

    def type_(self):
        c = self.c
        c.skip_spaces()
        if c.accept("("):
            t = T.TupleType(c.items(self.type_, ")"))
        elif c.peek("Dict("):
            c.expect("Dict(")
            key = self.type_()
            c.expect(",")
            value = self.type_()
            c.expect(")")
            t = T.DictType(key, value)
        else:
            name = c.match(re.compile(r"[A-Za-z_][A-Za-z0-9_.]*"), "a type")
            if name in _DTYPES or (name == "Tensor" and c.text.startswith("(", c.pos)):
                t = self._tensor_type(name)
            elif name in _SIMPLE:
                t = _SIMPLE[name]
            elif name == "Function":
                t = T.FunctionType(None)
            elif name.startswith("__torch__."):
                t = self.classes.get(name) or self.classes.setdefault(name, T.ClassType(name))
            else:
                raise c.error(f"unknown type {name!r}")
        while True:  # suffixes: T[] T?
            if c.text.startswith("[]", c.pos):
                c.pos += 2
                t = T.ListType(t)
            elif c.text.startswith("?", c.pos):
                c.pos += 1
                t = T.OptionalType(t)
            else:
                return t

    def _tensor_type(self, name):
        """``Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)``, ``Long(device=cpu)``."""
        c = self.c
        dtype = _DTYPES.get(name)
        sizes = strides = requires_grad = device = None
        if c.text.startswith("(", c.pos):
            c.pos += 1
            dims = []
            while not c.accept(")"):
                if c.accept("strides=["):
                    strides = []
                    while not c.accept("]"):
                        strides.append(int(c.match(re.compile(r"-?\d+"), "a stride")))
                        c.accept(",")
                elif c.accept("requires_grad="):
                    requires_grad = c.match(re.compile(r"[01]"), "0 or 1") == "1"
                elif c.accept("device="):
                    device = Device(c.match(re.compile(r"[a-z]+(?::\d+)?"), "a device"))
                else:
                    dims.append(int(c.match(re.compile(r"\d+"), "a size")))
                c.accept(",")
            sizes = tuple(dims)
        return T.TensorType(dtype, sizes, tuple(strides) if strides is not None else None,
                            requires_grad, device)

    # -- nodes ----------------------------------------------------------------------------
    def _nodes(self, block, terminator):
        c = self.c
        while True:
            c.skip_spaces(newlines=True)
            if c.pos >= len(c.text):
                raise c.error(f"expected '{terminator}'")
            if c.peek(terminator):
                return
            self._node(block)

    def _node(self, block):
        c, g = self.c, self.graph
        outputs = []
        if c.peek("%"):
            while True:
                outputs.append(self._value_decl())
                if not c.accept(","):
                    break
            c.expect("=")
        kind = c.match(_KIND, "a node kind such as aten::add")
        node = g.create(kind)
        node.scope = None
        if c.accept("["):
            while True:
                name = c.match(re.compile(r"[A-Za-z_][A-Za-z0-9_]*"), "an attribute name")
                c.expect("=")
                self._attribute(node, name, outputs)
                if c.accept("]"):
                    break
                c.expect(",")
        node.inputs_ = self._value_list()
        if c.accept(", scope: "):
            node.scope = c.match(re.compile(r"[^\s#]+"), "a scope")
        c.skip_spaces()
        if c.accept("#"):
            loc = c.rest_of_line().strip()
            m = _LOCATION.match(loc)
            if m:
                node.source = (m.group(1), int(m.group(2)))
        c.end_line()
        block.append(node)
        for name, typ in outputs:
            self._define(name, node.add_output(typ))
        while c.peek("block"):
            self._block(node)
        if kind.startswith("aten::") and kind in _packets():
            node.op = matching_overload(_packets()[kind], [v.type_ for v in node.inputs_])

    def _block(self, node):
        c = self.c
        c.match(re.compile(r"block\d+"), "a block")
        c.expect("(")
        block = node.add_block()
        self._inputs(lambda t: block.add_input(t))
        c.expect(")")
        c.expect(":")
        c.end_line()
        saved = self.graph.insert_block
        self.graph.insert_block = block
        self._nodes(block, "->")
        c.expect("->")
        for v in self._value_list():
            block.register_output(v)
        c.end_line()
        self.graph.insert_block = saved

    # -- attributes -----------------------------------------------------------------------
    def _attribute(self, node, name, outputs):
        c = self.c
        out_type = outputs[0][1] if outputs else None
        c.skip_spaces()
        if c.peek('"'):
            node.set_attr(name, "s", self._string())
        elif c.peek("["):
            node.set_attr(name, "is" if name != "value" else "ival", self._list())
        elif c.peek("{") or c.peek("<Tensor>") or (isinstance(out_type, T.TensorType) and name == "value"):
            node.set_attr(name, "t", self._tensor(out_type))
        elif _COMPLEX.match(c.text, c.pos):
            text = c.match(_COMPLEX, "a complex number")
            node.set_attr(name, "c", complex(text.replace(".j", ".0j")))
        else:
            text = c.match(_NUMBER, "an attribute value")
            if re.fullmatch(r"-?\d+", text):
                node.set_attr(name, "i", int(text))
            else:
                node.set_attr(name, "f", float(text))

    def _string(self):
        c = self.c
        c.expect('"')
        out, t = [], c.text
        while True:
            if c.pos >= len(t):
                raise c.error("unterminated string")
            ch = t[c.pos]
            if ch == '"':
                c.pos += 1
                return "".join(out)
            if ch == "\\" and c.pos + 1 < len(t):
                nxt = t[c.pos + 1]
                esc = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'",
                       "a": "\a", "b": "\b", "f": "\f", "v": "\v"}.get(nxt)
                if esc is not None:
                    out.append(esc)
                    c.pos += 2
                    continue
                octal = re.match(r"[0-7]{3}", t[c.pos + 1:c.pos + 4])
                if octal:
                    out.append(chr(int(octal.group(0), 8)))
                    c.pos += 4
                    continue
            out.append(ch)
            c.pos += 1

    def _list(self):
        self.c.expect("[")
        return self.c.items(self._list_item, "]")

    def _list_item(self):
        if self.c.peek('"'):
            return self._string()
        text = self.c.match(_NUMBER, "a list element")
        return int(text) if re.fullmatch(r"-?\d+", text) else float(text)

    def _tensor(self, typ):
        """A tensor attribute: ``{2}``, ``<Tensor>`` or at::print's text of a small tensor."""
        c = self.c
        start = c.pos
        if not self.parse_tensor_constants:
            raise c.error("Single-element tensor constant encountered but `parse_tensor_constants` "
                          "is set to false" if c.peek("{") else
                          "tensor constant encountered but `parse_tensor_constants` is set to false")
        import numpy as np
        from .. import _creation
        dtype = typ.scalar_type if isinstance(typ, T.TensorType) and typ.scalar_type is not None else D.float32
        sizes = typ.sizes if isinstance(typ, T.TensorType) and typ.sizes is not None else ()
        if c.accept("<Tensor>"):
            values = np.zeros(sizes, dtype=dtype.np)
        elif c.accept("{"):
            text = c.match(re.compile(r"[^}]*"), "a number")
            c.expect("}")
            values = np.full(sizes, _number(text), dtype=dtype.np)
        else:
            values = self._printed_tensor(start, sizes, dtype)
        t = _creation.from_numpy(np.array(values, order="C"))  # (ascontiguousarray makes 0-d 1-d)
        if t.dim() == 0:
            t._wrapped = True  # a 0-dim constant runs as a wrapped number, as in torch's executor (LOAD-5)
        return t

    def _printed_tensor(self, start, sizes, dtype):
        """at::print's text of a tensor of up to 10 elements, on one line (ir.cpp turns its
        newlines into spaces): `` 1  2  3 [ CPUFloatType{3} ]``, a ``1e-08 *`` scale first, or
        ``(1,.,.) =`` headers between the matrices of a 3-d or larger tensor."""
        import numpy as np
        c = self.c
        m = _CPP_TENSOR_TYPE.search(c.text, c.pos)
        if m is None or "\n" in c.text[c.pos:m.start()]:
            raise c.error("expected a tensor constant ({v}, <Tensor> or a printed tensor)")
        body = c.text[c.pos:m.start()]
        shape = tuple(int(s) for s in m.group(2).split(",") if s)
        values = []
        for chunk in re.split(r"\(\d+(?:,\d+)*,\.,\.\) =", body):
            scale = 1.0
            if "*" in chunk:
                head, chunk = chunk.split("*", 1)
                scale = _number(head)
            values += [_number(x) * scale for x in chunk.split()]
        c.pos = m.end()
        if len(values) != math.prod(shape):
            raise c.error("a printed tensor's values do not match its size")
        return np.array(values, dtype=np.float64).reshape(shape).astype(dtype.np)


def _number(text):
    text = text.strip()
    if text in ("nan", "-nan"):
        return math.nan
    try:
        return int(text)
    except ValueError:
        return float(text)


def _packets():
    from ..ops._registry import PACKETS
    return PACKETS
