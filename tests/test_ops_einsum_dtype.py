"""einsum's result dtype and mixed-dtype errors against torch 2.13: torch sums an operand's own
dims with sum() (integers / bool -> int64), multiplies with mul (promotion) and contracts with
bmm (same dtype only), so the dtype depends on the contraction (reftrace/ops/linear_einsum.py runs the same ops)."""
import pytest

from oracle import check, sample

EQS = [("ijl,jk->ik", [(2, 3, 4), (3, 5)]), ("ijl,jk", [(2, 3, 4), (3, 5)]), ("ijl->i", [(2, 3, 4)]),
       ("ijl->ijl", [(2, 3, 4)]), ("iji->ij", [(2, 2, 2)]), ("i,i->", [(3,), (3,)]),
       ("bij,bjk->bik", [(1, 2, 3), (1, 3, 4)]), ("...ik, ...j -> ij", [(1, 2, 3), (3,)]),
       ("ij,kj->ki", [(2, 3), (5, 3)]), ("ij,jk->ijk", [(2, 3), (3, 5)]), ("ii->", [(3, 3)]),
       ("ij,j->", [(2, 3), (3,)]), ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 5)]),
       ("ijl,jk,k->i", [(2, 3, 4), (3, 5), (5,)])]
DTYPES = ["int32", "int64", "uint8", "bool", "float32", "float64"]


@pytest.mark.parametrize("eq,shapes", EQS, ids=[e for e, _ in EQS])
@pytest.mark.parametrize("d1", DTYPES)
@pytest.mark.parametrize("d2", ["int32", "bool", "float32"])
def test_einsum_dtype(eq, shapes, d1, d2):
    arrays = [sample(s, d1 if i == 0 else d2, low=0, high=3, seed=i) for i, s in enumerate(shapes)]
    # a fresh contiguous copy: a single operand without contraction is a view in torch
    # (permute / diagonal), which reftrace's NumPy einsum does not model (not checked here)
    check(lambda m, *ts: m.einsum(eq, *ts).clone(memory_format=m.contiguous_format), *arrays)

