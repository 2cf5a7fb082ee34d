"""reftrace against torch 2.13's own OpInfo database (op_db), outside torch.nn.

Each OpInfo either passes tests/opinfo_support.check_opinfo (samples equal to torch's in values,
dtype, shape, strides, aliasing and errors; the first sample's traced graph and traced call equal
torch's) or is listed in tests/data/opinfo_uncovered.json with the reason it does not. The list
can only shrink: an OpInfo that fails without being listed fails here, and so does a listed one
that now passes (take it off the list).

Default run: the first sample of the first dtype reftrace has (about a minute). REFTRACE_FULL=1:
every dtype reftrace has and every reference input (non-contiguous, empty, extreme values).
The coverage figure: ``python tests/opinfo_coverage.py [--full]``.
"""
import os

import pytest

pytest.importorskip("torch", exc_type=ImportError)
pytest.importorskip("expecttest", exc_type=ImportError)  # torch.testing._internal needs it

from opinfo_support import Uncovered, check_opinfo, key, load_uncovered, selected_opinfos  # noqa: E402

FULL = os.environ.get("REFTRACE_FULL") == "1"
OPINFOS = selected_opinfos()
UNCOVERED = load_uncovered()


def test_uncovered_list_names_real_opinfos():
    names = {key(o) for o in OPINFOS}
    stale = sorted(set(UNCOVERED) - names)
    assert not stale, f"tests/data/opinfo_uncovered.json lists OpInfos op_db does not have: {stale}"


@pytest.mark.parametrize("opinfo", OPINFOS, ids=key)
def test_opinfo(opinfo):
    entry = UNCOVERED.get(key(opinfo))
    expected_to_fail = entry is not None and (FULL or not entry.get("full_only"))
    try:
        check_opinfo(opinfo, full=FULL)
    except Uncovered as e:
        if not expected_to_fail:
            pytest.fail(f"{key(opinfo)} differs from torch (not on the uncovered list): {e}")
        return
    if expected_to_fail:
        pytest.fail(f"{key(opinfo)} now matches torch: take it off tests/data/opinfo_uncovered.json "
                    f"(listed because: {entry['reason']})")
