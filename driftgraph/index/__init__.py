"""Building the index from documents: load, chunk, extract, merge, communities, reports, embeddings."""
