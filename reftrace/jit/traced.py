"""What trace() returns for a function (torch's ScriptFunction made by tracing)."""
from typing import TYPE_CHECKING, Any

from .._dispatch import STATE
from ._call_args import bind, interpreter_failure
from .interpreter import Interpreter

if TYPE_CHECKING:
    from .ir import Graph


class TracedFunction:
    """Calls run the recorded graph; ``graph`` prints as torch's ``traced.graph`` does."""

    def __init__(self, graph: "Graph", name: str, original: Any, qualified_name: Any = None) -> None:
        self.graph = graph
        self.name = name
        self.__name__ = name
        self.qualified_name = qualified_name or "__torch__." + name
        self._original = original
        self._interpreter = Interpreter(graph)

    @property
    def inlined_graph(self) -> "Graph":
        # a copy (renumbered, as Graph::copy does) with calls inlined, as torch makes it
        from .inliner import inlined_copy
        return inlined_copy(self.graph)

    def graph_for(self, *args: Any, **kwargs: Any) -> "Graph":
        return self.graph

    @property
    def code(self) -> str:
        """The graph as TorchScript-style Python, as torch's ``traced.code`` prints it."""
        from ._python_print import function_name, graph_code
        return graph_code(self.graph, function_name(self.name))[0]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args = bind(self.graph, self.name, args, kwargs)  # torch's errors for a wrong call
        tracer = STATE.tracer
        if tracer is not None:
            return tracer.call_traced(self.graph, args, self.name, qualified_name=self.qualified_name)
        # generated code (codegen.py): the interpreter's results without its per-node cost.
        # Its cache on the graph is read first: an import statement here costs ~2 us a call.
        run = self.graph.__dict__.get("_compiled")
        if run is None:
            from .codegen import compiled
            run = compiled(self.graph, self.name)
        try:
            return run(*args)
        except Exception as e:  # noqa: BLE001 - every op failure is reported as torch reports it
            raise interpreter_failure(e) from e

    def specializations(self):
        """What the trace baked in from data or shape: a list of Specialization records (kind,
        file, line, value, message, fix) that prints as a report (spec/specializations.md)."""
        from ._specializations import report_of
        return report_of(self.graph)

    def save(self, f: Any, _extra_files: Any = None) -> None:
        """ScriptFunction.save: a TorchScript archive torch.jit.load reads (jit/_export_module.py)."""
        from ._export_module import save
        save(self, f, _extra_files)

    def run_interpreted(self, *args: Any, **kwargs: Any) -> Any:
        """Run the graph through the interpreter, the readable reference __call__ agrees with."""
        args = bind(self.graph, self.name, args, kwargs)
        try:
            return self._interpreter.run(*args)
        except Exception as e:  # noqa: BLE001
            raise interpreter_failure(e) from e

    def __repr__(self):
        return f"<reftrace.jit.TracedFunction {self.name}>"
