"""The backward engine (torch/csrc/autograd/engine.cpp), iterative with an explicit ready queue.

``run_backward(roots, grads, keep_graph, create_graph, inputs, allow_unused, accumulate_grad)``:

1. count each node's dependencies (how many edges lead into it) with an explicit stack;
2. with ``inputs`` given, work out which nodes must run to reach them (torch's exec_info); the
   gradients flowing into the inputs' edges are captured (``autograd.grad``) or accumulated into
   their ``.grad`` (``backward(inputs=...)``);
3. run nodes from a ready queue ordered as torch's CPU queue: the most recently created node first
   (sequence number; AccumulateGrad first of all), each once all its dependencies delivered;
   gradients reaching one input of a node are summed in its input buffer;
4. per node: the tensor hooks and retain_grad of its outputs, the node's pre-hooks, the node,
   its post-hooks, then ``validate_outputs`` (a gradient broadcast against its input is summed back
   to the input's shape, cast to its dtype), and, without ``retain_graph``, its saved values freed.

Never recursive: a chain of 100,000 ops backpropagates in constant Python stack.
"""
import heapq

from .grad_mode import STATE as GRAD
from .graph import GraphRoot
from ._variable_type import accumulate_grad, gradient_edge


def run_backward(roots, grads, keep_graph, create_graph, inputs=(), allow_unused=True,
                 accumulate_grad=True):
    root_edges = []
    root_grads = []
    for i, (t, g) in enumerate(zip(roots, grads)):
        e = gradient_edge(t)
        if e[0] is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               "a grad_fn")
        root_edges.append(e)
        root_grads.append(g)
    input_edges = []
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        input_edges.append(gradient_edge(t))

    prev = GRAD.enabled
    GRAD.enabled = bool(create_graph)
    try:
        return _execute(root_edges, root_grads, keep_graph, inputs, input_edges, allow_unused,
                        accumulate_grad)
    finally:
        GRAD.enabled = prev


def _execute(root_edges, root_grads, keep_graph, inputs, input_edges, allow_unused, accumulate):
    if len(root_edges) == 1:
        start, start_nr = root_edges[0]
        buffers = {start: {start_nr: root_grads[0]}}
    else:
        start = GraphRoot(root_edges, root_grads)
        start._seq = float("inf")
        buffers = {start: {}}

    deps, parents = _dependencies(start, need_parents=bool(input_edges))

    # captures: node -> [(output_nr, index into inputs)]; needed: the nodes that must run
    captures = {}
    needed = None
    if input_edges:
        for k, (node, nr) in enumerate(input_edges):
            captures.setdefault(node, []).append((nr, k))
        needed = _needed_nodes(input_edges, parents, accumulate, inputs)
        needed.add(start)
    captured = [None] * len(input_edges)

    ready = [(-start._seq, 0, start)]
    tie = 1
    heappop, heappush = heapq.heappop, heapq.heappush
    while ready:
        node = heappop(ready)[2]
        buf = buffers.pop(node, None)
        n_out = node._n_out
        if not buf:
            grads = [None] * n_out
        elif n_out == 1 and len(buf) == 1 and 0 in buf:
            grads = [buf[0]]  # (the common case of _num_outputs, inlined)
        else:
            grads = [buf.get(i) for i in range(_num_outputs(node, buf))]
        if node._tensor_pre_hooks or node._retains_grad_hooks:
            grads = _call_tensor_hooks(node, grads)
        if captures:
            caps = captures.get(node)
            if caps:
                for nr, k in caps:
                    captured[k] = grads[nr] if nr < len(grads) else None
            if node not in needed:
                continue
        edges = node._next
        if node._pre_hooks or node._post_hooks:
            outs = _call_node(node, grads, needed, keep_graph)
        else:  # _call_node without hooks, inlined
            outs = node.apply(grads, None)
            if not keep_graph:
                node.release()
            if node._input_meta is not None or len(outs) != len(edges):
                outs = validate_outputs(node, outs)
        n_outs = len(outs)
        for k, (child, nr) in enumerate(edges):
            if child is None:
                continue
            if needed is not None and child not in needed and child not in captures:
                continue
            g = outs[k] if k < n_outs else None
            cbuf = buffers.get(child)
            if cbuf is None:
                buffers[child] = {nr: g}
            elif g is not None:
                old = cbuf.get(nr)
                cbuf[nr] = g if old is None else old + g
            elif nr not in cbuf:
                cbuf[nr] = None
            d = deps[child] - 1
            deps[child] = d
            if d == 0:
                heappush(ready, (-child._seq, tie, child))
                tie += 1

    if not input_edges:
        return ()
    if accumulate:
        # backward(inputs=...): the captured gradients of non-leaf inputs go to their .grad
        for t, g, (node, _) in zip(inputs, captured, input_edges):
            if t._grad_fn is not None and g is not None:
                accumulate_grad(t, g)
        return ()
    for k, g in enumerate(captured):
        if g is None and not allow_unused:
            raise RuntimeError(
                f"The differentiated Tensor at index {k} appears to not have been used in the "
                "graph. Set allow_unused=True if this is the desired behavior.")
    return tuple(captured)


