"""Write tests/data/fx_print_tabular.json: torch.fx's Graph.print_tabular output and the rows it
was made from, so that reftrace's table layout (reftrace/jit/_tabular.py) is checked against
what torch prints, without torch or tabulate at test time.

    pip install tabulate && python tests/gen_tabular_golden.py
"""
import contextlib
import io
import json
import os

import torch
import torch.fx


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 4)

    def forward(self, x):
        return torch.relu(self.lin(x)).sum(dim=1) + self.lin.weight.sum()


def main():
    graph = torch.fx.symbolic_trace(M()).graph
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        graph.print_tabular()
    # the cells as print_tabular formats them (tabulate calls str() on each)
    rows = [[str(c) for c in (n.op, n.name, n.target, n.args, n.kwargs)] for n in graph.nodes]
    # a built-in's repr holds a process address: keep the cell, it only sets the column width
    out = {"torch": torch.__version__, "headers": ["opcode", "name", "target", "args", "kwargs"],
           "rows": rows, "text": buf.getvalue().rstrip("\n")}
    path = os.path.join(os.path.dirname(__file__), "data", "fx_print_tabular.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
