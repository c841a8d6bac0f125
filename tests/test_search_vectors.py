"""The FAISS vector index: add/remove by id, filters, atomic persistence, exact -> IVF."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from semantic.vectors import VectorIndex


def _unit(n: int, dim: int, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_add_search_remove_by_chunk_id() -> None:
    vecs = _unit(5, 8)
    idx = VectorIndex(8, "m")
    idx.add([10, 11, 12, 13, 14], ["a", "b", "c", "d", "e"], vecs)
    assert idx.search(vecs[2], 1)[0][0] == 12
    assert idx.remove([12, 99]) == 1
    assert 12 not in idx and len(idx) == 4
    assert all(i != 12 for i, _ in idx.search(vecs[2], 5))


def test_re_adding_an_id_replaces_its_vector() -> None:
    vecs = _unit(2, 8)
    idx = VectorIndex(8, "m")
    idx.add([1], ["old"], vecs[:1])
    idx.add([1], ["new"], vecs[1:])
    assert len(idx) == 1 and idx.items() == {1: "new"}
    assert idx.search(vecs[1], 1)[0][1] > 0.99


def test_allowed_ids_restrict_the_search() -> None:
    vecs = _unit(6, 8)
    idx = VectorIndex(8, "m")
    idx.add(list(range(6)), list("abcdef"), vecs)
    got = idx.search(vecs[0], 6, allowed=[3, 4])
    assert {i for i, _ in got} == {3, 4}
    assert idx.search(vecs[0], 6, allowed=[]) == []


def test_save_is_atomic_and_load_round_trips(tmp_path: Path) -> None:
    vecs = _unit(4, 8)
    idx = VectorIndex(8, "model-x")
    idx.add([1, 2, 3, 4], ["h1", "h2", "h3", "h4"], vecs)
    path = tmp_path / "v.npz"
    idx.save(path)
    assert [p.name for p in tmp_path.iterdir()] == ["v.npz"]  # no temporary file left behind
    back = VectorIndex.load(path)
    assert back is not None and back.model_id == "model-x" and back.items() == idx.items()
    assert back.search(vecs[3], 1)[0][0] == 4
    path.write_bytes(b"garbage")
    assert VectorIndex.load(path) is None
    assert VectorIndex.load(tmp_path / "missing.npz") is None


def test_switches_to_ivf_above_threshold_and_keeps_ids(tmp_path: Path) -> None:
    n = 3000
    vecs = _unit(n, 16, seed=1)
    idx = VectorIndex(16, "m", approx_threshold=1000)
    idx.add(list(range(100, 100 + n)), [str(i) for i in range(n)], vecs)
    assert idx.maybe_go_approximate() and idx.approximate
    hits = [idx.search(vecs[i], 1)[0][0] for i in range(0, n, 100)]
    assert sum(h == 100 + i for h, i in zip(hits, range(0, n, 100), strict=True)) >= 0.9 * len(hits)
    assert idx.remove([100]) == 1 and 100 not in idx
    assert all(i != 100 for i, _ in idx.search(vecs[0], 10))
    idx.save(tmp_path / "ivf.npz")
    back = VectorIndex.load(tmp_path / "ivf.npz", approx_threshold=1000)
    assert back is not None and back.approximate and len(back) == n - 1
    assert back.search(vecs[5], 1, allowed=[105])[0][0] == 105


def test_stored_vectors_are_read_back_exact_and_ivf_after_adds_and_removes() -> None:
    """``vectors_of`` (what rebuilding an index reads) on both index forms: the
    vectors as added, in the order asked, ids not held skipped."""
    n = 3000
    vecs = _unit(n, 16, seed=2)
    exact = VectorIndex(16, "m")
    exact.add([7, 9, 11], ["a", "b", "c"], vecs[:3])
    assert np.allclose(exact.vectors_of([11, 5, 7]), vecs[[2, 0]])
    assert exact.vectors_of([5]).shape == (0, 16)
    idx = VectorIndex(16, "m", approx_threshold=1000)
    idx.add(list(range(100, 100 + n)), [str(i) for i in range(n)], vecs)
    assert idx.maybe_go_approximate() and idx.approximate
    assert np.allclose(idx.vectors_of([105, 100]), vecs[[5, 0]])
    idx.remove([105])
    idx.add([99_999], ["new"], vecs[:1])
    assert np.allclose(idx.vectors_of([105, 99_999, 101]), vecs[[0, 1]])
    ids, back = idx.reconstruct_all()  # an IVF index's ids are not sequential
    assert len(ids) == n and np.allclose(back[list(ids).index(101)], vecs[1])
