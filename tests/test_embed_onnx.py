"""The default model on ONNX Runtime int8 (semantic.onnx_int8.OnnxInt8Embedder), against the real
torch path: the export is made here from the installed model, its vectors agree with torch's
on real code chunks, every call runs on a bounded thread pool, and nav falls back to torch,
with a log line, when onnxruntime is missing or the export fails."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import semantic.embed as embed
import semantic.onnx_int8 as onnx_int8
import semantic.runtime_speed as runtime_speed
from navigator.indexer import index_root
from navigator.search import SemanticSearch
from semantic.embed import (
    EmbedError,
    SentenceTransformerEmbedder,
    bounded_threads,
    embedding_text,
    load_embedder,
)
from semantic.onnx_int8 import OnnxInt8Embedder, prepare_onnx_int8
from storage.db import Store

pytestmark = pytest.mark.slow

WORKSPACES = Path(__file__).parent / "workspaces"


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("nav-cache")


@pytest.fixture(scope="module")
def folder(cache: Path) -> Path:
    made = prepare_onnx_int8(cache_dir=cache)  # exported here, from the installed model
    assert made is not None
    return made


@pytest.fixture(scope="module")
def chunks(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """What search embeds for the real chunks of two committed workspaces."""
    texts: list[str] = []
    for lang in ("python", "go"):
        store = Store(tmp_path_factory.mktemp(lang) / "index.db")
        index_root(WORKSPACES / lang, store)
        ids = [int(r[0]) for r in store.conn.execute("SELECT id FROM chunks ORDER BY id")]
        rows = store.chunks_by_ids(ids)
        texts += [embedding_text(r.path, r.symbol, r.signature, r.text) for r in rows.values()]
        store.close()
    assert len(texts) >= 8
    return texts


def test_int8_vectors_agree_with_torch_on_real_chunks(folder: Path, chunks: list[str]) -> None:
    onnx = OnnxInt8Embedder(folder)
    torch_path = SentenceTransformerEmbedder()
    got, ref = onnx.embed_documents(chunks), torch_path.embed_documents(chunks)
    assert got.shape == ref.shape == (len(chunks), 384) and got.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cos = (got * ref).sum(axis=1)
    assert cos.min() >= onnx_int8.ONNX_MIN_COSINE and cos.mean() >= 0.99, cos
    q_onnx, q_torch = (
        onnx.embed_query("where is an order's total computed"),
        torch_path.embed_query("where is an order's total computed"),
    )
    assert float(q_onnx @ q_torch) >= onnx_int8.ONNX_MIN_COSINE
    # Close, not equal: int8 vectors are not interchangeable with torch's, so they are kept apart.
    assert onnx.model_id == torch_path.model_id + ":ort-int8"
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["min_probe_cosine"] >= onnx_int8.ONNX_MIN_COSINE


def test_a_chunks_vector_does_not_depend_on_the_chunks_embedded_beside_it(
    folder: Path, chunks: list[str]
) -> None:
    """Dynamic int8 scales a call's activations together: one text per call keeps each vector a
    function of its text alone (the same in any sync, on any machine, as a query's)."""
    onnx = OnnxInt8Embedder(folder)
    alone = onnx.embed_documents(chunks[:1])
    beside = onnx.embed_documents([chunks[0], *chunks[1:8], "x " * 400])
    np.testing.assert_allclose(alone[0], beside[0], atol=1e-6)


def test_search_stores_int8_vectors_under_their_own_model_id(folder: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "index.db")
    index_root(WORKSPACES / "python", store)
    search = SemanticSearch(store, embedder=OnnxInt8Embedder(folder), vectors_dir=tmp_path / "vec")
    report = search.sync()
    assert report.embedded > 0 and report.vectors == report.chunks
    models = {r[0] for r in store.conn.execute("SELECT DISTINCT model FROM embeddings")}
    assert models == {OnnxInt8Embedder(folder).model_id}
    resp = search.search("compute the total price of an order", k=5, legs=("vector",))
    assert resp.items and "vector" in resp.items[0].ranks
    store.close()


class _Concurrency:
    """A session stand-in that counts how many run() calls overlap (then calls the real one)."""

    def __init__(self, sess: Any) -> None:
        self.sess = sess
        self.now = 0
        self.most = 0
        self.lock = threading.Lock()

    def run(self, *args: Any) -> Any:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        try:
            return self.sess.run(*args)
        finally:
            with self.lock:
                self.now -= 1


def test_every_call_runs_on_a_bounded_number_of_threads(folder: Path, chunks: list[str]) -> None:
    onnx = OnnxInt8Embedder(folder, query_threads=1)
    runner = onnx._load()
    assert runner.sessions[1].get_session_options().intra_op_num_threads == 1
    spy = _Concurrency(runner.sessions[1])
    runner._sessions[1] = spy
    onnx.embed_query("retry a failed download")  # on query_threads, whatever the process's limit
    assert spy.most == 1
    with bounded_threads(1):
        one = onnx.embed_documents(chunks)
    assert spy.most == 1
    with bounded_threads(2):
        two = onnx.embed_documents(chunks)
    assert 1 <= spy.most <= 2 and set(runner.sessions) == {1}  # texts side by side, one thread each
    np.testing.assert_array_equal(one, two)  # the same vectors, however many threads

    batched = OnnxInt8Embedder(folder, batch_size=8)  # the batch path: one session per bound
    with bounded_threads(2):
        batched.embed_documents(chunks[:8])
    for threads, sess in batched._load().sessions.items():
        assert sess.get_session_options().intra_op_num_threads == threads
    assert set(batched._load().sessions) == {1, 2}


def test_the_process_thread_limit_bounds_onnx_too(folder: Path, chunks: list[str]) -> None:
    """What the daemon (1 thread for background embedding) and `nav publish --threads` set."""
    onnx = OnnxInt8Embedder(folder)
    try:
        embed.set_thread_limit(3)
        runner = onnx._load()
        spy = _Concurrency(runner.sessions[1])
        runner._sessions[1] = spy
        onnx.embed_documents(chunks)
        assert embed.thread_limit() == 3 and spy.most <= 3
    finally:
        embed._process_limit[0] = 0


def test_load_embedder_picks_the_measured_runtime_by_default_and_either_on_request(
    cache: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NAV_CACHE_DIR", str(cache))
    monkeypatch.delenv(embed.RUNTIME_ENV, raising=False)
    measured = onnx_int8.torch_measured_faster(folder)
    assert isinstance(load_embedder(), SentenceTransformerEmbedder if measured else OnnxInt8Embedder)
    monkeypatch.setenv(embed.RUNTIME_ENV, "onnx-int8")
    assert isinstance(load_embedder(), OnnxInt8Embedder)
    monkeypatch.setenv(embed.RUNTIME_ENV, "torch")
    assert isinstance(load_embedder(), SentenceTransformerEmbedder)
    monkeypatch.setenv(embed.RUNTIME_ENV, "tensorrt")
    with pytest.raises(EmbedError, match="'tensorrt'.*onnx-int8.*torch"):
        load_embedder()


def test_falls_back_to_torch_when_onnxruntime_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "onnxruntime" else real(name, *a)
    )
    monkeypatch.setenv("NAV_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(embed.RUNTIME_ENV, raising=False)
    with caplog.at_level(logging.INFO, logger="nav.embed"):
        emb = load_embedder()
    assert isinstance(emb, SentenceTransformerEmbedder)
    assert "onnxruntime is not installed" in caplog.text
    assert emb.embed_query("x").shape == (384,)


def test_choosing_the_runtime_exports_nothing_and_first_use_exports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    monkeypatch.setenv("NAV_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(embed.RUNTIME_ENV, raising=False)
    emb = load_embedder()
    assert isinstance(emb, OnnxInt8Embedder) and emb.model_id.endswith(":ort-int8")
    assert not list(tmp_path.rglob("*.onnx"))  # a lexical search reads the id: no export for that
    seen: list[int] = []
    real_export = onnx_int8._export_int8_unbounded

    def spy(model_path: Path, out_dir: Path, max_seq_length: int) -> float:
        seen.append(torch.get_num_threads())
        return real_export(model_path, out_dir, max_seq_length)

    monkeypatch.setattr(onnx_int8, "_export_int8_unbounded", spy)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        embed.set_thread_limit(1)  # as the daemon does: the export stays on one thread too
        assert emb.embed_query("retry a failed download").shape == (384,)
    finally:
        embed._process_limit[0] = 0
        torch.set_num_threads(before)
    assert seen == [1]
    assert len(list(tmp_path.rglob("model-int8.onnx"))) == 1 and list(tmp_path.rglob("meta.json"))


def test_a_failed_export_is_a_clear_error_then_torch_from_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    calls: list[Path] = []

    def broken(model_path: Path, out_dir: Path, max_seq_length: int) -> float:
        calls.append(out_dir)
        raise RuntimeError("Unsupported ONNX opset for aten::scaled_dot_product_attention")

    monkeypatch.setattr(onnx_int8, "_export_int8", broken)
    monkeypatch.setenv("NAV_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(embed.RUNTIME_ENV, raising=False)
    first = load_embedder()
    assert isinstance(first, OnnxInt8Embedder)
    with caplog.at_level(logging.WARNING, logger="nav.embed"):
        # Its id is out already (vectors would be stored under it): no silent switch to torch.
        with pytest.raises(
            EmbedError, match="cannot export .* next start embeds with torch .*NAV_EMBED_RUNTIME=torch"
        ):
            first.embed_documents(["def f(): pass"])
        with pytest.raises(EmbedError):  # again: an error at once, not another export
            first.embed_query("def f(): pass")
        again, later = load_embedder(), load_embedder()
    assert isinstance(again, SentenceTransformerEmbedder) and isinstance(later, SentenceTransformerEmbedder)
    assert len(calls) == 1  # recorded: tried again only when torch/transformers/onnx/onnxruntime change
    assert "cannot export the embedding model to ONNX int8" in caplog.text
    assert "Unsupported ONNX opset" in caplog.text
    assert "failed before" in caplog.text
    failed = json.loads((calls[0] / "failed.json").read_text())
    assert failed["versions"] == onnx_int8._export_versions()
    assert again.embed_query("x").shape == (384,)


def test_an_unwritable_cache_means_torch_not_a_failure_at_first_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("NAV_CACHE_DIR", str(tmp_path / "a-file" / "nav"))  # nothing can be made there
    monkeypatch.delenv(embed.RUNTIME_ENV, raising=False)
    with caplog.at_level(logging.WARNING, logger="nav.embed"):
        emb = load_embedder()
    assert isinstance(emb, SentenceTransformerEmbedder)
    assert "cannot write the ONNX export under" in caplog.text and "NAV_CACHE_DIR" in caplog.text


def test_a_broken_export_file_is_a_clear_error_and_is_made_again(folder: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / folder.name
    shutil.copytree(folder, copy)
    (copy / "model-int8.onnx").write_bytes(b"not a model")
    onnx = OnnxInt8Embedder(copy)
    with pytest.raises(EmbedError, match="cannot load the ONNX embedding model .*NAV_EMBED_RUNTIME=torch"):
        onnx.embed_query("x")
    assert not (copy / "meta.json").exists()  # the next start exports it again


def _with_speed(folder: Path, cache: Path, speed: dict[str, dict[str, float]]) -> Path:
    """A copy of the export in ``cache`` (where load_embedder looks) with ``speed`` as its record."""
    import shutil

    copy = cache / "onnx" / folder.name
    shutil.copytree(folder, copy)
    meta = json.loads((copy / "meta.json").read_text())
    meta["speed"] = speed
    (copy / "meta.json").write_text(json.dumps(meta))
    return copy


def test_the_export_times_both_runtimes_on_this_cpu(folder: Path) -> None:
    speed = onnx_int8.measured_speed(folder)
    assert speed is not None and speed["torch"] > 0 and speed["onnx-int8"] > 0
    meta = json.loads((folder / "meta.json").read_text())
    assert list(meta["speed"]) == [runtime_speed.cpu_key()]
    chosen = "torch" if onnx_int8.torch_measured_faster(folder) else "onnx-int8"
    assert onnx_int8.runtime_choice(cache_dir=folder.parent.parent).startswith(chosen + " (")


def test_torch_is_chosen_where_this_cpu_timed_it_faster(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    here = runtime_speed.cpu_key()
    _with_speed(folder, tmp_path, {here: {"torch": 90.0, "onnx-int8": 30.0}})
    monkeypatch.setenv("NAV_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(embed.RUNTIME_ENV, raising=False)
    with caplog.at_level(logging.INFO, logger="nav.embed"):
        emb = load_embedder()
    assert isinstance(emb, SentenceTransformerEmbedder)
    assert "90.0" in caplog.text and "30.0" in caplog.text and "NAV_EMBED_RUNTIME=onnx-int8" in caplog.text
    assert onnx_int8.runtime_choice().startswith("torch (")
    monkeypatch.setenv(embed.RUNTIME_ENV, "onnx-int8")  # asked for: int8 whatever was measured
    assert isinstance(load_embedder(), OnnxInt8Embedder)


def test_int8_stays_when_it_measured_faster_level_or_on_another_cpu_only(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = runtime_speed.cpu_key()
    monkeypatch.setenv("NAV_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(embed.RUNTIME_ENV, raising=False)
    for name, speed in (
        ("faster", {here: {"torch": 30.0, "onnx-int8": 60.0}}),
        ("level", {here: {"torch": 31.0, "onnx-int8": 30.0}}),  # inside the margin: no torch for noise
        ("other", {"arm64|another CPU|0": {"torch": 90.0, "onnx-int8": 30.0}}),
        ("broken", {here: {"torch": "fast"}}),
    ):
        copy = _with_speed(folder, tmp_path / name, speed)
        monkeypatch.setenv("NAV_CACHE_DIR", str(tmp_path / name))
        assert isinstance(load_embedder(), OnnxInt8Embedder), name
        assert onnx_int8.onnx_int8_folder() == copy


def test_an_export_not_timed_on_this_cpu_is_timed_by_prepare_keeping_the_other_cpus(
    folder: Path, tmp_path: Path
) -> None:
    other = {"arm64|another CPU|0": {"torch": 90.0, "onnx-int8": 30.0}}
    copy = _with_speed(folder, tmp_path, dict(other))
    assert onnx_int8.measured_speed(copy) is None
    assert onnx_int8.runtime_choice(cache_dir=tmp_path) == "onnx-int8 (not timed on this CPU)"
    assert prepare_onnx_int8(cache_dir=tmp_path) == copy
    speed = json.loads((copy / "meta.json").read_text())["speed"]
    assert speed["arm64|another CPU|0"] == other["arm64|another CPU|0"]
    assert speed[runtime_speed.cpu_key()]["onnx-int8"] > 0 and speed[runtime_speed.cpu_key()]["torch"] > 0


def test_setup_scripts_python_lines_import_what_exists() -> None:
    """scripts/setup.sh runs one-line Python snippets; a name moved between modules made its
    export step fail quietly (it printed "no ONNX export" and went on)."""
    import importlib
    import re

    script = (Path(__file__).parents[1] / "scripts" / "setup.sh").read_text()
    found = re.findall(r"from ([\w.]+) import ([\w, ]+?);", script)
    assert any(mod == "semantic.onnx_int8" for mod, _ in found), found
    for mod, names in found:
        module = importlib.import_module(mod)
        for name in names.split(","):
            assert hasattr(module, name.strip()), (mod, name)


def test_time_runs_counts_texts_per_second_by_the_median_round() -> None:
    import time

    calls: list[str] = []

    def slow() -> None:
        calls.append("slow")
        time.sleep(0.02)

    rates = runtime_speed.time_runs({"slow": slow, "fast": lambda: calls.append("fast")}, 10)
    assert calls.count("slow") == calls.count("fast") == runtime_speed.SPEED_ROUNDS + 1
    assert calls[:2] == ["slow", "fast"] and rates["fast"] > rates["slow"] > 0
    assert rates["slow"] <= 10 / 0.02
    assert runtime_speed.torch_faster({"torch": 2.0, "onnx-int8": 1.0})
    assert not runtime_speed.torch_faster({"torch": 1.1, "onnx-int8": 1.0})
    assert len(runtime_speed.speed_texts()) == runtime_speed.SPEED_TEXTS


def test_timing_that_fails_at_export_leaves_a_sound_export_that_stays_int8(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(model_path: Path, onnx_file: Path, max_seq_length: int) -> dict[str, float]:
        raise MemoryError("cannot allocate the torch model")

    monkeypatch.setattr(onnx_int8, "measure_runtimes", broken)
    monkeypatch.setenv("NAV_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(embed.RUNTIME_ENV, raising=False)
    with caplog.at_level(logging.WARNING, logger="nav.embed"):
        folder = prepare_onnx_int8(cache_dir=tmp_path)  # export, then again at prepare: both fail
    assert folder is not None and (folder / "model-int8.onnx").exists()
    assert "could not time the runtimes" in caplog.text and "cannot allocate" in caplog.text
    assert onnx_int8.measured_speed(folder) is None
    assert onnx_int8.runtime_choice(cache_dir=tmp_path) == "onnx-int8 (not timed on this CPU)"
    emb = load_embedder()
    assert isinstance(emb, OnnxInt8Embedder) and emb.embed_query("x").shape == (384,)


def test_a_full_disk_while_recording_the_timing_is_logged_and_the_export_still_used(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import errno
    import os

    copy = _with_speed(folder, tmp_path, {})
    before = (copy / "meta.json").read_text()

    def full(src: object, dst: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)  # the meta file's atomic rewrite meets a full disk
    with caplog.at_level(logging.WARNING, logger="nav.embed"):
        assert prepare_onnx_int8(cache_dir=tmp_path) == copy
    monkeypatch.undo()
    assert "could not time the runtimes" in caplog.text and "No space left" in caplog.text
    assert (copy / "meta.json").read_text() == before  # never half-written
    assert sorted(f.name for f in copy.iterdir()) == sorted(f.name for f in folder.iterdir())  # nothing left
    assert onnx_int8.torch_measured_faster(copy) is None  # so the choice stays int8
