"""kiln.load over libraries compiled from hand-written graph files (no PyTensor involved):
zero-copy inputs and outputs, strided views, out=, metadata, threads, and every error path."""
from __future__ import annotations

import ctypes
import gc
import threading
import warnings
import weakref
from pathlib import Path

import numpy as np
import pytest

import kiln
from kiln import _abi
from kiln.loader import _fill_dltensor, as_dlpack_input


def _var(vid, dtype, shape, name=None, value=None):
    v = {"id": vid, "type": {"dtype": dtype, "shape": shape}}
    if name:
        v["name"] = name
    if value is not None:
        v["value"] = value
    return v


def _graph(name, variables, nodes, inputs, outputs):
    return {"format": "kiln-graph", "version": 1, "name": name, "variables": variables, "nodes": nodes,
            "inputs": inputs, "outputs": outputs}


@pytest.fixture(scope="module")
def scaled():
    """z = x * w (w broadcast over rows), total = sum(z)."""
    g = _graph("scaled", [
        _var("x", "float64", [None, None], "x"), _var("w", "float64", [None], "w"),
        _var("wr", "float64", [1, None]), _var("z", "float64", [None, None], "z"), _var("t", "float64", [], "total"),
    ], [
        {"op": "DimShuffle", "props": {"input_ndim": 1, "new_order": ["x", 0]}, "inputs": ["w"], "outputs": ["wr"]},
        {"op": "Elemwise", "props": {"scalar_op": "mul"}, "inputs": ["x", "wr"], "outputs": ["z"]},
        {"op": "Sum", "props": {"axis": None}, "inputs": ["z"], "outputs": ["t"]},
    ], ["x", "w"], ["z", "t"])
    return kiln.compile(g)


@pytest.fixture(scope="module")
def checks():
    """Every run-time failure family: an index, an assert, a reshape, a static length."""
    g = _graph("checks", [
        _var("v", "float64", [None], "v"), _var("i", "int64", [], "i"), _var("shp", "int64", [2], "shape"),
        _var("s3", "float64", [3], "s3"),
        _var("vi", "float64", [], "picked"), _var("pos", "bool", []), _var("zero", "float64", [], value=0.0),
        _var("gt", "bool", [None]), _var("zr", "float64", [1]), _var("ok", "float64", [None], "checked"),
        _var("r", "float64", [None, None], "reshaped"), _var("d", "float64", [3], "doubled"),
        _var("two", "float64", [1], value=[2.0]),
    ], [
        {"op": "Subtensor", "props": {"idx_list": [{"index": "input"}]}, "inputs": ["v", "i"], "outputs": ["vi"]},
        {"op": "DimShuffle", "props": {"input_ndim": 0, "new_order": ["x"]}, "inputs": ["zero"], "outputs": ["zr"]},
        {"op": "Elemwise", "props": {"scalar_op": "gt"}, "inputs": ["v", "zr"], "outputs": ["gt"]},
        {"op": "All", "props": {"axis": None}, "inputs": ["gt"], "outputs": ["pos"]},
        {"op": "Assert", "props": {"msg": "v must be positive"}, "inputs": ["v", "pos"], "outputs": ["ok"]},
        {"op": "Reshape", "props": {"ndim": 2}, "inputs": ["v", "shp"], "outputs": ["r"]},
        {"op": "Elemwise", "props": {"scalar_op": "mul"}, "inputs": ["s3", "two"], "outputs": ["d"]},
    ], ["v", "i", "shp", "s3"], ["vi", "ok", "r", "d"])
    return kiln.compile(g)


@pytest.fixture(scope="module")
def mixed():
    """Bool and integer inputs: out = where(b, n, 0) as int32, and b negated."""
    g = _graph("mixed", [
        _var("b", "bool", [None], "b"), _var("n", "int32", [None], "n"), _var("z", "int32", [1], value=[0]),
        _var("o", "int32", [None], "picked"), _var("nb", "bool", [None], "not_b"),
    ], [
        {"op": "Elemwise", "props": {"scalar_op": "switch"}, "inputs": ["b", "n", "z"], "outputs": ["o"]},
        {"op": "Elemwise", "props": {"scalar_op": "invert"}, "inputs": ["b"], "outputs": ["nb"]},
    ], ["b", "n"], ["o", "nb"])
    return kiln.compile(g)


# --- metadata ------------------------------------------------------------------------------------