def _dependencies(start, need_parents):
    """Edges into each node reachable from ``start`` (and, when asked, each node's parents)."""
    deps = {}
    parents = {} if need_parents else None
    stack = [start]
    while stack:
        node = stack.pop()
        for child, _ in node._next:
            if child is None:
                continue
            if child in deps:
                deps[child] += 1
            else:  # first seen (the start node is no node's child: the graph is acyclic)
                deps[child] = 1
                stack.append(child)
            if parents is not None:
                parents.setdefault(child, []).append(node)
    return deps, parents


def _needed_nodes(input_edges, parents, accumulate, inputs):
    """torch's exec_info: the nodes on a path from the roots to an input's edge. An input's own
    node runs only when another input needs it (or, for backward(inputs=...), when it is a
    leaf's AccumulateGrad)."""
    needed = set()
    stack = []
    for (node, _), t in zip(input_edges, inputs):
        if accumulate and t._grad_fn is None:
            needed.add(node)
        stack.extend(parents.get(node, ()))
    while stack:
        node = stack.pop()
        if node in needed:
            continue
        needed.add(node)
        stack.extend(parents.get(node, ()))
    return needed


def _num_outputs(node, buf):
    """How many output gradients the node gets: its outputs (the ones no gradient reached are
    None), or more if a caller's buffer says so."""
    n = node._n_out
    if buf:
        top = max(buf) + 1
        if top > n:
            return top
    return n


def _call_tensor_hooks(node, grads):
    hooks = node._tensor_pre_hooks
    if hooks:
        for nr, table in hooks.items():
            for h in list(table.values()):
                if nr < len(grads) and grads[nr] is not None:
                    r = h(grads[nr])
                    if r is not None:
                        grads[nr] = r
    retain = node._retains_grad_hooks
    if retain:
        for nr, h in retain.items():
            if nr < len(grads):
                h(grads[nr])
    return grads


def _call_node(node, grads, needed, keep_graph):
    if node._pre_hooks:
        for h in list(node._pre_hooks.values()):
            r = h(tuple(grads))
            if r is not None:
                grads = list(r)
    # a node on a needed path computes the gradients of all its inputs (torch skips the ones
    # no input of autograd.grad needs; the values are the same)
    outs = node.apply(grads, None)
    if not keep_graph:
        node.release()
    if node._input_meta is not None or len(outs) != len(node._next):
        outs = validate_outputs(node, outs)
    if node._post_hooks:
        for h in list(node._post_hooks.values()):
            r = h(tuple(outs), tuple(grads))
            if r is not None:
                outs = list(r)
    return outs


def validate_outputs(node, outs):
    """engine.cpp validate_outputs: a gradient must fit its input (shape, dtype, device)."""
    edges = node._next
    if len(outs) != len(edges):
        raise RuntimeError(f"Function {node.name()} returned an incorrect number of gradients "
                           f"(expected {len(edges)}, got {len(outs)})")
    metas = node._input_meta
    if metas is None:
        return outs
    copied = False  # outs is copied on the first gradient replaced
    for i, (g, edge, meta) in enumerate(zip(outs, edges, metas)):
        if g is None or meta is None or edge[0] is None:
            continue
        shape, dtype, device = meta
        if g._array.shape == shape and g.dtype is dtype and g.device is device:
            continue  # (fits: the common case)
        g0 = g
        if g._array.shape != shape:
            if not _expandable_to(shape, g.shape_tuple):
                raise RuntimeError(
                    f"Function {node.name()} returned an invalid gradient at index {i} - got "
                    f"[{', '.join(map(str, g.shape_tuple))}] but expected shape compatible with "
                    f"[{', '.join(map(str, shape))}]")
            g = _sum_to(g, shape)
        if g.dtype is not dtype:
            g = g.to(dtype)
        if g.device is not device and g.device != device:
            g = g.to(device)
        if g is not g0:
            if not copied:
                outs = list(outs)
                copied = True
            outs[i] = g
    return outs


_SUM_TO = []


def _sum_to(g, shape):
    if not _SUM_TO:
        from ._functions_manual import sum_to  # (FunctionsManual imports reftrace: loaded late)
        _SUM_TO.append(sum_to)
    return _SUM_TO[0](g, shape)


def _expandable_to(shape, desired):
    """Whether ``shape`` broadcasts to ``desired`` (at::is_expandable_to)."""
    if len(shape) > len(desired):
        return False
    for s, d in zip(reversed(shape), reversed(desired)):
        if s != d and s != 1:
            return False
    return True
