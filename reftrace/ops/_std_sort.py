"""libstdc++'s std::sort, step for step: torch's CPU sort (stable=False) and mode sort (key, index)
pairs with it, so which of equal keys comes first is this algorithm's choice, not a stable order.
Pure Python: used only for rows that have equal keys (elsewhere every sort gives one order)."""
import math


def std_sort_order(keys, less):
    """libstdc++'s std::sort (introsort, median-of-three, unguarded partition, final insertion
    sort with threshold 16) of (key, index) pairs compared by key: the resulting index order."""
    a = [(k, i) for i, k in enumerate(keys)]
    n = len(a)

    def comp(x, y):
        return less(x[0], y[0])

    def swap(i, j):
        a[i], a[j] = a[j], a[i]

    def median_to_first(result, x, y, z):
        if comp(a[x], a[y]):
            if comp(a[y], a[z]):
                swap(result, y)
            elif comp(a[x], a[z]):
                swap(result, z)
            else:
                swap(result, x)
        elif comp(a[x], a[z]):
            swap(result, x)
        elif comp(a[y], a[z]):
            swap(result, z)
        else:
            swap(result, y)

    def partition(first, last, pivot):
        while True:
            while comp(a[first], a[pivot]):
                first += 1
            last -= 1
            while comp(a[pivot], a[last]):
                last -= 1
            if not first < last:
                return first
            swap(first, last)
            first += 1

    def heap_sort(first, last):
        sub = sorted(a[first:last], key=lambda p: p[0])  # (the depth-limit fallback: not torch's order)
        a[first:last] = sub

    def loop(first, last, depth):
        while last - first > 16:
            if depth == 0:
                heap_sort(first, last)
                return
            depth -= 1
            mid = first + (last - first) // 2
            median_to_first(first, first + 1, mid, last - 1)
            cut = partition(first + 1, last, first)
            loop(cut, last, depth)
            last = cut

    def linear_insert(last):
        val = a[last]
        nxt = last - 1
        while comp(val, a[nxt]):
            a[last] = a[nxt]
            last = nxt
            nxt -= 1
        a[last] = val

    def insertion_sort(first, last):
        if first == last:
            return
        for i in range(first + 1, last):
            if comp(a[i], a[first]):
                val = a[i]
                a[first + 1:i + 1] = a[first:i]
                a[first] = val
            else:
                linear_insert(i)

    if n > 1:
        loop(0, n, 2 * int(math.log2(n)))
        if n > 16:
            insertion_sort(0, 16)
            for i in range(16, n):
                linear_insert(i)
        else:
            insertion_sort(0, n)
    return [i for _, i in a]