def test_metadata(scaled):
    assert scaled.name == "scaled" and scaled.graph_name == "scaled"
    assert [(s.name, s.dtype, s.shape) for s in scaled.inputs] == [
        ("x", np.dtype("float64"), (None, None)), ("w", np.dtype("float64"), (None,))]
    assert [(s.name, s.dtype, s.shape) for s in scaled.outputs] == [
        ("z", np.dtype("float64"), (None, None)), ("total", np.dtype("float64"), ())]
    assert scaled.kiln_version
    assert "scaled(x: float64" in repr(scaled)


def test_call_positional_keyword_and_shapes(scaled):
    x, w = np.arange(6.0).reshape(2, 3), np.array([1.0, -2.0, 0.5])
    z, total = scaled(x, w)
    np.testing.assert_array_equal(z, x * w)
    assert total.shape == () and total == (x * w).sum()
    z2, _ = scaled(w=w, x=x)
    np.testing.assert_array_equal(z2, z)
    assert scaled.output_shapes(x, w) == [(2, 3), ()]


# --- zero copy ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("view", ["contiguous", "transposed", "reversed", "strided", "broadcast", "fortran"])
def test_inputs_are_passed_without_copy(scaled, view):
    base = np.arange(48.0).reshape(6, 8)
    x = {
        "contiguous": base,
        "transposed": base.T,
        "reversed": base[::-1, ::-2],
        "strided": base[1::2, 2:7:3],
        "broadcast": np.broadcast_to(np.arange(8.0), (5, 8)),
        "fortran": np.asfortranarray(base),
    }[view]
    arr = as_dlpack_input(x)
    assert arr is x  # no copy: the very same array object reaches the DLTensor
    dl, keep = _abi.DLTensor(), []
    _fill_dltensor(dl, arr, keep)
    assert dl.data == x.ctypes.data  # the DLTensor points at the caller's memory
    assert [dl.strides[d] for d in range(x.ndim)] == [s // 8 for s in x.strides]
    w = np.linspace(-1, 1, x.shape[1])
    z, total = scaled(x, w)
    np.testing.assert_allclose(z, x * w, rtol=1e-15)
    np.testing.assert_allclose(total, (x * w).sum(), rtol=1e-13)


def test_outputs_adopt_library_memory(scaled):
    x, w = np.ones((300, 400)), np.ones(400)
    z, _ = scaled(x, w)
    owner = z.base
    assert type(owner).__name__ == "_OwnedOutput"
    managed = owner._managed.contents
    assert z.__array_interface__["data"][0] == managed.dl_tensor.data  # no copy out
    assert z.flags.c_contiguous and z.flags.writeable
    z[0, 0] = 5.0  # the memory is the caller's now
    ref = weakref.ref(owner)
    view = z[10:20]
    del z, owner, managed
    gc.collect()
    assert ref() is not None  # a view keeps the library's buffer alive
    del view
    gc.collect()
    assert ref() is None  # ... and the deleter ran when the last array died


def test_many_live_outputs_are_distinct(scaled):
    w = np.array([1.0, 2.0])
    results = [scaled(np.full((2, 2), float(k)), w)[0] for k in range(200)]
    for k, z in enumerate(results):
        np.testing.assert_array_equal(z, np.full((2, 2), float(k)) * w)


def test_outputs_are_freed(scaled):
    """Calling a function producing 8 MB a time 200 times must not keep 1.6 GB alive."""
    import resource

    x, w = np.ones((1000, 1000)), np.ones(1000)
    for _ in range(5):
        scaled(x, w)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(200):
        z, _ = scaled(x, w)
        del z
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 200, f"peak RSS grew by {grown_mb:.0f} MB: outputs are not released"


def test_out_writes_into_caller_arrays(scaled):
    x, w = np.arange(6.0).reshape(3, 2), np.array([2.0, 3.0])
    z, total = np.empty((3, 2)), np.empty(())
    pointer = z.ctypes.data
    result = scaled(x, w, out=[z, total])
    assert result[0] is z and z.ctypes.data == pointer
    np.testing.assert_array_equal(z, x * w)
    assert total == (x * w).sum()


def test_bool_and_int_dtypes(mixed):
    b = np.array([True, False, True, False])
    n = np.array([5, 6, 7, 8], dtype=np.int32)
    picked, not_b = mixed(b, n)
    assert picked.dtype == np.int32 and not_b.dtype == np.bool_
    np.testing.assert_array_equal(picked, np.where(b, n, 0))
    np.testing.assert_array_equal(not_b, ~b)
    picked, _ = mixed(b[::-1], n[::-2].repeat(2))
    np.testing.assert_array_equal(picked, np.where(b[::-1], n[::-2].repeat(2), 0))


def test_python_scalars_and_lists_take_the_declared_dtype(scaled, mixed):
    z, total = scaled([[1, 2], [3, 4]], [1, 1])
    assert z.dtype == np.float64 and total == 10.0
    picked, _ = mixed([True, False], [3, 4])
    np.testing.assert_array_equal(picked, [3, 0])


# --- layouts DLPack cannot describe ------------------------------------------------------------------


def _unaligned():
    rec = np.zeros(4, dtype=[("a", "<f8"), ("b", "i1")])
    rec["a"] = [1.0, 2.0, 3.0, 4.0]
    return rec["a"].reshape(2, 2)  # itemsize 8, strides of 18 and 9 bytes


def test_unaligned_strides_are_copied_with_a_warning(scaled):
    x = _unaligned()
    assert x.strides[1] % 8
    with pytest.warns(kiln.KilnCopyWarning, match="not multiples of its item size"):
        z, _ = scaled(x, np.array([1.0, 10.0]))
    np.testing.assert_array_equal(z, x * [1.0, 10.0])


def test_strict_refuses_what_dlpack_cannot_describe(scaled):
    strict = kiln.load(scaled.path, strict=True)
    with pytest.raises(ValueError, match="DLPack cannot describe it"):
        strict(_unaligned(), np.array([1.0, 10.0]))


def test_byte_swapped_input_is_copied(scaled):
    x = np.arange(4.0).reshape(2, 2).astype(">f8")
    with pytest.warns(kiln.KilnCopyWarning, match="byte order"):
        z, _ = scaled(x, np.array([1.0, 2.0]))
    np.testing.assert_array_equal(z, np.arange(4.0).reshape(2, 2) * [1.0, 2.0])


def test_unsupported_dtype_is_a_type_error(scaled):
    with pytest.raises(TypeError, match="float128 is not supported"):
        scaled(np.ones((2, 2), np.longdouble), np.ones(2))


# --- errors from the library ----------------------------------------------------------------------------


def test_wrong_dtype_rank_and_static_length(checks):
    v, shp, s3 = np.array([1.0, 2.0, 3.0, 4.0]), np.array([2, 2]), np.ones(3)
    with pytest.raises(kiln.KilnInputError) as e:
        checks(v.astype(np.float32), 0, shp, s3)
    assert e.value.status == 3 and "v" in e.value.message
    with pytest.raises(kiln.KilnInputError) as e:
        checks(v.reshape(2, 2), 0, shp, s3)
    assert e.value.status == 4
    with pytest.raises(kiln.KilnInputError) as e:
        checks(v, 0, shp, np.ones(4))
    assert e.value.status == 5
    assert isinstance(e.value, TypeError)


def test_runtime_failures(checks):
    v, shp, s3 = np.array([1.0, 2.0, 3.0, 4.0]), np.array([2, 2]), np.ones(3)
    picked, checked, reshaped, doubled = checks(v, -1, shp, s3)
    assert picked == 4.0 and reshaped.shape == (2, 2)
    with pytest.raises(kiln.KilnIndexError) as e:
        checks(v, 4, shp, s3)
    assert e.value.status == 7 and isinstance(e.value, IndexError)
    with pytest.raises(kiln.KilnAssertionError, match="v must be positive") as e:
        checks(-v, 0, shp, s3)
    assert isinstance(e.value, AssertionError)
    with pytest.raises(kiln.KilnValueError) as e:
        checks(v, 0, np.array([3, 2]), s3)
    assert e.value.status == 9 and isinstance(e.value, ValueError)


def test_bad_out_arrays(scaled):
    x, w = np.ones((3, 2)), np.ones(2)
    with pytest.raises(kiln.KilnOutputError, match="length"):
        scaled(x, w, out=[np.empty((2, 3)), np.empty(())])
    with pytest.raises(kiln.KilnOutputError, match="contiguous"):
        scaled(x, w, out=[np.empty((2, 3)).T, np.empty(())])
    with pytest.raises(kiln.KilnOutputError):
        scaled(x, w, out=[np.empty((3, 2), np.float32), np.empty(())])
    with pytest.raises(ValueError, match="read-only"):
        ro = np.empty((3, 2))
        ro.flags.writeable = False
        scaled(x, w, out=[ro, np.empty(())])
    with pytest.raises(TypeError, match="2 output"):
        scaled(x, w, out=[np.empty((3, 2))])


def test_binding_errors(scaled):
    with pytest.raises(TypeError, match="missing input"):
        scaled(np.ones((2, 2)))
    with pytest.raises(TypeError, match="no input named"):
        scaled(np.ones((2, 2)), q=np.ones(2))
    with pytest.raises(TypeError, match="twice"):
        scaled(np.ones((2, 2)), np.ones(2), w=np.ones(2))
    with pytest.raises(TypeError, match="takes 2 input"):
        scaled(1, 2, 3)


def test_load_errors(scaled, tmp_path):
    with pytest.raises(kiln.KilnLoadError, match="no such library"):
        kiln.load(tmp_path / "libnothing.so")
    with pytest.raises(kiln.KilnLoadError, match="no graph named"):
        kiln.load(scaled.path, name="other")
    (tmp_path / "libbroken.so").write_text("not a library")
    with pytest.raises(kiln.KilnLoadError, match="cannot load"):
        kiln.load(tmp_path / "libbroken.so")


def test_graph_errors_from_kiln():
    bad = _graph("bad", [_var("x", "float64", [None], "x"), _var("y", "float64", [None])],
                 [{"op": "Elemwise", "props": {"scalar_op": "no_such_op"}, "inputs": ["x"], "outputs": ["y"]}],
                 ["x"], ["y"])
    with pytest.raises(kiln.KilnGraphError, match="no_such_op") as e:
        kiln.compile(bad)
    assert e.value.exit_code == 2


# --- threads ------------------------------------------------------------------------------------------------


def test_concurrent_calls_use_separate_contexts(scaled):
    errors, results = [], {}

    def work(k):
        try:
            x = np.full((50, 40), float(k))
            w = np.arange(40.0)
            for _ in range(50):
                z, total = scaled(x, w)
                assert total == (x * w).sum()
            results[k] = z
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for k, z in results.items():
        np.testing.assert_array_equal(z, np.full((50, 40), float(k)) * np.arange(40.0))
    assert len(scaled._states) >= 1


def test_num_threads(scaled):
    f = kiln.load(scaled.path, num_threads=3)
    assert f.num_threads == 3
    x, w = np.random.default_rng(0).normal(size=(500, 300)), np.ones(300)
    z, total = f(x, w)
    f.num_threads = 1
    z1, total1 = f(x, w)
    np.testing.assert_array_equal(z, z1)
    np.testing.assert_allclose(total, total1, rtol=1e-12)


def test_bind_into_reruns_on_the_same_buffers(scaled):
    x, w = np.ones((2, 3)), np.arange(3.0)
    z, total = np.empty((2, 3)), np.empty(())
    run = scaled.bind_into([z, total], x, w)
    np.testing.assert_array_equal(z, x * w)
    x[:] = 2.0  # new contents, same buffer
    run()
    np.testing.assert_array_equal(z, np.full((2, 3), 2.0) * w)
    assert total == (x * w).sum() == 12.0


def test_inputs_and_outputs_are_tensors(scaled):
    assert [s.kind for s in scaled.inputs + scaled.outputs] == ["tensor"] * 4


def test_deleter_runs_on_zero_length_outputs(scaled):
    z, total = scaled(np.ones((0, 3)), np.ones(3))
    assert z.shape == (0, 3) and total == 0.0


def test_ctypes_layout_matches_kiln_h():
    # kiln.h and dlpack.h on x86-64: DLTensor is 48 bytes, DLManagedTensor 64, kiln_graph_info
    # holds 8 scalars/pointers before its 7 function pointers and (ABI 2) the two kind arrays.
    assert ctypes.sizeof(_abi.DLTensor) == 48
    assert ctypes.sizeof(_abi.DLManagedTensor) == 64
    assert ctypes.sizeof(_abi.TensorInfo) == 24
    assert ctypes.sizeof(_abi.GraphInfo) == 4 + 4 + 8 * 3 + 4 + 4 + 8 * 2 + 8 * 7 + 8 * 2
    header = (Path(__file__).resolve().parents[2] / "runtime" / "include" / "kiln" / "kiln.h").read_text()
    assert f"#define KILN_ABI_VERSION {_abi.ABI_VERSION}\n" in header, "kiln.h's ABI version changed: update _abi.py"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _abi.dl_dtype(np.dtype(">f8")) is None
