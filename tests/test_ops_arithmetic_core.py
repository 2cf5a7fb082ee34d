"""The pattern every op-family test follows: same lambda under torch and reftrace."""
import pytest

from oracle import check, sample


@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "int64", "uint8", "bool"])
def test_add_mul_dtypes(dt):
    a, b = sample((2, 3), dt), sample((2, 3), dt, seed=1)
    check(lambda m, x, y: x + y, a, b)
    check(lambda m, x, y: m.mul(x, y), a, b)


def test_add_alpha_scalar_and_layout():
    a, b = sample((3, 4)), sample((4, 3), seed=1)
    check(lambda m, x, y: m.add(x, y.t(), alpha=2), a, b)
    check(lambda m, x: x.t() + 1, a)
    check(lambda m, x, y: x + y, sample((3, 1)), sample((1, 4)))
    check(lambda m, x, y: x + y, sample((3,)), sample((2, 4)))  # torch's broadcast error text


def test_inplace_add_through_view_and_cast_rule():
    check(lambda m, x: x.add_(x), sample((2, 2)))
    check(lambda m, x: x.t().mul_(2), sample((2, 3)))
    check(lambda m, x: x.add_(1.5), sample((2, 2), "int32"))
