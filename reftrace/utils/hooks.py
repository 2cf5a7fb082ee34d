"""torch.utils.hooks.RemovableHandle: what every ``register_*_hook`` returns.

Hooks live in ordered dicts keyed by a process-wide increasing id, so registration order is call
order and ``handle.remove()`` deletes exactly one entry. The handle holds the dicts weakly, as
torch's does: a handle must not keep a dead module's hooks alive.
"""
import weakref


class RemovableHandle:
    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        # the with_kwargs / always_call flags live in side dicts keyed by the same id
        if isinstance(extra_dict, dict):
            self.extra_dict_ref = (weakref.ref(extra_dict),)
        elif isinstance(extra_dict, list):
            self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict)
        else:
            self.extra_dict_ref = ()

    def remove(self):
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None and self.id in d:
                del d[self.id]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
