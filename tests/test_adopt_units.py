"""adopt's decisions without a database: which tool built the graph, and which properties driftgraph owns."""

from __future__ import annotations

import pytest

from driftgraph.adopt.detect import choose
from driftgraph.adopt.map import check_vectors, owned_update
from driftgraph.errors import AdoptError

EMPTY = dict.fromkeys(
    ("documents", "chunks", "entities", "kg_builder", "from_chunk", "from_document", "part_of", "first_chunk",
     "has_entity", "next_chunk"), 0,
)  # fmt: skip
NGR = {**EMPTY, "documents": 1, "chunks": 3, "entities": 4, "kg_builder": 8, "from_chunk": 4, "from_document": 3}
LGB = {**EMPTY, "documents": 1, "chunks": 3, "entities": 4, "part_of": 3, "first_chunk": 1, "has_entity": 5}


def test_auto_picks_the_one_shape_found():
    assert choose(NGR, "auto", None) == "neo4j-graphrag"
    assert choose(LGB, "auto", None) == "llm-graph-builder"
    assert choose(LGB, "auto", "adopt:llm-graph-builder") == "llm-graph-builder"
    assert choose(NGR, "neo4j-graphrag", "adopt:neo4j-graphrag") == "neo4j-graphrag"


@pytest.mark.parametrize(
    ("counts", "wanted", "filled_by", "message"),
    [
        (EMPTY, "auto", None, "no neo4j-graphrag or LLM Graph Builder graph"),
        (LGB, "neo4j-graphrag", None, "no neo4j-graphrag graph"),
        (NGR, "llm-graph-builder", None, "no llm-graph-builder graph"),
        ({**NGR, "first_chunk": 2}, "auto", None, "choose one with --from"),
        ({**NGR, "chunks": 0}, "auto", None, "no Chunk nodes"),
        (LGB, "graphrag", None, "--from must be"),
        (LGB, "auto", "index", "driftgraph's own index"),
        (LGB, "auto", "import-graphrag", "driftgraph's own index"),
    ],
)
def test_refusals_name_the_reason(counts, wanted, filled_by, message):
    with pytest.raises(AdoptError, match=message):
        choose(counts, wanted, filled_by)


def test_driftgraph_owns_only_what_it_added_and_keeps_owning_it():
    node = {"keys": ["text", "position", "embedding"], "owned": None}
    props, owned = owned_update(node, {"position": 3, "n_tokens": 12, "human_readable_id": 0})
    assert props == {"n_tokens": 12, "human_readable_id": 0} and owned == ["human_readable_id", "n_tokens"]
    # the next run: the node now holds our properties too; ownership comes from the stored list
    again = {"keys": ["text", "position", "embedding", "n_tokens", "human_readable_id"], "owned": owned}
    props, owned2 = owned_update(again, {"position": 4, "n_tokens": 13, "human_readable_id": 1})
    assert props == {"n_tokens": 13, "human_readable_id": 1} and owned2 == owned
    # without a vector of its own, the node's `embedding` becomes driftgraph's
    _, owned3 = owned_update({"keys": ["text"], "owned": None}, {"n_tokens": 1})
    assert owned3 == ["embedding", "n_tokens"]


def test_the_other_tools_vectors_must_have_the_embedders_size():
    nodes = [{"dims": 384, "owned": None}, {"dims": None, "owned": None}, {"dims": 8, "owned": ["embedding"]}]
    assert check_vectors("chunk", "Chunk", nodes, 384, "neo4j-graphrag") == 1, "ours (owned) are not counted"
    with pytest.raises(AdoptError, match="384-d vectors written by neo4j-graphrag.*embedder gives 1536-d"):
        check_vectors("chunk", "Chunk", nodes, 1536, "neo4j-graphrag")
