"""RLlib's check() and convert_to_numpy(), as its example scripts import them."""

from __future__ import annotations

import numpy as np
import pytest

from hookbus.runners import check, convert_to_numpy


def test_check_passes_on_a_match_to_the_decimals_asked() -> None:
    check(
        {"a": [1.0, np.array([2.0, 3.0])], "b": "x"}, {"a": [1.000001, np.array([2, 3])], "b": "x"}
    )
    check(1.0, 1.04, decimals=1)
    check(np.ones(3), np.ones(3) * 1.1, atol=0.2)


def test_check_names_what_differs() -> None:
    with pytest.raises(AssertionError, match="keys differ"):
        check({"a": 1}, {"b": 1})
    with pytest.raises(AssertionError, match="lengths differ"):
        check([1, 2], [1])
    with pytest.raises(AssertionError):
        check(np.zeros(2), np.ones(2))
    with pytest.raises(AssertionError, match="'x' does not equal 'y'"):
        check("x", "y")


def test_check_false_asks_for_a_difference() -> None:
    check(np.zeros(2), np.ones(2), false=True)
    with pytest.raises(AssertionError, match="should not"):
        check(np.zeros(2), np.zeros(2), false=True)


def test_convert_to_numpy_keeps_the_structure_and_narrows_types() -> None:
    out = convert_to_numpy({"w": np.zeros(2), "n": [np.arange(3)], "s": "keep"})
    assert out["w"].dtype == np.float32
    assert out["n"][0].dtype == np.int32
    assert out["s"] == "keep"
    assert convert_to_numpy(np.zeros(2), reduce_type=False).dtype == np.float64


def test_convert_to_numpy_turns_a_torch_tensor_into_an_array() -> None:
    torch = pytest.importorskip("torch")
    converted = convert_to_numpy(torch.ones(2, dtype=torch.float64))
    assert isinstance(converted, np.ndarray)
    assert converted.dtype == np.float32
