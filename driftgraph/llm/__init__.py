"""Chat and embedding clients, tokenizer, cost ledger."""
