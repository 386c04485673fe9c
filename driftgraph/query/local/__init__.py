"""local search."""
