"""global_ search."""
