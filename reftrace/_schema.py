"""ATen schema strings, parsed once.

A schema is the single description of an op: ``add.Tensor(Tensor self, Tensor other, *,
Scalar alpha=1) -> Tensor``. Binding, defaults, overload choice, the tracer's materialised
inputs, printing and interpreting all read the parsed form below (grammar as in torchgen/model.py).
"""
import re
from dataclasses import dataclass
from typing import Optional, Tuple

_ALIAS_RE = re.compile(r"^(?P<base>[A-Za-z]+)\((?P<alias>[^)]*)\)(?P<rest>.*)$")


@dataclass(frozen=True)
class SchemaType:
    """A schema type such as ``Tensor``, ``int[2]``, ``Tensor?[]`` or ``ScalarType?``."""
    base: str                  # Tensor int float bool str Scalar ScalarType Device Layout MemoryFormat ...
    optional: bool = False     # T?
    is_list: bool = False      # T[] or T[N]
    list_size: Optional[int] = None
    elem_optional: bool = False  # Tensor?[]: the elements may be None

    def __str__(self):
        s = self.base + ("?" if self.elem_optional else "")
        if self.is_list:
            s += f"[{self.list_size}]" if self.list_size is not None else "[]"
        return s + ("?" if self.optional else "")

    @property
    def is_tensor(self):
        return self.base == "Tensor" and not self.is_list

    @property
    def is_int_list(self):
        return self.is_list and self.base in ("int", "SymInt")


@dataclass(frozen=True)
class Argument:
    name: str
    type: SchemaType
    default: object = None     # the parsed Python value; only meaningful when has_default
    has_default: bool = False
    kwarg_only: bool = False
    alias: Optional[str] = None  # 'a', 'a!', 'a -> *' ...

    @property
    def is_write(self):
        return self.alias is not None and "!" in self.alias


@dataclass(frozen=True)
class Schema:
    name: str                   # 'aten::add'
    overload: str               # 'Tensor' ('' for the default overload)
    arguments: Tuple[Argument, ...]
    returns: Tuple[Argument, ...]
    text: str                   # the schema as written, with namespace

    @property
    def is_inplace(self):
        # torch's convention: a trailing underscore and a mutated self
        return bool(self.arguments) and self.arguments[0].is_write and self.name.endswith("_")

    @property
    def is_out(self):
        return any(a.is_write and a.kwarg_only for a in self.arguments)

    @property
    def is_view(self):
        return any(r.alias is not None and "!" not in r.alias for r in self.returns)

    def __str__(self):
        return self.text


def _split_top(s, sep=","):
    """Split on sep at bracket depth 0."""
    parts, depth, cur = [], 0, []
    for ch in s:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def parse_type(text):
    """'Tensor(a!)' -> (SchemaType('Tensor'), 'a!')."""
    alias = None
    m = _ALIAS_RE.match(text)
    if m:
        alias = m.group("alias").strip()
        text = m.group("base") + m.group("rest")
    optional = text.endswith("?")
    if optional:
        text = text[:-1]
    is_list, size = False, None
    m = re.match(r"^(.*)\[(\d*)\]$", text)
    if m:
        is_list = True
        text = m.group(1)
        size = int(m.group(2)) if m.group(2) else None
    elem_optional = is_list and text.endswith("?")
    if elem_optional:
        text = text[:-1]
    return SchemaType(text, optional, is_list, size, elem_optional), alias


def parse_default(text, typ):
    if text == "None":
        return None
    if text in ("True", "False"):
        return text == "True"
    if text.startswith("["):
        inner = text[1:-1].strip()
        vals = [parse_default(v.strip(), SchemaType(typ.base)) for v in inner.split(",")] if inner else []
        return vals
    if text.startswith('"') or text.startswith("'"):
        return text[1:-1]
    if typ.is_list and typ.list_size:
        # 'int[2] stride=1' means [1, 1]
        return [parse_default(text, SchemaType(typ.base))] * typ.list_size
    if text in ("contiguous_format", "preserve_format", "channels_last", "strided", "Mean", "long"):
        return text  # enum names; the binder maps them through the enum tables
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        pass
    raise ValueError(f"cannot parse schema default {text!r}")


def parse_schema(text):
    """Parse 'name.overload(args) -> returns' (namespace 'aten::' is implied when absent)."""
    text = text.strip()
    if "::" not in text.split("(", 1)[0]:
        text = "aten::" + text
    head, rest = text.split("(", 1)
    depth, i = 1, 0
    while depth:
        depth += {"(": 1, ")": -1}.get(rest[i], 0)
        i += 1
    args_text, ret_text = rest[: i - 1], rest[i:].strip()
    assert ret_text.startswith("->"), text
    ret_text = ret_text[2:].strip()
    name, _, overload = head.partition(".")

    arguments, kwarg_only = [], False
    for part in _split_top(args_text):
        if part == "*":
            kwarg_only = True
            continue
        decl, eq, default = part.partition("=")
        type_text, arg_name = decl.strip().rsplit(" ", 1)
        typ, alias = parse_type(type_text.strip())
        arguments.append(Argument(arg_name, typ, parse_default(default.strip(), typ) if eq else None,
                                  bool(eq), kwarg_only, alias))

    if ret_text.startswith("(") and ret_text.endswith(")"):
        ret_parts = _split_top(ret_text[1:-1])
    else:
        ret_parts = [ret_text] if ret_text else []
    returns = []
    for part in ret_parts:
        bits = part.rsplit(" ", 1)
        if len(bits) == 2 and not bits[1].startswith("(") and re.match(r"^[A-Za-z_]\w*$", bits[1]) \
                and not bits[0].endswith("->"):
            typ_text, rname = bits
        else:
            typ_text, rname = part, ""
        typ, alias = parse_type(typ_text.strip())
        returns.append(Argument(rname, typ, alias=alias))
    return Schema(name, overload, tuple(arguments), tuple(returns), text)
