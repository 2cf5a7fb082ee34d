"""The replay of a view from its root base, where ``as_strided`` cannot rebuild it (torch's
``ViewInfo::chain``, torch/csrc/autograd/variable.cpp, and the ``view_func`` its generated
ADInplaceOrView kernels pass).

A view is normally rebuilt from its base by ``as_strided`` of its geometry: ``CopySlices`` finds
the view's slice of the base's gradient that way, and a view whose base changed history gets an
``AsStridedBackward0`` grad_fn. That loses what the view op changed besides the geometry: the
dtype (``view_as_real``, ``view_as_complex``) and the math bits (``_conj``, ``_neg_view``);
torch's VIEW_FUNCTIONS_WITH_METADATA_CHANGE. Such a view, and every view made of it, carries a
``_view_fn`` that replays the ops from the root base instead; ``chain`` composes it as torch does:

- the view op changes metadata, its input is a view with a replay: that replay, then the op;
- ... its input is a view without one: ``as_strided`` to the input's geometry, then the op;
- ... its input is the root: the op alone;
- a plain view op of a view with a replay: that replay, then ``as_strided`` to the new geometry.
"""


def _op(name):
    from ..ops import OVERLOADS  # (lazy: the ops import the tensor, which imports this)
    return OVERLOADS[name]


def replay(name):
    """The replay of the metadata-changing view op ``aten::name`` (it takes ``self`` only)."""
    return lambda x: _op(name)(x)


def as_strided_to(t):
    """The replay that takes ``t``'s view of the same storage: ``as_strided`` to its geometry."""
    size, stride, offset = list(t.shape_tuple), list(t.stride()), t.storage_offset()
    return lambda x: _op("aten::as_strided")(x, size, stride, offset)


def _then(first, second):
    return lambda root: second(first(root))


def steps(*fns):
    """The replays ``fns`` one after the other."""
    fn = fns[0]
    for f in fns[1:]:
        fn = _then(fn, f)
    return fn


def chain(parent, view, own=None):
    """Set ``view``'s replay, ``view`` made of ``parent`` by a view op whose own replay is
    ``own`` (None: a view op that as_strided can redo)."""
    parent_fn = parent._view_fn if parent._base is not None else None
    if own is not None:
        if parent_fn is not None:
            fn = _then(parent_fn, own)
        elif parent._base is not None:
            fn = _then(as_strided_to(parent), own)
        else:
            fn = own
    elif parent_fn is not None:
        fn = _then(parent_fn, as_strided_to(view))
    else:
        return view
    view._view_fn = fn
    return view
