"""What trace() returns for a function (torch's ScriptFunction made by tracing)."""
from .interpreter import Interpreter


class TracedFunction:
    """Calls run the recorded graph; ``graph`` prints as torch's ``traced.graph`` does."""

    def __init__(self, graph, name, original):
        self.graph = graph
        self.name = name
        self.__name__ = name
        self.qualified_name = "__torch__." + name
        self._original = original
        self._interpreter = Interpreter(graph)

    @property
    def inlined_graph(self):
        return self.graph

    def graph_for(self, *args, **kwargs):
        return self.graph

    @property
    def code(self):
        """The graph as TorchScript-style Python, as torch's ``traced.code`` prints it."""
        from ._python_print import function_name, graph_code
        return graph_code(self.graph, function_name(self.name))[0]

    def __call__(self, *args):
        # generated code (codegen.py): the interpreter's results without its per-node cost
        from .codegen import compiled
        return compiled(self.graph, self.name)(*args)

    def run_interpreted(self, *args):
        """Run the graph through the interpreter, the readable reference __call__ agrees with."""
        return self._interpreter.run(*args)

    def __repr__(self):
        return f"<reftrace.jit.TracedFunction {self.name}>"
