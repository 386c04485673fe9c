import numpy as np
import pytest

from driftgraph.config import EmbeddingsConfig, LLMConfig
from driftgraph.llm.embedder import LOCAL_DIMENSIONS, make_embedder
from driftgraph.llm.ledger import Ledger


@pytest.fixture(scope="module")
def local():
    return make_embedder(EmbeddingsConfig(threads=1, batch_size=4), LLMConfig())


def test_local_vectors_are_normalised_and_semantic(local):
    texts = ["A cat sits on the mat.", "A kitten is lying on the rug.", "Quarterly corporate tax filing deadlines."]
    v = local.embed(texts)
    assert v.shape == (3, LOCAL_DIMENSIONS)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2


def test_local_vectors_do_not_depend_on_batching(local):
    texts = [f"sentence number {i} " * (i + 1) for i in range(9)]
    together = local.embed(texts)
    alone = np.vstack([local.embed([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-4)


def test_openai_embedder_against_fake_server(fake_llm):
    ledger = Ledger()
    cfg = EmbeddingsConfig(provider="openai", model="fake-embed", dimensions=384, batch_size=2)
    emb = make_embedder(cfg, LLMConfig(base_url=fake_llm.base_url, api_key="k"), ledger)
    v = emb.embed(["a", "b", "c"])
    assert v.shape == (3, 384)
    assert len([r for r in fake_llm.requests if r["_path"].endswith("/embeddings")]) == 2
    assert ledger.total.embedding_calls == 2


def test_openai_embedder_rejects_wrong_dimensions(fake_llm):
    from driftgraph.llm.embedder import EmbedderError

    fake_llm.embedding_dims = 8
    cfg = EmbeddingsConfig(provider="openai", model="fake-embed", dimensions=384)
    emb = make_embedder(cfg, LLMConfig(base_url=fake_llm.base_url, api_key="k"))
    with pytest.raises(EmbedderError, match="384"):
        emb.embed(["a"])
