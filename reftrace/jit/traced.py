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

    def __call__(self, *args):
        return self._interpreter.run(*args)

    def __repr__(self):
        return f"<reftrace.jit.TracedFunction {self.name}>"
