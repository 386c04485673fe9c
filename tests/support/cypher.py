"""Ad-hoc Cypher for assertions: tests check the database with their own queries, not the product's files."""

from __future__ import annotations

from typing import Any


def q(store: Any, text: str, **params: Any) -> list[dict]:
    """Run ``text`` on the store's database and return rows as dicts (test-only; product code uses cypher/)."""
    with store._driver.session(database=store.cfg.database) as session:
        return [r.data() for r in session.run(text, params)]
