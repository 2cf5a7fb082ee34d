"""Every derivative formula declared in the op table reads only names it can have: the schema's
arguments, grad / grads / grad_input_mask, result (result0.., the schema's return names), and
the evaluation namespace (reftrace's functions and reftrace/autograd/_functions_manual*.py).

Other branches add ops with formulas; a formula naming a FunctionsManual helper reftrace does
not have yet fails here at merge time, not at someone's first backward."""
import ast

import reftrace  # noqa: F401  (registers every op)
from reftrace.autograd._derivatives import compiled, namespace, output_names
from reftrace.ops import OVERLOADS


def _read_names(tree):
    """Names a formula reads, less those it binds itself (lambda or comprehension variables)."""
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda):
            bound |= {a.arg for a in node.args.args}
        elif isinstance(node, ast.comprehension):
            bound |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - bound


# Backward ops that declared formulas call and reftrace does not implement yet (the nn layers
# brought their forward ops first). A backward through one of these ops raises
# NotImplementedError naming the missing op; this list may only shrink.
WAITING = frozenset("""
""".split())


def test_every_formula_reads_known_names():
    ns = namespace()
    problems = []
    for name, op in sorted(OVERLOADS.items()):
        if not op.derivatives:
            continue
        allowed = {a.name for a in op.schema.arguments} | {"grad", "grads", "grad_input_mask"}
        allowed |= set(output_names(op)) | {f"result{i}" for i in range(len(op.schema.returns))}
        for key, text in op.derivatives.items():
            if text == "non_differentiable":
                continue
            unknown = {n for n in _read_names(ast.parse(text.strip(), mode="eval"))
                       if n not in allowed and n not in ns and n not in WAITING}
            if unknown:
                problems.append(f"{name} [{key}]: {sorted(unknown)}")
    assert not problems, "formulas read unknown names:\n" + "\n".join(problems)


def test_waiting_list_only_shrinks():
    ns = namespace()
    assert sorted(n for n in WAITING if n in ns) == [], "implemented now: remove from WAITING"
