"""reftrace.jit: tracing (torch.jit.trace), the graph IR, the interpreter."""
from ._trace import trace, is_tracing, trace_graph, _get_trace_graph
from ._flatten import flatten as _flatten, unflatten as _unflatten
from ._module_trace import trace_module, TracedModule, TopLevelTracedModule
from .tracer import TracerWarning
from ._check import TracingCheckError
from .ir import Graph, Node, Value
from ._export_module import save
from .interpreter import Interpreter
from ._deep_check import check, DeepCheckReport

__all__ = ["trace", "trace_module", "TracedModule", "TopLevelTracedModule", "is_tracing", "TracerWarning", "TracingCheckError", "Graph", "Node", "Value", "save", "Interpreter", "check",
           "DeepCheckReport"]

# loading (ser-load): torch.jit.load, the loaded module class, torch._C.parse_ir
from ._load import load  # noqa: E402
from ._script import RecursiveScriptModule  # noqa: E402
__all__ += ["load", "RecursiveScriptModule"]
from ._irparser import parse_ir  # noqa: E402
__all__ += ["parse_ir"]
