"""What trace() returns for a function (torch's ScriptFunction made by tracing)."""
from .._dispatch import STATE
from .interpreter import Interpreter


class TracedFunction:
    """Calls run the recorded graph; ``graph`` prints as torch's ``traced.graph`` does."""

    def __init__(self, graph, name, original, qualified_name=None):
        self.graph = graph
        self.name = name
        self.__name__ = name
        self.qualified_name = qualified_name or "__torch__." + name
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
        tracer = STATE.tracer
        if tracer is not None:
            return tracer.call_traced(self.graph, args, self.name, qualified_name=self.qualified_name)
        # generated code (codegen.py): the interpreter's results without its per-node cost.
        # Its cache on the graph is read first: an import statement here costs ~2 us a call.
        run = self.graph.__dict__.get("_compiled")
        if run is None:
            from .codegen import compiled
            run = compiled(self.graph, self.name)
        return run(*args)

    def save(self, f, _extra_files=None):
        """ScriptFunction.save: a TorchScript archive torch.jit.load reads (jit/_export_module.py)."""
        from ._export_module import save
        save(self, f, _extra_files)

    def run_interpreted(self, *args):
        """Run the graph through the interpreter, the readable reference __call__ agrees with."""
        return self._interpreter.run(*args)

    def __repr__(self):
        return f"<reftrace.jit.TracedFunction {self.name}>"
