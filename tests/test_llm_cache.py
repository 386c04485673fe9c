"""The on-disk LLM call cache: content-hash keys, atomic writes, corrupt entries are misses."""

from __future__ import annotations

import threading

from driftgraph.llm.cache import CallCache


def test_key_depends_on_every_param_and_not_on_order(tmp_path):
    cache = CallCache(tmp_path)
    a = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.0, "max_tokens": 5}
    b = dict(reversed(list(a.items())))
    assert cache.key(a) == cache.key(b)
    for change in ({"model": "n"}, {"temperature": 0.1}, {"max_tokens": 6}, {"messages": []}):
        assert cache.key({**a, **change}) != cache.key(a)
    assert CallCache(tmp_path, namespace="other").key(a) != cache.key(a)


def test_put_get_roundtrip_survives_a_new_instance(tmp_path):
    cache = CallCache(tmp_path)
    key = cache.key({"p": 1})
    assert cache.get(key) is None
    cache.put(key, {"text": "é", "prompt_tokens": 3, "completion_tokens": 1})
    again = CallCache(tmp_path)
    assert again.get(key) == {"text": "é", "prompt_tokens": 3, "completion_tokens": 1}
    assert (again.hits, cache.misses) == (1, 1)
    assert not list(tmp_path.rglob(".tmp-*")), "no temp files left behind"


def test_corrupt_entry_is_a_miss_and_is_overwritten(tmp_path):
    cache = CallCache(tmp_path)
    key = cache.key({"p": 2})
    cache.put(key, {"text": "ok"})
    path = next(tmp_path.rglob(f"{key}.json"))
    path.write_text('{"text": "trunc')  # what a non-atomic writer could leave after a crash
    assert cache.get(key) is None
    cache.put(key, {"text": "fixed"})
    assert cache.get(key) == {"text": "fixed"}


def test_concurrent_writers_of_one_key(tmp_path):
    cache = CallCache(tmp_path)
    key = cache.key({"p": 3})
    threads = [threading.Thread(target=cache.put, args=(key, {"n": i})) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cache.get(key)["n"] in range(16)
