"""basic search."""
